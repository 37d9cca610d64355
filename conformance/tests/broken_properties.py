"""Backends that break one generic property each (``--ember-plugin broken_properties:X``).

Like ``broken_backends``, each is the CPU backend with one kernel replaced; every one of
them returns the right values, so only the properties checked on every call
(``ember_conformance.properties``) or the frontend's kernel-result check can catch it.
"""

from __future__ import annotations

import itertools
from typing import Any

import ember.backends as eb
import numpy as np
from broken_backends import BrokenPlugin
from ember.backends import hookimpl


def _log_softmax_in_place(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["log_softmax"]

    def log_softmax(x: Any, dim: int) -> Any:
        if x.ndim and x.size and x.flags.writeable:
            x -= np.max(x, axis=dim, keepdims=True)  # saves a temporary, clobbers the caller's x
        return orig(x, dim)  # shift-invariant: the values stay right

    return {"log_softmax": log_softmax}


def _clone_returns_input(k: dict[str, Any]) -> dict[str, Any]:
    return {"clone": lambda x: x}


def _cat_one_returns_it(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["cat"]
    return {"cat": lambda xs, dim: xs[0] if len(xs) == 1 else orig(xs, dim)}


def _scatter_into_x(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["scatter"]

    def scatter(x: Any, dim: int, index: Any, src: Any, reduce: Any) -> Any:
        out = orig(x, dim, index, src, reduce)
        if x.flags.writeable:
            x[...] = out  # writes the result into x as well
        return out

    return {"scatter": scatter}


def _sgd_changes_grad(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["sgd_update"]

    def sgd_update(param: Any, grad: Any, buf: Any, lr: float, momentum: float, *rest: Any) -> Any:
        dampening, weight_decay, nesterov, maximize, first = rest
        if weight_decay:  # folds weight decay into the caller's gradient
            grad += (-weight_decay if maximize else weight_decay) * param
        return orig(param, grad, buf, lr, momentum, dampening, 0.0, nesterov, maximize, first)

    return {"sgd_update": sgd_update}


_calls = itertools.count()


def _scatter_random_order(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["scatter"]

    def scatter(x: Any, dim: int, index: Any, src: Any, reduce: Any) -> Any:
        if reduce != "add" or index.size == 0:
            return orig(x, dim, index, src, reduce)
        out = np.array(x, copy=True)
        grid = list(np.ogrid[tuple(slice(0, s) for s in index.shape)])
        grid[dim] = index
        where = tuple(np.broadcast_to(g, index.shape).ravel() for g in grid)
        vals = np.asarray(src)[tuple(slice(0, s) for s in index.shape)].ravel()
        order = np.arange(index.size)
        if next(_calls) % 2:  # duplicates summed in another order each call, as with atomics
            order = order[::-1]
        np.add.at(out, tuple(w[order] for w in where), vals[order])
        return out

    return {"scatter": scatter}


def _clone_keeps_strides(k: dict[str, Any]) -> dict[str, Any]:
    return {"clone": lambda x: np.array(x, copy=True, order="K")}


def _reshape_copies_3d(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["reshape"]

    def reshape(x: Any, shape: tuple[int, ...]) -> Any:
        out = orig(x, shape)
        return out.copy() if out is not None and len(shape) == 3 else out

    return {"reshape": reshape}


def _out_ignored_0d(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["add"]

    @eb.writes_out
    def add(a: Any, b: Any, out: Any = None) -> Any:
        if out is None or out.ndim == 0:
            return orig(a, b)  # a 0-d out is left untouched
        return orig(a, b, out=out)

    return {"add": add}


def _bmm_wrong_shape(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["matmul"]

    def matmul(a: Any, b: Any) -> Any:
        out = orig(a, b)
        return out.reshape(-1, out.shape[-1]) if out.ndim == 3 else out  # batch dims flattened

    return {"matmul": matmul}


def _masked_result(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["exp"]
    return {"exp": lambda x: np.ma.masked_invalid(orig(x))}  # an ndarray subclass


def _byte_swapped(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["neg"]

    def neg(x: Any) -> Any:
        out = orig(x)
        return out.astype(out.dtype.newbyteorder()) if out.dtype == np.float64 else out

    return {"neg": neg}


class _Declares(BrokenPlugin):
    """Not broken: the same kernels, with ``ops`` declared nondeterministic."""

    def __init__(self, name: str, replace: Any, ops: frozenset[str]) -> None:
        super().__init__(name, replace)
        self.ops = ops

    @hookimpl
    def ember_backend(self) -> Any:
        be = super().ember_backend()
        be.nondeterministic = self.ops
        return be


log_softmax_in_place = BrokenPlugin("broken_log_softmax", _log_softmax_in_place)
clone_returns_input = BrokenPlugin("broken_clone_alias", _clone_returns_input)
cat_one_returns_it = BrokenPlugin("broken_cat_alias", _cat_one_returns_it)
scatter_into_x = BrokenPlugin("broken_scatter_x", _scatter_into_x)
sgd_changes_grad = BrokenPlugin("broken_sgd_grad", _sgd_changes_grad)
scatter_random_order = BrokenPlugin("broken_scatter_order", _scatter_random_order)
scatter_order_declared = _Declares("scatter_order_declared", _scatter_random_order, frozenset({"scatter"}))
clone_keeps_strides = BrokenPlugin("broken_clone_strides", _clone_keeps_strides)
reshape_copies_3d = BrokenPlugin("broken_reshape_3d", _reshape_copies_3d)
out_ignored_0d = BrokenPlugin("broken_out_0d", _out_ignored_0d)
bmm_wrong_shape = BrokenPlugin("broken_bmm", _bmm_wrong_shape)
masked_result = BrokenPlugin("broken_array_type", _masked_result)
byte_swapped = BrokenPlugin("broken_byte_order", _byte_swapped)
