"""Checks of the random stream, error behaviour on bad input and determinism."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ember.backends import ALL_DTYPES, ALL_OPS, UnsupportedDTypeError, registry

from .checks import Check, CheckFailed, Ctx, _bind, _expect, _first
from .dtypes import np_dtype
from .harness import to_host
from .philox_ref import KAT, philox_words

__all__ = ["GROUPS"]


def _kat(ctx: Ctx, i: int) -> None:
    key, counter, words = KAT[i]
    got = to_host(ctx.lb, ctx.lb.k["philox"](4, key, counter, ctx.index))
    _expect(got.dtype == np.int64, f"philox returned dtype {got.dtype}, expected int64 (words in [0, 2**32))")
    _expect(
        got.tolist() == list(words),
        f"key {key} counter {counter}: got {[hex(w) for w in got.tolist()]}, "
        f"expected {[hex(w) for w in words]}",
    )


def _stream(ctx: Ctx) -> None:
    """A long stream equals the CPU backend's words (and the plain-Python reference's head)."""
    import ember.backends as eb

    key, counter = (0x12345678, 0x9ABCDEF0), (0xFFFFFFF0, 0xFFFFFFFF, 3, 0)
    got = to_host(ctx.lb, ctx.lb.k["philox"](40_003, key, counter, ctx.index))
    head = philox_words(400, key, counter)
    _expect(np.array_equal(got[:400], head), "the first 400 words differ from the reference Philox-4x32-10")
    cpu = eb.get("cpu")
    want = np.asarray(cpu.backend.to_numpy(cpu.native["philox"](40_003, key, counter, 0)))
    bad = np.flatnonzero(got != want)
    _expect(bad.size == 0, f"{bad.size} of 40003 words differ from the cpu backend's, first at {bad[:1]}")


def philox_checks(ctx: Ctx) -> list[Check]:
    return [(f"kat-{i}", _bind(_kat, ctx, i)) for i in range(len(KAT))] + [
        ("stream-vs-cpu", _bind(_stream, ctx))
    ]


def _raises_index_error(ctx: Ctx, op: str, bad: int) -> None:
    """Out-of-range and negative indices raise IndexError (the worker survives to say so)."""
    dtype = _first(ctx, "float32", "int64")
    be = ctx.lb.backend
    x = be.from_numpy(np.zeros((3, 4), np_dtype(dtype)), ctx.index)
    idx = np.zeros((2, 4), np.int64)
    idx[1, 2] = bad
    index = be.from_numpy(idx, ctx.index)
    args: tuple[Any, ...] = (
        (x, 0, index)
        if op == "gather"
        else (x, 0, index, be.from_numpy(np.ones((2, 4), np_dtype(dtype)), ctx.index), None)
    )
    try:
        ctx.lb.k[op](*args)
    except IndexError:
        return
    except Exception as e:  # noqa: BLE001 - any other exception is the finding
        raise CheckFailed(
            f"{op} with index {bad} on a dim of size 3 raised {type(e).__name__}: {e}; expected IndexError"
        ) from None
    raise CheckFailed(f"{op} with index {bad} on a dim of size 3 did not raise; expected IndexError")


def index_error_checks(ctx: Ctx) -> list[Check]:
    return [
        (f"{op}-{label}", _bind(_raises_index_error, ctx, op, bad))
        for op in ("gather", "scatter")
        for label, bad in (("too-large", 3), ("far-too-large", 1 << 40), ("negative", -1))
    ]


def _undeclared(ctx: Ctx, name: str) -> None:
    """``empty``, ``full`` and ``from_numpy`` refuse a dtype the backend does not declare."""
    from ember.backends import DTYPES_BY_NAME

    d, lb = DTYPES_BY_NAME[name], ctx.lb
    attempts: list[tuple[str, Callable[[], Any]]] = [
        ("empty", lambda: lb.backend.empty((2,), d, ctx.index)),
        ("full", lambda: lb.k["full"]((2,), 0, d, ctx.index)),
        ("from_numpy", lambda: lb.backend.from_numpy(np.zeros(2, np_dtype(name)), ctx.index)),
    ]
    for what, fn in attempts:
        try:
            fn()
        except UnsupportedDTypeError:
            continue
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            raise CheckFailed(
                f"{what} with undeclared dtype {name} raised {type(e).__name__}: {e}; expected "
                "ember.backends.UnsupportedDTypeError"
            ) from None
        raise CheckFailed(f"{what} with undeclared dtype {name} did not raise UnsupportedDTypeError")


def _all_declared(ctx: Ctx) -> None:
    _expect(len(ctx.lb.backend.dtypes) == len(ALL_DTYPES), "backend dtypes changed while testing")


def dtype_error_checks(ctx: Ctx) -> list[Check]:
    missing = [d.name for d in ALL_DTYPES if d not in ctx.lb.backend.dtypes]
    if not missing:
        return [("all-dtypes-declared", _bind(_all_declared, ctx))]
    return [(name, _bind(_undeclared, ctx, name)) for name in missing]


def _nondeterministic_raises(ctx: Ctx, op: str) -> None:
    registry.set_deterministic(True)
    try:
        ctx.lb.k[op]()
    except RuntimeError as e:
        _expect("deterministic" in str(e), f"{op} raised RuntimeError without saying why: {e}")
        return
    except Exception as e:  # noqa: BLE001 - any other exception is the finding
        raise CheckFailed(
            f"{op} under determinism raised {type(e).__name__}, expected RuntimeError"
        ) from None
    finally:
        registry.set_deterministic(False)
    raise CheckFailed(f"{op} is declared nondeterministic but ran under set_deterministic(True)")


def _variant_used(ctx: Ctx, op: str) -> None:
    """An op with a registered deterministic variant runs it under determinism, not the error."""
    registry.set_deterministic(True)
    try:
        ctx.lb.k[op]()  # no arguments: the variant itself refuses, with its own TypeError
    except RuntimeError as e:
        _expect(
            "deterministic implementation" not in str(e), f"{op}: the deterministic variant was not used: {e}"
        )
    except Exception:  # noqa: BLE001, S110 - the variant ran (and refused the empty call)
        pass
    finally:
        registry.set_deterministic(False)


def _nondeterministic_declared(ctx: Ctx) -> None:
    unknown = set(ctx.lb.backend.nondeterministic) - set(ALL_OPS)
    _expect(not unknown, f"nondeterministic names unknown ops: {sorted(unknown)}")


def determinism_checks(ctx: Ctx) -> list[Check]:
    out = [("declared-ops-exist", _bind(_nondeterministic_declared, ctx))]
    variants = ctx.lb.deterministic
    return out + [
        (op, _bind(_variant_used if op in variants else _nondeterministic_raises, ctx, op))
        for op in sorted(ctx.lb.backend.nondeterministic)
    ]


GROUPS: dict[str, Callable[[Ctx], list[Check]]] = {
    "philox": philox_checks,
    "index_errors": index_error_checks,
    "undeclared_dtypes": dtype_error_checks,
    "determinism": determinism_checks,
}
