"""A repro snippet a person can paste into Python for one failing case.

It builds the inputs with NumPy (values written out), lays them out on the device with
the same kernels the harness used, runs ``ember.backends.get(NAME).k[OP](...)`` and
compares with the suite's float64 reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .catalog import CASES
from .dtypes import name_of
from .harness import samples_for
from .records import INDEX, D, Sample, T

if TYPE_CHECKING:
    from .state import State

__all__ = ["repro_snippet"]


def _literal(v: np.ndarray) -> str:
    data = v.astype(np.complex128 if v.dtype.kind == "c" else np.float64 if v.dtype.kind in "fV" else v.dtype)
    return (
        f'np.array({data.reshape(-1).tolist()!r}).astype(np_dtype("{name_of(v.dtype)}")).reshape({v.shape})'
    )


_LITERAL_MAX = 256


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.leaf = 0

    def tensor(self, t: T) -> str:
        """Emit the lines that build ``t`` on the device; return the device variable name."""
        i = self.n
        self.n += 1
        v = t.value
        if v.size > _LITERAL_MAX:  # too long to write out: taken from the regenerated sample
            self.lines.append(f"x{i} = LEAVES[{self.leaf}].value  # logical values, shape {v.shape}")
        else:
            self.lines.append(f"x{i} = {_literal(t.value)}  # logical values")
        self.leaf += 1
        if t.layout == "expand" and t.source is not None:
            self.lines.append(f"d{i} = lb.k['expand'](be.from_numpy({_literal(t.source)}, INDEX), {v.shape})")
        elif t.layout == "permute" and v.ndim >= 2:
            perm = tuple(reversed(range(v.ndim)))
            self.lines.append(
                f"d{i} = lb.k['permute'](be.from_numpy(np.ascontiguousarray(x{i}.transpose({perm})), "
                f"INDEX), {perm})"
            )
        elif t.layout == "step" and v.ndim >= 1:
            key = tuple(slice(0, s, 1) for s in v.shape[:-1]) + (slice(1, 2 * v.shape[-1] + 1, 2),)
            self.lines.append(
                f"w{i} = np.zeros({v.shape[:-1] + (2 * v.shape[-1] + 1,)}, x{i}.dtype); w{i}[..., 1::2] = x{i}"
            )
            self.lines.append(f"d{i} = lb.k['slice'](be.from_numpy(w{i}, INDEX), {key!r})")
        else:
            self.lines.append(f"d{i} = be.from_numpy(x{i}.copy(), INDEX)")
        return f"d{i}"

    def arg(self, a: Any) -> str:
        if isinstance(a, T):
            return self.tensor(a)
        if isinstance(a, D):
            return f'eb.DTYPES_BY_NAME["{a.name}"]'
        if a is INDEX:
            return "INDEX"
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if isinstance(a, tuple):
            inner = [self.arg(x) for x in a]
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        return repr(a)


def _find(st: State, op: str, dtype: str, label: str) -> Sample | None:
    declared = {d.name for d in st.lb.backend.dtypes}
    for s in samples_for(CASES[op], dtype, declared):
        if s.label == label:
            return s
    return None


def repro_snippet(st: State, op: str, dtype: str, label: str) -> str:
    """Python source reproducing case ``label`` of (op, dtype) on the backend under test."""
    sample = _find(st, op, dtype, label)
    if sample is None:
        return f"# no repro: case {label!r} of {op}/{dtype} not found"
    w = _Writer()
    args = [w.arg(a) for a in sample.args]
    head = [
        "import numpy as np",
        "import ember.backends as eb",
        "from ember_conformance.catalog import CASES",
        "from ember_conformance.dtypes import np_dtype",
        "from ember_conformance.harness import reference_of, samples_for",
    ]
    if st.plugin:
        head.append(
            f"from ember_conformance.loading import load_plugin_object; "
            f"eb.register({st.name!r}, load_plugin_object({st.plugin!r}))"
        )
    head += [f"lb = eb.get({st.name!r}); be = lb.backend; INDEX = {st.index}", "nan, inf = np.nan, np.inf"]
    head += [
        (
            f"sample = [s for s in samples_for(CASES[{op!r}], {dtype!r}, {{d.name for d in be.dtypes}}) "
            f"if s.label == {label!r}][0]"
        ),
        (
            "def leaves(a): return [y for x in a for y in leaves(x)] if isinstance(a, (list, tuple)) else "
            "[a] if hasattr(a, 'layout') else []"
        ),
        "LEAVES = leaves(sample.args)",
    ]
    call = f"lb.k[{op!r}]({', '.join(args)})"
    if CASES[op].call is not None:
        call = f"CASES[{op!r}].call(lb.k[{op!r}], {', '.join(args)})"
    tail = [
        f"out = {call}",
        "got = [be.to_numpy(o) for o in out] if isinstance(out, tuple) else be.to_numpy(out)",
        f"want = reference_of(CASES[{op!r}], sample)  # float64 NumPy reference",
        "print('got ', got)",
        "print('want', want)",
    ]
    return "\n".join(head + w.lines + tail)
