"""Semantic checks beyond values: aliasing, in-place writes, host round trips, the random
stream, error behaviour and determinism. Each runs in the worker like an op case.

A check is a thunk that returns nothing or raises ``CheckFailed`` with what was wrong;
any other exception is reported as an error of that check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME, LoadedBackend

from .dtypes import FLOATS, np_dtype
from .harness import to_host

__all__ = ["GROUPS", "Check", "CheckFailed", "Ctx"]


class CheckFailed(AssertionError):
    """A semantic check found the backend breaking the contract."""


@dataclass
class Ctx:
    lb: LoadedBackend
    dtypes: list[str]  # the dtypes under test (declared, possibly narrowed by the manifest)
    index: int


Check = tuple[str, Callable[[], None]]


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise CheckFailed(message)


def _host(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    base = np.arange(n) % 2 == 1 if dtype == "bool" else (np.arange(n) % 100)
    return np.asarray(base).astype(np_dtype(dtype)).reshape(shape)


def _first(ctx: Ctx, *prefs: str) -> str:
    for d in prefs:
        if d in ctx.dtypes:
            return d
    return ctx.dtypes[0]


# view op -> (base shape, kernel call, the same view in NumPy, writable through the view)
_VIEWS: dict[str, tuple[tuple[int, ...], Callable[..., Any], Callable[[np.ndarray], np.ndarray], bool]] = {
    "reshape": ((2, 3, 4), lambda k, x: k["reshape"](x, (6, 4)), lambda a: a.reshape(6, 4), True),
    "permute": ((2, 3, 4), lambda k, x: k["permute"](x, (2, 0, 1)), lambda a: a.transpose(2, 0, 1), True),
    "slice": (
        (4, 6),
        lambda k, x: k["slice"](x, (slice(1, 4, 2), slice(0, 6, 3))),
        lambda a: a[1:4:2, 0:6:3],
        True,
    ),
    "slice-int": ((4, 6), lambda k, x: k["slice"](x, (2,)), lambda a: a[2], True),
    "as_strided": (
        (12,),
        lambda k, x: k["as_strided"](x, (3, 2), (4, 2), 1),
        lambda a: np.lib.stride_tricks.as_strided(a[1:], (3, 2), (4 * a.itemsize, 2 * a.itemsize)),
        True,
    ),
    "expand": ((3, 1), lambda k, x: k["expand"](x, (3, 4)), lambda a: np.broadcast_to(a, (3, 4)), False),
}


def _fill_for(view: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return ~view
    return (np.arange(view.size).reshape(view.shape) + 50).astype(view.dtype)


def _view_write(ctx: Ctx, name: str, dtype: str) -> None:
    """Write through the view with ``assign``; the base must see it, and nothing else change."""
    shape, call, np_view, _ = _VIEWS[name]
    lb, host = ctx.lb, _host(dtype, shape)
    base = lb.backend.from_numpy(host.copy(), ctx.index)
    view = call(lb.k, base)
    want = host.copy()
    fill = _fill_for(np_view(want), dtype)
    np_view(want)[...] = fill
    lb.k["assign"](view, lb.backend.from_numpy(fill.copy(), ctx.index))
    got = to_host(lb, base)
    _expect(
        np.array_equal(got, want),
        f"{name}: writing through the view did not reach the base "
        f"(base now {got.ravel()[:8].tolist()}..., expected {want.ravel()[:8].tolist()}...)",
    )
    _expect(
        lb.backend.storage_id(view) == lb.backend.storage_id(base),
        f"{name}: storage_id of the view differs from its base's",
    )


def _view_read(ctx: Ctx, name: str, dtype: str) -> None:
    """Write the base with ``assign``; the view must show the new values."""
    shape, call, np_view, _ = _VIEWS[name]
    lb, host = ctx.lb, _host(dtype, shape)
    base = lb.backend.from_numpy(host.copy(), ctx.index)
    view = call(lb.k, base)
    new = _fill_for(host, dtype)
    lb.k["assign"](base, lb.backend.from_numpy(new.copy(), ctx.index))
    got, want = to_host(lb, view), np_view(new)
    _expect(
        got.shape == want.shape and np.array_equal(got, want),
        f"{name}: the view did not see a write to its base (view shows {got.ravel()[:8].tolist()}..., "
        f"expected {want.ravel()[:8].tolist()}...)",
    )


def view_checks(ctx: Ctx) -> list[Check]:
    out: list[Check] = []
    for name, (_, _, _, writable) in _VIEWS.items():
        for dtype in ctx.dtypes:
            if writable:
                out.append((f"{name}-write-{dtype}", _bind(_view_write, ctx, name, dtype)))
            out.append((f"{name}-read-{dtype}", _bind(_view_read, ctx, name, dtype)))
    return out


# destination view of a (4, 6) base, the NumPy equivalent, the source's shape (None: scalar)
_ASSIGN: dict[str, tuple[Callable[..., Any], Callable[[np.ndarray], np.ndarray], tuple[int, ...] | None]] = {
    "transposed": (lambda k, x: k["permute"](x, (1, 0)), lambda a: a.T, (6, 4)),
    "step-sliced": (
        lambda k, x: k["slice"](x, (slice(0, 4, 2), slice(1, 6, 2))),
        lambda a: a[0:4:2, 1:6:2],
        (2, 3),
    ),
    "row-scalar": (lambda k, x: k["slice"](x, (3,)), lambda a: a[3], None),
    "broadcast-src": (lambda k, x: k["slice"](x, (slice(1, 3, 1),)), lambda a: a[1:3], (1, 6)),
}


def _assign_strided(ctx: Ctx, name: str, dtype: str) -> None:
    """``assign`` into a strided view writes exactly the view's elements of the base."""
    call, np_view, src_shape = _ASSIGN[name]
    lb, host = ctx.lb, _host(dtype, (4, 6))
    base = lb.backend.from_numpy(host.copy(), ctx.index)
    want = host.copy()
    if src_shape is None:
        src: Any = True if dtype == "bool" else 7
        np_view(want)[...] = src
    else:
        s = _fill_for(np.zeros(src_shape, host.dtype), dtype)
        np_view(want)[...] = s
        src = lb.backend.from_numpy(s.copy(), ctx.index)
        if name == "broadcast-src":
            src = lb.k["expand"](src, (2, 6))
    lb.k["assign"](call(lb.k, base), src)
    got = to_host(lb, base)
    bad = np.argwhere(got != want)
    _expect(
        bad.size == 0,
        f"assign into a {name} view: base differs at {len(bad)} positions, first "
        f"{tuple(bad[0]) if bad.size else ()}",
    )


def assign_checks(ctx: Ctx) -> list[Check]:
    return [(f"{name}-{d}", _bind(_assign_strided, ctx, name, d)) for name in _ASSIGN for d in ctx.dtypes]


def _special_values(dtype: str) -> np.ndarray:
    if dtype in FLOATS:
        return np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan], dtype=np.float64).astype(
            np_dtype(dtype)
        )
    nd = np_dtype(dtype)
    if nd.kind in "iu":
        info = np.iinfo(nd)
        return np.array([info.min, info.max, 0, 1], dtype=nd)
    if nd.kind == "c":
        return np.array([0j, 1 - 2j, complex(np.inf, 1), complex(1, np.nan)], dtype=nd)
    return np.array([True, False, True])


def _roundtrip(ctx: Ctx, dtype: str) -> None:
    """Host -> device -> host keeps every bit (signed zeros, inf, NaN, integer extremes)."""
    lb = ctx.lb
    for host in (_special_values(dtype), _host(dtype, (3, 4)), _host(dtype, ()), _host(dtype, (0, 2))):
        got = to_host(lb, lb.backend.from_numpy(host.copy(), ctx.index))
        _expect(got.dtype == host.dtype, f"to_numpy gave dtype {got.dtype}, sent {host.dtype}")
        _expect(got.shape == host.shape, f"to_numpy gave shape {got.shape}, sent {host.shape}")
        _expect(
            got.tobytes() == host.tobytes(),
            f"values changed in the round trip: sent {host.tolist()}, got {got.tolist()}",
        )
    x = lb.backend.empty((2, 3), DTYPES_BY_NAME[dtype], ctx.index)
    _expect(to_host(lb, x).shape == (2, 3), "empty((2, 3)) has the wrong shape")
    _expect(
        lb.backend.layout(x) == ((3, 1), 0),
        f"empty((2, 3)) layout is {lb.backend.layout(x)}, expected ((3, 1), 0): new arrays are C-contiguous",
    )
    _expect(
        lb.backend.index_of(x) == ctx.index, f"index_of gives {lb.backend.index_of(x)}, made on {ctx.index}"
    )


def roundtrip_checks(ctx: Ctx) -> list[Check]:
    return [(d, _bind(_roundtrip, ctx, d)) for d in ctx.dtypes]


def _bind(fn: Callable[..., None], *args: Any) -> Callable[[], None]:
    return lambda: fn(*args)


GROUPS: dict[str, Callable[[Ctx], list[Check]]] = {
    "views": view_checks,
    "assign_strided": assign_checks,
    "roundtrip": roundtrip_checks,
}
