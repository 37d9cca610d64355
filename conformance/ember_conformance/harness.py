"""Runs op case records against a loaded backend (inside the worker process).

Lays each tensor argument out on the device with the backend's own view kernels
(``expand``, ``permute``, ``slice``), calls the op's kernel, reads the result back with
``to_numpy`` and compares it with the record's float64 reference.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from ember.backends import ALL_OPS, DTYPES_BY_NAME, LoadedBackend

from .catalog import CASES
from .compare import compare, compare_close
from .dtypes import upcast
from .properties import check_call, inputs_unchanged, snapshot
from .records import INDEX, D, OpCase, Sample, T, rng_for

__all__ = [
    "case_id",
    "device_arg",
    "op_cases",
    "reference_of",
    "result_dtypes",
    "run_sample",
    "samples_for",
    "to_host",
]


def case_id(op: str, dtype: str, label: str) -> str:
    return f"{op}[{dtype}]/{label}"


def _dtypes_in(arg: Any) -> Iterator[str]:
    if isinstance(arg, D):
        yield arg.name
    elif isinstance(arg, (list, tuple)):
        for a in arg:
            yield from _dtypes_in(a)


def samples_for(record: OpCase, dtype: str, declared: set[str]) -> list[Sample]:
    """The record's samples for ``dtype``, minus those naming a dtype the backend lacks,
    as an argument or as a result (``complex`` of float32 parts is complex64)."""
    out = []
    for s in record.samples(dtype, rng_for(record.op, dtype)):
        named = set(_dtypes_in(s.args)) | set(_out_dtypes(record, dtype, s))
        if named <= declared:
            out.append(s)
    return out


def _map(arg: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(arg, list):
        return [_map(a, fn) for a in arg]
    if isinstance(arg, tuple) and not isinstance(arg, T):
        return tuple(_map(a, fn) for a in arg)
    return fn(arg)


def reference_of(record: OpCase, sample: Sample) -> Any:
    """The record's reference on upcast copies of the sample's arguments."""
    args = [_map(a, _ref_leaf) for a in sample.args]
    with np.errstate(all="ignore"):
        return record.reference(*args)


def _ref_leaf(a: Any) -> Any:
    if isinstance(a, T):
        return upcast(a.value)
    if isinstance(a, D):
        return a.name
    return 0 if a is INDEX else a


def device_arg(lb: LoadedBackend, t: T, index: int, dense: bool = False) -> Any:
    """Put ``t`` on the device in its layout, built with the backend's own view kernels;
    ``dense``: then copy it to a contiguous array, as the frontend does for backends that
    declare ``contiguous_only``."""
    be, k = lb.backend, lb.k
    v = t.value
    if t.layout == "expand" and t.source is not None:
        x = k["expand"](be.from_numpy(_dense(t.source), index), v.shape)
    elif t.layout == "permute" and v.ndim >= 2:
        perm = tuple(reversed(range(v.ndim)))
        x = k["permute"](be.from_numpy(_dense(v.transpose(perm)), index), perm)
    elif t.layout == "step" and v.ndim >= 1:
        # Every other element from the second one on: a non-zero storage offset as well.
        wide = np.zeros(v.shape[:-1] + (2 * v.shape[-1] + 1,), dtype=v.dtype)
        wide[..., 1::2] = v
        key = tuple(slice(0, s, 1) for s in v.shape[:-1]) + (slice(1, 2 * v.shape[-1] + 1, 2),)
        x = k["slice"](be.from_numpy(wide, index), key)
    else:
        return be.from_numpy(_dense(v), index)
    if dense:
        dense = be.empty(v.shape, DTYPES_BY_NAME[_name(v)], index)
        k["assign"](dense, x)
        return dense
    return x


def _dense(v: np.ndarray) -> np.ndarray:
    """A private C-contiguous copy: host backends may alias what ``from_numpy`` gets, and
    ``np.ascontiguousarray`` would turn a 0-d array into shape (1,)."""
    return np.array(v, copy=True, order="C")


def _name(v: np.ndarray) -> str:
    from .dtypes import name_of

    return name_of(v.dtype)


def to_host(lb: LoadedBackend, x: Any) -> np.ndarray:
    """A private host copy of a device array (``to_numpy`` may alias on host backends)."""
    return np.array(lb.backend.to_numpy(x), copy=True)


def run_sample(lb: LoadedBackend, record: OpCase, dtype: str, sample: Sample, index: int) -> dict[str, Any]:
    """Run one sample; a verdict dict (status ok/fail/error, message, worst error).

    Inputs unchanged, then values, then the other properties every call must have
    (``properties.py``), the last of them a second run on fresh copies of the inputs."""
    try:
        args = _device_args(lb, record, sample, index)
        before = snapshot(lb, args)
        out = _call(lb, record, args)
        clobbered = inputs_unchanged(record.op, lb, before)
        if clobbered:
            return {"status": "fail", "message": clobbered}
        verdict = _check(lb, record, dtype, sample, out)
        if verdict["status"] != "ok" or out is None:
            return verdict
        msg = check_call(
            lb,
            record.op,
            index,
            (list(sample.args), args, out),
            before,
            _out_dtypes(record, dtype, sample),
            record.reference if ALL_OPS[record.op].kind == "view" else None,
            lambda: _call(lb, record, _device_args(lb, record, sample, index)),
        )
        return verdict if msg is None else {"status": "fail", "message": msg}
    except Exception as e:  # noqa: BLE001 - a kernel that raises fails that case, not the run
        tb = traceback.format_exception(type(e), e, e.__traceback__, limit=-3)
        return {"status": "error", "message": f"raised {type(e).__name__}: {e}", "traceback": "".join(tb)}


def _device_args(lb: LoadedBackend, record: OpCase, sample: Sample, index: int) -> list[Any]:
    """The sample's arguments on the device, each tensor in its layout."""
    # View kernels and assign see strided arrays even on contiguous_only backends: copying
    # their input would break the aliasing they exist for.
    dense = lb.backend.contiguous_only and ALL_OPS[record.op].kind != "view" and record.op != "assign"

    def leaf(a: Any) -> Any:
        if isinstance(a, T):
            return device_arg(lb, a, index, dense)
        if isinstance(a, D):
            return DTYPES_BY_NAME[a.name]
        return index if a is INDEX else a

    return [_map(a, leaf) for a in sample.args]


def _call(lb: LoadedBackend, record: OpCase, args: list[Any]) -> Any:
    kernel = lb.kernel(record.op)  # a composite without a kernel: its decomposition
    return record.call(kernel, *args) if record.call else kernel(*args)


def _out_dtypes(record: OpCase, dtype: str, sample: Sample | None = None) -> list[str]:
    d = (sample.out_dtype if sample else None) or record.out_dtype(dtype)
    return list(d) if isinstance(d, (tuple, list)) else [d]


def result_dtypes(record: OpCase, dtype: str) -> list[str]:
    """The dtypes of the record's results for inputs of ``dtype`` (one per result)."""
    return _out_dtypes(record, dtype)


def _check(lb: LoadedBackend, record: OpCase, dtype: str, sample: Sample, out: Any) -> dict[str, Any]:
    if sample.expect_none:
        if out is None:
            return {"status": "ok", "message": ""}
        return {
            "status": "fail",
            "message": "returned an array; a layout that cannot be viewed with the new "
            "shape must give None (a copy would not alias its input)",
        }
    if out is None:
        return {"status": "fail", "message": "returned None"}
    kind = lb.backend.array_type
    for o in out if isinstance(out, tuple) else (out,):
        if not isinstance(o, kind):  # e.g. a NumPy scalar from a 0-d reduction: not an array
            return {
                "status": "fail",
                "message": f"returned a {type(o).__module__}.{type(o).__name__}, not the backend's "
                f"array type {kind.__module__}.{kind.__name__}",
            }
    want = reference_of(record, sample)
    out_dtype = sample.out_dtype or record.out_dtype(dtype)
    mag = None
    if record.magnitude is not None:
        with np.errstate(all="ignore"):
            mag = record.magnitude(*[_map(a, _ref_leaf) for a in sample.args])
    if isinstance(want, tuple):
        if not isinstance(out, tuple) or len(out) != len(want):
            return {
                "status": "fail",
                "message": f"returned {type(out).__name__}, expected a {len(want)}-tuple",
            }
        got = [to_host(lb, o) for o in out]
        for i, (g, w, d) in enumerate(zip(got, want, out_dtype)):
            v = (
                compare(g, w, d, record.tol_scale, op=record.op)
                if record.canon is None
                else _dtype_shape(g, w, d)
            )
            if v["status"] != "ok":
                v["message"] = f"output {i}: {v['message']}"
                return v
        return (
            _check_canon(record, got, want, out_dtype[0]) if record.canon else {"status": "ok", "message": ""}
        )
    return compare(to_host(lb, out), want, out_dtype, record.tol_scale, mag, op=record.op)


def _dtype_shape(got: np.ndarray, want: np.ndarray, dtype: str) -> dict[str, Any]:
    from .dtypes import name_of

    if name_of(got.dtype) != dtype:
        return {"status": "fail", "message": f"returned dtype {name_of(got.dtype)}, expected {dtype}"}
    if got.shape != np.shape(want):
        return {"status": "fail", "message": f"returned shape {got.shape}, expected {np.shape(want)}"}
    return {"status": "ok", "message": ""}


def _check_canon(record: OpCase, got: list[np.ndarray], want: Any, tol_dtype: str) -> dict[str, Any]:
    """Compare unique forms of a non-unique factorisation (see ``cases_linalg``)."""
    canon = record.canon
    assert canon is not None  # for the type checker: only called for records with one
    with np.errstate(all="ignore"):
        g = canon(*[x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in got])
        w = canon(*want)
    for i, (a, b) in enumerate(zip(g, w)):
        v = compare_close(a, b, tol_dtype, record.tol_scale)
        if v["status"] != "ok":
            v["message"] = f"canonical form {i} ({canon.__name__}): {v['message']}"
            return v
    return {"status": "ok", "message": ""}


def op_cases(
    lb: LoadedBackend, op: str, dtypes: list[str], index: int
) -> Iterator[tuple[str, Callable[[], dict]]]:
    """(case id, thunk) for every sample of ``op`` over ``dtypes``; nothing runs until called."""
    record = CASES[op]
    declared = {d.name for d in lb.backend.dtypes}
    for dtype in dtypes:
        for s in samples_for(record, dtype, declared):
            yield case_id(op, dtype, s.label), _bind(lb, record, dtype, s, index)


def _bind(lb: LoadedBackend, record: OpCase, dtype: str, s: Sample, index: int) -> Callable[[], dict]:
    return lambda: run_sample(lb, record, dtype, s, index)
