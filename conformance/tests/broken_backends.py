"""Deliberately broken backends for the suite's self-test (``--ember-plugin broken_backends:X``).

Each wraps the CPU backend's kernels (looked up through the registry, as a third party
would) and breaks exactly one thing, so the self-test can assert the suite names it.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable
from typing import Any

import ember.backends as eb
import numpy as np
from ember.backends import ALL_DTYPES, hookimpl, registry
from ember.backends.ops import ALL_OPS, VIEWS


class _Renamed:
    """The CPU Backend object under another name, optionally unavailable or with fewer dtypes."""

    def __init__(
        self, name: str, unavailable: str | None = None, dtypes: Any = None, contiguous_only: bool = False
    ) -> None:
        self._inner = eb.get("cpu").backend
        self.name = name
        self.contiguous_only = contiguous_only
        self._unavailable = unavailable
        self.dtypes = dtypes if dtypes is not None else self._inner.dtypes

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)

    def unavailable_reason(self) -> str | None:
        return self._unavailable


class BrokenPlugin:
    """A plugin object: the CPU kernels with ``replace`` swapped in and ``drop`` left out."""

    def __init__(
        self,
        name: str,
        replace: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        drop: tuple[str, ...] = (),
        **backend_kw: Any,
    ) -> None:
        self.name, self.replace, self.drop, self.backend_kw = name, replace, drop, backend_kw

    @hookimpl
    def ember_backend(self) -> Any:
        return _Renamed(self.name, **self.backend_kw)

    @hookimpl
    def ember_register_kernels(self, backend: str, register: Callable[[str, Any], None]) -> None:
        kernels = dict(eb.get("cpu").native)
        if self.replace:
            kernels.update(self.replace(kernels))
        for op, fn in kernels.items():
            if op not in self.drop:
                register(op, fn)


def _wrong_value(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["add"]

    def add(a: Any, b: Any) -> Any:
        out = orig(a, b)
        return out + np.float32(1) if out.dtype == np.float32 else out

    return {"add": add}


def _view_copies(k: dict[str, Any]) -> dict[str, Any]:
    return {"permute": lambda x, dims: np.array(x.transpose(dims), copy=True)}


def _wrong_dtype(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["sum"]

    def sum_(x: Any, dims: Any, keepdim: bool) -> Any:
        out = orig(x, dims, keepdim)
        return out.astype(np.float64) if out.dtype == np.float32 else out

    return {"sum": sum_}


def _crash_on_empty(k: dict[str, Any]) -> dict[str, Any]:
    exp_, neg_ = k["exp"], k["neg"]

    def exp(x: Any) -> Any:
        if x.size == 0:
            os._exit(3)
        return exp_(x)

    def neg(x: Any) -> Any:
        if x.size == 0:
            ctypes.string_at(0)  # reads address 0: a real segfault
        return neg_(x)

    return {"exp": exp, "neg": neg}


def _hangs(k: dict[str, Any]) -> dict[str, Any]:
    exp_ = k["exp"]

    def exp(x: Any) -> Any:
        if x.size == 0:
            time.sleep(3600)
        return exp_(x)

    return {"exp": exp}


def _no_index_error(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["gather"]

    def gather(x: Any, dim: int, index: Any) -> Any:
        if x.ndim:
            index = np.clip(index, 0, x.shape[dim] - 1)  # silently reads the wrong element instead
        return orig(x, dim, index)

    return {"gather": gather}


def _out_ignored(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["mul"]

    @eb.writes_out
    def mul(a: Any, b: Any, out: Any = None) -> Any:
        return orig(a, b)  # claims out= but leaves it untouched

    return {"mul": mul}


def _scalar_result(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["exp"]

    def exp(x: Any) -> Any:
        out = orig(x)
        return out[()] if out.ndim == 0 else out  # a NumPy scalar for 0-d input

    return {"exp": exp}


class NoDecomposition(BrokenPlugin):
    """The CPU kernels without ``op``'s, under a frontend that has no decomposition for ``op``
    (dropped when the backend loads, in the pytest process and in the worker alike)."""

    def __init__(self, name: str, op: str) -> None:
        super().__init__(name, drop=(op,))
        self.op = op

    @hookimpl
    def ember_backend(self) -> Any:
        # The module defining the decomposition loads lazily: load it now, so that no later
        # import declares the decomposition again, then forget the decomposition.
        registry._import_decompositions((self.op,))
        registry._decomposed.pop(self.op, None)
        registry._decomposition_modules.pop(self.op, None)
        return _Renamed(self.name)


wrong_value = BrokenPlugin("broken_value", _wrong_value)
view_copies = BrokenPlugin("broken_view", _view_copies)
wrong_dtype = BrokenPlugin("broken_dtype", _wrong_dtype)
crash_on_empty = BrokenPlugin("broken_crash", _crash_on_empty)
hangs = BrokenPlugin("broken_hang", _hangs)
missing_kernels = BrokenPlugin("broken_missing", drop=("tanh", "erf"))
# No compute kernel at all: only the views and assign (which cannot fall back) are its own.
views_only = BrokenPlugin(
    "broken_views_only", drop=tuple(op for op in ALL_OPS if op not in (*VIEWS, "assign"))
)
no_eig = NoDecomposition("broken_no_eig", "linalg_eig")
no_index_error = BrokenPlugin("broken_index", _no_index_error)
out_ignored = BrokenPlugin("broken_out", _out_ignored)
scalar_result = BrokenPlugin("broken_scalar", _scalar_result)
unavailable = BrokenPlugin("broken_unavailable", unavailable="no such hardware on this machine")
# Declares no bfloat16 but its from_numpy/empty/full still accept it.
lax_dtypes = BrokenPlugin("broken_lax", dtypes=frozenset(d for d in ALL_DTYPES if d.name != "bfloat16"))
# Not broken: the CPU kernels behind a backend that asks for contiguous inputs only.
contiguous_only = BrokenPlugin("dense_cpu", contiguous_only=True)


class _FortranEmpty(_Renamed):
    """``empty`` hands out column-major arrays: the frontend's dense copy for a
    ``contiguous_only`` backend (made with ``empty`` + ``assign``) is then still strided."""

    def empty(self, shape: tuple[int, ...], dtype: Any, index: int) -> Any:
        return np.asfortranarray(self._inner.empty(shape, dtype, index))


class StridedEmpty(BrokenPlugin):
    @hookimpl
    def ember_backend(self) -> Any:
        return _FortranEmpty(self.name, contiguous_only=True)


# Declares contiguous_only, but its kernels still receive strided arrays.
strided_empty = StridedEmpty("broken_dense")
