"""Every group of work the worker runs: one per op (its case records) and the semantic
check groups, each a list of (case id, thunk) built without touching a kernel."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from typing import Any

from . import checks, checks_contiguous, checks_errors, checks_grad, checks_out
from .checks import CheckFailed, Ctx
from .harness import op_cases

__all__ = ["CHECK_GROUPS", "check_ids", "group_cases"]

CHECK_GROUPS: dict[str, Callable[[Ctx], list[checks.Check]]] = {
    **checks.GROUPS,
    **checks_errors.GROUPS,
    **checks_out.GROUPS,
    **checks_grad.GROUPS,
    **checks_contiguous.GROUPS,
}


def check_ids(ctx: Ctx, group: str) -> list[str]:
    """The case ids of a check group (for pytest parametrization in the main process)."""
    return [cid for cid, _ in CHECK_GROUPS[group](ctx)]


def _verdict(thunk: Callable[[], None]) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        try:
            thunk()
        except CheckFailed as e:
            return {"status": "fail", "message": str(e)}
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-3))
            return {"status": "error", "message": f"raised {type(e).__name__}: {e}", "traceback": tb}
        return {"status": "ok", "message": ""}

    return run


def group_cases(ctx: Ctx, kind: str, group: str) -> Iterator[tuple[str, Callable[[], dict[str, Any]]]]:
    """(case id, thunk) pairs of an op group (``kind='op'``) or a check group."""
    if kind == "op":
        yield from op_cases(ctx.lb, group, ctx.dtypes, ctx.index)
        return
    for cid, thunk in CHECK_GROUPS[group](ctx):
        yield cid, _verdict(thunk)
