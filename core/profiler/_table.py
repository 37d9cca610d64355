"""``EventList.table``: PyTorch's profiler table (same columns, order, units and footer), with
two columns PyTorch has not: ``Backend`` and ``Fallback copied`` (bytes moved between a
device and the CPU because the backend lacks a kernel)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["format_memory", "format_table", "format_time"]


def format_time(us: float) -> str:
    """Microseconds as PyTorch prints them: ``1.500us``, ``1.234ms``, ``2.500s``."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(n: int) -> str:
    """Bytes as PyTorch prints them: ``4 B``, ``1.50 KB``, ``3.00 MB``, ``2.00 GB``."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole else "0.00%"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def format_table(
    events: Any,
    *,
    sort_by: str | None,
    row_limit: int,
    widths: tuple[int, int, int],
    header: str | None,
    top_level_events_only: bool,
) -> str:
    name_w, shapes_w, src_w = widths
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "top_level", getattr(e, "cpu_parent", None) is None)]
    if row_limit > 0:
        rows = rows[:row_limit]
    self_total = sum(e.self_cpu_time_total for e in events)
    device = events.device_label
    device_total = sum(e.self_device_time_total for e in events)

    cols: list[tuple[str, Callable[[Any], str], int]] = [
        ("Name", lambda e: _clip(e.key, name_w), 0),
        ("Backend", lambda e: e.backend, 8),
        ("Self CPU %", lambda e: _pct(e.self_cpu_time_total, self_total), 12),
        ("Self CPU", lambda e: format_time(e.self_cpu_time_total), 12),
        ("CPU total %", lambda e: _pct(e.cpu_time_total, self_total), 12),
        ("CPU total", lambda e: format_time(e.cpu_time_total), 12),
        ("CPU time avg", lambda e: format_time(e.cpu_time_total / max(getattr(e, "count", 1), 1)), 12),
    ]
    if device:
        cols += [
            (f"Self {device}", lambda e: format_time(e.self_device_time_total), 12),
            (f"Self {device} %", lambda e: _pct(e.self_device_time_total, device_total), 12),
            (f"{device} total", lambda e: format_time(e.device_time_total), 12),
            (
                f"{device} time avg",
                lambda e: format_time(e.device_time_total / max(getattr(e, "count", 1), 1)),
                12,
            ),
        ]
    if events.profile_memory:
        cols += [
            ("CPU Mem", lambda e: format_memory(e.cpu_memory_usage), 12),
            ("Self CPU Mem", lambda e: format_memory(e.self_cpu_memory_usage), 12),
        ]
    cols += [
        ("Fallback copied", lambda e: format_memory(e.fallback_bytes), 15),
        ("# of Calls", lambda e: str(getattr(e, "count", 1)), 12),
    ]
    if getattr(events, "_with_shapes", False):
        cols.append(("Input Shapes", lambda e: _clip(str(e.input_shapes), shapes_w), 0))
    stack_n = getattr(events, "_stack_n", 0)
    if stack_n:
        cols.append(("Source Location", lambda e: _clip(" | ".join(e.stack[:stack_n]), src_w), 0))

    cells = [[fmt(e) for _, fmt, _ in cols] for e in rows]
    sizes = [
        max([w, len(title)] + [len(r[i]) for r in cells]) + (4 if w == 0 else 0)
        for i, (title, _, w) in enumerate(cols)
    ]
    rule = "".join("-" * s + "  " for s in sizes)
    lines = []
    if header is not None:
        lines += ["=" * len(rule), header]
    lines += [rule, "".join(t.rjust(s) + "  " for (t, _, _), s in zip(cols, sizes)), rule]
    lines += ["".join(c.rjust(s) + "  " for c, s in zip(r, sizes)) for r in cells]
    lines += [rule, f"Self CPU time total: {format_time(self_total)}"]
    if device:
        lines.append(f"Self {device} time total: {format_time(device_total)}")
    return "\n".join(lines) + "\n"
