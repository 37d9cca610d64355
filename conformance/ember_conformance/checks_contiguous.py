"""Frontend ops on non-contiguous tensors (transposed, step-sliced, expanded, permuted).

Every backend: the values must equal the same expression on ``cpu``. A backend that declares
``contiguous_only``: while the op runs, its kernel table is spied on (entries wrapped, restored
after), and any kernel but the view kernels and ``assign`` (which legitimately alias or write
strided memory) that receives a non-contiguous array fails the check, naming the kernel: the
frontend promised to copy its inputs first, and such a kernel would read the wrong elements.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from ember.backends import ALL_OPS, LoadedBackend

from .checks import Check, CheckFailed, Ctx, _bind, _expect, _first

__all__ = ["GROUPS", "spy_strided_inputs"]


def _exempt(op: str) -> bool:
    return ALL_OPS[op].kind == "view" or op == "assign"


def _is_dense(lb: LoadedBackend, a: Any) -> bool:
    """C-contiguous by the backend's own ``layout`` (strides of size-1 dims do not count)."""
    shape = getattr(a, "shape", None)
    if shape is None:
        shape = lb.backend.to_numpy(a).shape
    strides, _ = lb.backend.layout(a)
    want = 1
    for size, stride in zip(reversed(tuple(shape)), reversed(tuple(strides))):
        if size == 0:
            return True
        if size != 1 and stride != want:
            return False
        want *= int(size)
    return True


def _strided_args(lb: LoadedBackend, args: tuple[Any, ...], kw: dict[str, Any]) -> list[str]:
    """Positions (or keyword names) of non-contiguous arrays, looking inside lists and tuples."""
    kind = lb.backend.array_type

    def strided(a: Any) -> bool:
        if isinstance(a, kind):
            return not _is_dense(lb, a)
        return isinstance(a, (list, tuple)) and any(strided(x) for x in a)

    return [str(i) for i, a in enumerate(args) if strided(a)] + [k for k, a in kw.items() if strided(a)]


@contextmanager
def spy_strided_inputs(lb: LoadedBackend) -> Iterator[list[str]]:
    """Wrap the backend's own kernels (``lb.native`` and its deterministic variants, under
    whatever the frontend puts in front of them, e.g. its contiguous-copy adapter) and
    re-resolve ``lb.k``; yields a list collecting ``"op (argument i)"`` for each call that got
    a non-contiguous array. Restores both tables and re-resolves on exit."""
    seen: list[str] = []
    tables = [t for t in (lb.native, getattr(lb, "deterministic", None)) if isinstance(t, dict)]
    saved = [dict(t) for t in tables]

    def spied(op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # keeps the writes_out mark
        def kernel(*args: Any, **kw: Any) -> Any:
            bad = _strided_args(lb, args, kw)
            if bad:
                seen.append(f"{op} (argument {bad[0]})")
            return fn(*args, **kw)

        return kernel

    for table in tables:
        for op, fn in list(table.items()):
            if not _exempt(op):
                table[op] = spied(op, fn)
    lb.resolve()
    try:
        yield seen
    finally:
        for table, old in zip(tables, saved):
            table.clear()
            table.update(old)
        lb.resolve()


def _inputs(e: Any, dev: str, dtype: Any) -> dict[str, Any]:
    """Non-contiguous operands built with the frontend's own view ops on ``dev``."""
    rng = np.random.default_rng(7)

    def t(*shape: int) -> Any:
        return e.tensor(rng.uniform(-2, 2, shape), dtype=dtype, device=dev)

    return {
        "transposed": t(4, 3).t(),  # (3, 4)
        "step": t(3, 8)[:, ::2],  # (3, 4), and a storage offset of 0 but stride 2
        "expanded": t(1, 4).expand(3, 4),
        "dense": t(3, 4),
        "dense_t": t(4, 5).t(),  # (5, 4)
        "nhwc": t(2, 6, 6, 3).permute(0, 3, 1, 2),  # (2, 3, 6, 6), channels last
        "weight": t(4, 3, 3, 3),
    }


# case -> frontend expression over the operands of ``_inputs``
_CASES: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "add-transposed-step": lambda e, x: x["transposed"] + x["step"],
    "mul-expanded": lambda e, x: x["expanded"] * x["dense"],
    "exp-step": lambda e, x: x["step"].exp(),
    "where-transposed": lambda e, x: e.where(x["transposed"] > 0, x["step"], x["expanded"]),
    "sum-transposed": lambda e, x: x["transposed"].sum(1),
    "amax-step": lambda e, x: x["step"].amax(0),
    "cumsum-transposed": lambda e, x: x["transposed"].cumsum(0),
    "matmul-transposed": lambda e, x: x["step"] @ x["dense_t"].t(),
    "remainder-step": lambda e, x: e.remainder(x["step"], 1.5),  # a composite
    "softmax-transposed": lambda e, x: e.softmax(x["transposed"], 1),
    "conv2d-channels-last": lambda e, x: e.nn.functional.conv2d(x["nhwc"], x["weight"], padding=1),
}


def _host(t: Any) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), dtype=np.float64)


def _contiguous_case(ctx: Ctx, case: str, dtype: str) -> None:
    import ember as e

    lb, dev = ctx.lb, f"{ctx.lb.name}:{ctx.index}"
    fn = _CASES[case]
    want = _host(fn(e, _inputs(e, "cpu", getattr(e, dtype))))
    operands = _inputs(e, dev, getattr(e, dtype))
    if lb.backend.contiguous_only:
        with spy_strided_inputs(lb) as seen:
            got = fn(e, operands)
        _expect(
            not seen,
            f"{case}: contiguous_only backend, yet kernel {seen[0] if seen else ''} received a "
            f"non-contiguous array (all: {sorted(set(seen))})",
        )
    else:
        got = fn(e, operands)
    tol = 1e-4 if dtype != "float64" else 1e-10
    got_h = _host(got)
    if got_h.shape != want.shape or not np.allclose(got_h, want, rtol=tol, atol=tol):
        raise CheckFailed(f"{case}: on non-contiguous inputs the result differs from cpu's")


def contiguous_checks(ctx: Ctx) -> list[Check]:
    dtype = _first(ctx, "float32", "float64")
    if dtype not in ("float32", "float64"):
        return []  # no floating dtype to compute these expressions in
    return [(f"{case}-{dtype}", _bind(_contiguous_case, ctx, case, dtype)) for case in _CASES]


GROUPS: dict[str, Callable[[Ctx], list[Check]]] = {"contiguous_inputs": contiguous_checks}
