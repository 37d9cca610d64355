"""Kernels marked ``writes_out`` (``ember.backends.writes_out``: binary ops, add_scaled): ``out=``
must hold exactly what the kernel returns without it — into a fresh array, into a 0-d array, into its own
first operand (how the frontend runs ``x += y``) and into a strided view, touching nothing
else; a read-only (expanded) ``out`` raises ValueError."""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.backends.ops import BINARY, WRITES_OUT

from .checks import Check, CheckFailed, Ctx, _bind, _expect, _host
from .harness import to_host

__all__ = ["GROUPS"]


# Ops the frontend may give ``out``: the binary kernels, and add_scaled (``add_`` with alpha),
# with the arguments after the two operands that these checks pass.
_OUT_OPS: dict[str, tuple[Any, ...]] = {**dict.fromkeys(BINARY, ()), "add_scaled": (0.375,)}


def _marked(ctx: Ctx) -> list[str]:
    return sorted(op for op, fn in ctx.lb.k.items() if getattr(fn, WRITES_OUT, False))


def _only_binary(ctx: Ctx) -> None:
    """The frontend passes ``out`` only to binary kernels and add_scaled; a mark elsewhere is a
    mistake."""
    wrong = [op for op in _marked(ctx) if op not in _OUT_OPS]
    _expect(not wrong, f"writes_out marks kernels that are not binary ops or add_scaled: {wrong}")


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    a = _host(dtype, (3, 4))
    b = _host(dtype, (3, 4))[::-1].copy()
    if dtype != "bool":
        a, b = a + a.dtype.type(1), b + b.dtype.type(2)  # no zero divisors
    return a, b


def _writes_out(ctx: Ctx, op: str, dtype: str) -> None:
    lb, be, ix = ctx.lb, ctx.lb.backend, ctx.index
    k = _with(lb.k[op], _OUT_OPS[op])
    a_np, b_np = _operands(dtype)

    def dev(x: np.ndarray) -> Any:
        return be.from_numpy(x.copy(), ix)

    try:
        want = to_host(lb, k(dev(a_np), dev(b_np)))
    except Exception:  # noqa: BLE001 - the op's own records judge the dtype; nothing to compare
        return
    if want.dtype != a_np.dtype:
        return  # out has the operands' dtype (the frontend's x += y); no such call is made here
    fresh = dev(_stale(want))
    k(dev(a_np), dev(b_np), out=fresh)
    got = to_host(lb, fresh)
    _expect(_same(got, want), f"{op} into a fresh out: {got.tolist()}, without out: {want.tolist()}")

    _zero_d_out(ctx, op, k, a_np[0, 0], b_np[0, 0])

    a = dev(a_np)
    k(a, dev(b_np), out=a)
    got = to_host(lb, a)
    _expect(_same(got, want), f"{op} with out=a: a became {got.tolist()}, expected {want.tolist()}")

    base_np = np.zeros((4, 6), a_np.dtype)
    base = dev(base_np)
    view = lb.k["permute"](lb.k["slice"](base, (slice(0, 4, 1), slice(0, 6, 2))), (1, 0))  # (3, 4)
    k(dev(a_np), dev(b_np), out=view)
    expect_base = base_np.copy()
    expect_base[:, 0:6:2] = want.T
    got = to_host(lb, base)
    _expect(
        _same(got, expect_base),
        f"{op} into a strided view: base became {got.tolist()}, expected {expect_base.tolist()}",
    )

    expanded = lb.k["expand"](dev(a_np[:1, :1]), (3, 4))
    try:
        k(dev(a_np), dev(b_np), out=expanded)
    except ValueError:
        return
    raise CheckFailed(f"{op} into an expanded (read-only) out did not raise ValueError")


def _stale(want: np.ndarray) -> np.ndarray:
    """Values that differ from ``want`` everywhere (not ``empty``: reused memory could hold
    the right answer already)."""
    return ~want if want.dtype == np.bool_ else np.where(want == 7, 9, 7).astype(want.dtype)


def _with(kernel: Any, more: tuple[Any, ...]) -> Any:
    """``kernel(a, b, out=...)`` with the op's further arguments after the operands."""
    return lambda a, b, **kw: kernel(a, b, *more, **kw)


def _zero_d_out(ctx: Ctx, op: str, k: Any, a: np.ndarray, b: np.ndarray) -> None:
    """0-d operands into a 0-d ``out`` (``x += y`` on a 0-d tensor)."""
    lb = ctx.lb

    def dev(x: np.ndarray) -> Any:
        return lb.backend.from_numpy(np.array(x, copy=True), ctx.index)

    want = to_host(lb, k(dev(a), dev(b)))
    out = dev(_stale(want))
    k(dev(a), dev(b), out=out)
    got = to_host(lb, out)
    _expect(_same(got, want), f"{op} into a 0-d out: out holds {got.tolist()}, without out: {want.tolist()}")


def out_checks(ctx: Ctx) -> list[Check]:
    out: list[Check] = [("marked-kernels-are-binary", _bind(_only_binary, ctx))]
    for op in _marked(ctx):
        if op in _OUT_OPS:
            out += [(f"{op}-{d}", _bind(_writes_out, ctx, op, d)) for d in ctx.dtypes]
    return out


GROUPS = {"writes_out": out_checks}
