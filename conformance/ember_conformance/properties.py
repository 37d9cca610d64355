"""Properties every op case must have, checked by the harness on every call of every case
(DESIGN.md: "Properties are checked on every call rather than per op by hand").

After a call whose values already match the reference:

* inputs are unchanged, bit for bit (raw bytes, so NaN payloads and signed zeros count),
  except the arguments an in-place op documents writing (``WRITES``);
* results of non-view ops share no storage with any input;
* results of view ops share their input's storage, a write through the view reaches the
  base and a write to the base shows through the view;
* results have the backend's exact array type and the exact host dtype (byte order too),
  and results the contract calls fresh copies (``FRESH_CONTIGUOUS``) are C-contiguous;
* the same call on fresh copies of the inputs gives bit-identical results, unless the
  backend declares the op in ``Backend.nondeterministic``.

Each check returns ``None`` or a message naming the op and the property.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from ember.backends import ALL_OPS, LoadedBackend

from .dtypes import np_dtype
from .records import T

__all__ = [
    "FRESH_CONTIGUOUS",
    "WRITES",
    "check_call",
    "device_leaves",
    "inputs_unchanged",
    "is_c_contiguous",
    "shares_storage",
    "snapshot",
]

# In-place ops and the positional arguments they write (from the op table's docs in
# ``ember.backends.ops``); every other argument of theirs must stay unchanged.
WRITES: dict[str, tuple[int, ...]] = {
    "assign": (0,),  # dst
    "index_put": (0,),  # x
    "sgd_update": (0, 2),  # param, momentum buffer
    "adam_update": (0, 2, 3, 4),  # param, exp_avg, exp_avg_sq, max_exp_avg_sq
    "sgd_update_foreach": (0, 2),  # params, momentum buffers (lists)
    "adam_update_foreach": (0, 2, 3, 4),  # params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs
    "mul_foreach": (0,),  # the scaled arrays (a list)
}

# Non-view ops whose result the op table calls a contiguous copy.
FRESH_CONTIGUOUS = frozenset({"clone"})

Leaf = tuple[int, str, Any]  # (top-level argument position, label such as "arg 0[1]", array)


def device_leaves(lb: LoadedBackend, args: list[Any]) -> list[Leaf]:
    """Every device array among ``args`` (lists and tuples of arrays included)."""
    kind = lb.backend.array_type
    out: list[Leaf] = []
    for pos, a in enumerate(args):
        out += [(pos, label, x) for label, x in _walk(a, f"arg {pos}", kind)]
    return out


def _walk(a: Any, label: str, kind: type) -> Iterator[tuple[str, Any]]:
    if isinstance(a, kind):
        yield label, a
    elif isinstance(a, (list, tuple)):
        for i, x in enumerate(a):
            yield from _walk(x, f"{label}[{i}]", kind)


def _host(lb: LoadedBackend, x: Any) -> np.ndarray:
    """A private C-ordered host copy (``to_numpy`` may alias on host backends)."""
    return np.array(lb.backend.to_numpy(x), copy=True, order="C")


def snapshot(lb: LoadedBackend, args: list[Any]) -> list[tuple[int, str, Any, np.ndarray]]:
    """Host copies of every input, taken before the call."""
    return [(pos, label, x, _host(lb, x)) for pos, label, x in device_leaves(lb, args)]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def shares_storage(lb: LoadedBackend, a: Any, b: Any) -> bool:
    """Whether two device arrays share memory: the contract's ``storage_id``, and on host
    NumPy arrays also NumPy's own overlap test (an array built on another's buffer)."""
    if lb.backend.storage_id(a) == lb.backend.storage_id(b):
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.may_share_memory(a, b))
    return False


def is_c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """C order in elements; sizes 0 and 1 make any stride fine (PyTorch's rule)."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def inputs_unchanged(
    op: str, lb: LoadedBackend, before: list[tuple[int, str, Any, np.ndarray]]
) -> str | None:
    """Checked before the values are compared: a kernel that clobbers an input may get its
    own later steps wrong too (an optimizer record runs several), and the clobbered input is
    the finding to report."""
    written = WRITES.get(op, ())
    for pos, label, x, host in before:
        if pos in written:
            continue
        now = _host(lb, x)
        if not _same_bits(now, host):
            where = _first_difference(host, now)
            return f"{op}: property 'inputs unchanged' broken: the call modified its input {label}{where}" + (
                f" (it may write only arguments {list(written)})" if written else ""
            )
    return None


def _first_difference(a: np.ndarray, b: np.ndarray) -> str:
    if a.shape != b.shape or a.dtype != b.dtype:
        return f" (now {b.dtype}{b.shape}, was {a.dtype}{a.shape})"
    n = a.size
    ra = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(n, a.itemsize)
    rb = np.ascontiguousarray(b).reshape(-1).view(np.uint8).reshape(n, b.itemsize)
    rows = np.flatnonzero((ra != rb).any(axis=1))
    if not rows.size:
        return ""
    at = tuple(int(i) for i in np.unravel_index(int(rows[0]), a.shape))
    return f"; first at {at}: was {a[at]!r}, now {b[at]!r}"


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


def _no_alias(
    op: str, lb: LoadedBackend, outs: list[Any], before: list[tuple[int, str, Any, Any]]
) -> str | None:
    for i, o in enumerate(outs):
        for _, label, x, _ in before:
            if shares_storage(lb, o, x):
                return (
                    f"{op}: property 'result shares no storage with inputs' broken: result {i} "
                    f"shares storage with input {label} (a non-view op must return new memory)"
                )
    return None


def _types_and_dtypes(op: str, lb: LoadedBackend, outs: list[Any], dtypes: list[str]) -> str | None:
    kind = lb.backend.array_type
    for i, (o, d) in enumerate(zip(outs, dtypes)):
        if type(o) is not kind:
            return (
                f"{op}: property 'result array type' broken: result {i} is a "
                f"{type(o).__module__}.{type(o).__name__}, not exactly {kind.__module__}.{kind.__name__}"
            )
        got, want = _host(lb, o).dtype, np_dtype(d)
        if got != want:
            return (
                f"{op}: property 'result dtype' broken: result {i} reads back as NumPy dtype "
                f"{got.str}, the host format of {d} is {want.str}"
            )
    return None


def _contiguous(op: str, lb: LoadedBackend, outs: list[Any]) -> str | None:
    if op not in FRESH_CONTIGUOUS:
        return None
    for i, o in enumerate(outs):
        shape = _host(lb, o).shape
        strides, _ = lb.backend.layout(o)
        if not is_c_contiguous(shape, tuple(strides)):
            return (
                f"{op}: property 'fresh result is C-contiguous' broken: result {i} of shape "
                f"{shape} has strides {tuple(strides)}"
            )
    return None


def _deterministic(
    op: str, lb: LoadedBackend, first: list[np.ndarray], rerun: Callable[[], Any]
) -> str | None:
    if op in lb.backend.nondeterministic:
        return None
    again = [_host(lb, o) for o in _outputs(rerun())]
    for i, (a, b) in enumerate(zip(first, again)):
        if not _same_bits(a, b):
            return (
                f"{op}: property 'two runs bit-identical' broken: result {i} differs between two "
                f"calls on the same inputs{_first_difference(a, b)}; declare '{op}' in the "
                "backend's nondeterministic set if that is intended"
            )
    return None


def _tags(record_ref: Callable[..., Any], x_shape: tuple[int, ...], params: list[Any]) -> np.ndarray:
    """The base's flat positions each element of the view covers, from the NumPy reference
    applied to an array of position numbers."""
    return np.asarray(record_ref(np.arange(int(np.prod(x_shape)), dtype=np.int64).reshape(x_shape), *params))


def _other(v: np.ndarray) -> np.ndarray:
    """Values that differ from ``v`` everywhere (NaN included)."""
    if v.dtype == np.bool_:
        return ~v
    return np.where(v == 7, 9, 7).astype(v.dtype)


def _view(
    op: str, lb: LoadedBackend, index: int, sample_arg: Any, x: Any, out: Any, tags: np.ndarray
) -> str | None:
    """The view aliases ``x``: same storage, writes through either side seen by the other."""
    if not shares_storage(lb, out, x):
        return (
            f"{op}: property 'view shares storage with its base' broken: the result does not share "
            "its input's storage (a view kernel must not copy)"
        )
    if tags.size == 0 or (isinstance(sample_arg, T) and sample_arg.layout == "expand"):
        return None  # nothing to write, or a base with overlapping elements
    be, assign = lb.backend, lb.k["assign"]
    flat = tags.reshape(-1)
    if np.unique(flat).size == flat.size:  # no overlapping elements: writable
        base = _host(lb, x)
        fill = _other(_host(lb, out))
        assign(out, be.from_numpy(fill.copy(), index))
        want = base.reshape(-1).copy()
        want[flat] = fill.reshape(-1)
        got = _host(lb, x)
        if not _same_bits(got.reshape(-1), want):
            return (
                f"{op}: property 'a write through the view reaches the base' broken: base now "
                f"{got.reshape(-1)[:8].tolist()}..., expected {want[:8].tolist()}..."
            )
    new = _other(_host(lb, x))
    assign(x, be.from_numpy(new.copy(), index))
    got, want = _host(lb, out), new.reshape(-1)[flat].reshape(tags.shape)
    if not _same_bits(got, want):
        return (
            f"{op}: property 'the view sees writes to its base' broken: view shows "
            f"{got.reshape(-1)[:8].tolist()}..., expected {want.reshape(-1)[:8].tolist()}..."
        )
    return None


def _bitcast_view(lb: LoadedBackend, index: int, x: Any, out: Any) -> str | None:
    """``bitcast`` aliases ``x`` byte for byte (its elements need not map one to one)."""
    if not shares_storage(lb, out, x):
        return (
            "bitcast: property 'view shares storage with its base' broken: the result does not share "
            "its input's storage (a view kernel must not copy)"
        )
    be, assign = lb.backend, lb.k["assign"]
    shown = _host(lb, out)
    # Over a bool base only 0 and 1 bytes are bools (a strided read may normalise others).
    fill = (shown == 0).astype(shown.dtype) if _host(lb, x).dtype == np.bool_ else _other(shown)
    assign(out, be.from_numpy(fill.copy(), index))
    got = np.array(_host(lb, x), order="C").reshape(-1).view(fill.dtype).reshape(fill.shape)
    if not _same_bits(got, fill):
        return "bitcast: property 'a write through the view reaches the base' broken"
    new = _other(_host(lb, x))
    assign(x, be.from_numpy(new.copy(), index))
    want = np.array(new, order="C").reshape(-1).view(fill.dtype).reshape(fill.shape)
    if not _same_bits(_host(lb, out), want):
        return "bitcast: property 'the view sees writes to its base' broken"
    return None


def check_call(
    lb: LoadedBackend,
    op: str,
    index: int,
    call: tuple[list[Any], list[Any], Any],
    before: list[tuple[int, str, Any, np.ndarray]],
    dtypes: list[str],
    view_ref: Callable[..., Any] | None,
    rerun: Callable[[], Any],
) -> str | None:
    """The other properties of one call whose inputs stayed unchanged and whose values
    matched; the first broken one.

    ``call`` is (the sample's arguments, the device arguments, the result); ``view_ref``
    the NumPy view function for view ops (None otherwise)."""
    sample_args, args, out = call
    outs = _outputs(out)
    first = [_host(lb, o) for o in outs]
    msg = _types_and_dtypes(op, lb, outs, dtypes)
    if msg:
        return msg
    if ALL_OPS[op].kind == "view":
        if op == "bitcast":
            msg = _bitcast_view(lb, index, args[0], out)
        elif view_ref is not None:
            tags = _tags(view_ref, before[0][3].shape, args[1:])
            msg = _view(op, lb, index, sample_args[0], args[0], out, tags)
    elif op not in WRITES:
        msg = _no_alias(op, lb, outs, before) or _contiguous(op, lb, outs)
    return msg or _deterministic(op, lb, first, rerun)
