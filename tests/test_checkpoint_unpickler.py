"""The weights-only unpickler: crafted pickles may give wrong data, never change ember itself.

Each crafted file is written with raw pickle opcodes (the bytes PyTorch's and ember's picklers
emit, rearranged the way an attacker would) into an otherwise valid checkpoint archive.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import subprocess
import sys
import zipfile

import ember
import ember.backends
import numpy as np
import pytest
from ember import nn
from ember import serialization as S
from ember._checkpoint_rebuild import default_globals

P = pickle  # opcode names: P.GLOBAL, P.BUILD, ...


def _s(text: str) -> bytes:
    raw = text.encode()
    return P.BINUNICODE + struct.pack("<I", len(raw)) + raw


def _g(module: str, name: str) -> bytes:
    return P.GLOBAL + f"{module}\n{name}\n".encode()


def _i(n: int) -> bytes:
    return P.BININT + struct.pack("<i", n)


def _storage(key: str, numel: int, kind: str = "FloatStorage") -> bytes:
    """A persistent storage record ``('storage', torch.<kind>, key, 'cpu', numel)``."""
    return (
        P.MARK + _s("storage") + _g("torch", kind) + _s(key) + _s("cpu") + _i(numel) + P.TUPLE + P.BINPERSID
    )


def _ints(values: tuple[int, ...]) -> bytes:
    return P.MARK + b"".join(_i(v) for v in values) + P.TUPLE


def _tensor(key: str, numel: int, offset: int, size: tuple, stride: tuple) -> bytes:
    """``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())``."""
    args = _storage(key, numel) + _i(offset) + _ints(size) + _ints(stride) + P.NEWFALSE
    args += _g("collections", "OrderedDict") + P.EMPTY_TUPLE + P.REDUCE
    return _g("torch._utils", "_rebuild_tensor_v2") + P.MARK + args + P.TUPLE + P.REDUCE


def _archive(pkl: bytes, storages: dict[str, bytes] | None = None, stop: bytes = P.STOP) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", P.PROTO + b"\x02" + pkl + stop)
        z.writestr("archive/version", "3\n")
        for key, data in (storages or {}).items():
            z.writestr(f"archive/data/{key}", data)
    buf.seek(0)
    return buf


def _state(obj: object) -> dict:
    """Everything a BUILD/SETITEMS could change on ``obj``: its attributes, slots and defaults."""
    state: dict = {}
    if hasattr(obj, "__dict__"):
        state["__dict__"] = dict(vars(obj))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot != "__weakref__" and hasattr(obj, slot):
                state[slot] = getattr(obj, slot)
    for name in ("__defaults__", "__kwdefaults__", "__code__"):
        if hasattr(obj, name):
            state[name] = getattr(obj, name)
    return state


def _snapshot() -> dict:
    objects = {
        "ember": ember,
        "backends": ember.backends,
        "Size": ember.Size,
        "device": ember.device,
        "Tensor": ember.Tensor,
        "Parameter": nn.Parameter,
        "OrderedDict": collections.OrderedDict,
    }
    for name, dt in ember.backends.DTYPES_BY_NAME.items():
        objects[f"dtype.{name}"] = dt
    table, callables = default_globals()
    for name, obj in table.items():
        objects[f"allowlisted {name}"] = obj
    for func in callables:
        objects[f"callable {func!r}"] = func
    return {name: _state(obj) for name, obj in objects.items()}


def _build(target: bytes, attrs: dict[str, bytes]) -> bytes:
    """``target`` then BUILD with ``(None, {attr: value})``: the slot-state form sets any attribute."""
    items = b"".join(_s(k) + v for k, v in attrs.items())
    return target + P.NONE + P.EMPTY_DICT + P.MARK + items + P.SETITEMS + P.TUPLE2 + P.BUILD


ATTACKS = {
    "float32 becomes int64": _build(_g("torch", "float32"), {"name": _s("int64"), "itemsize": _i(8)}),
    "Size class attribute": _build(_g("torch", "Size"), {"__len__": _g("torch", "Size")}),
    "device class attribute": _build(_g("torch", "device"), {"type": _s("cuda")}),
    "rebuild function defaults": _build(
        _g("torch._utils", "_rebuild_tensor_v2"), {"__defaults__": P.MARK + P.NEWTRUE + P.TUPLE}
    ),
    "rebuild function dict": _g("torch._utils", "_rebuild_tensor_v2") + P.EMPTY_DICT + P.BUILD,
    "setitem on a class": _g("collections", "OrderedDict") + _s("k") + _i(1) + P.SETITEM,
    "setitems on a dtype": _g("torch", "float32") + P.MARK + _s("k") + _i(1) + P.SETITEMS,
    "append to a class": _g("torch", "Size") + _i(1) + P.APPEND,
    "appends to a function": _g("torch._utils", "_rebuild_parameter") + P.MARK + _i(1) + P.APPENDS,
    "tensor claims a smaller shape": _build(
        _tensor("0", 4, 0, (4,), (1,)), {"_shape": P.MARK + _i(1) + P.TUPLE}
    ),
    "newobj of a Tensor": _g("torch", "Tensor") + P.EMPTY_TUPLE + P.NEWOBJ,
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_crafted_build_and_setitems_change_nothing(name: str) -> None:
    before = _snapshot()
    f = _archive(ATTACKS[name], {"0": np.arange(4, dtype=np.float32).tobytes()})
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*<file object>.*"):
        ember.load(f)
    assert _snapshot() == before
    assert ember.float32.name == "float32" and ember.ones(3).sum().dtype == ember.float32
    assert (
        ember.load(_archive(_tensor("0", 4, 0, (4,), (1,)), {"0": np.ones(4, np.float32).tobytes()})).tolist()
        == [1.0] * 4
    )


def test_build_refusal_names_the_type_and_the_file(tmp_path) -> None:
    path = tmp_path / "evil.pt"
    path.write_bytes(_archive(ATTACKS["float32 becomes int64"]).getvalue())
    with pytest.raises(pickle.UnpicklingError) as info:
        ember.load(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`" in msg
    assert "weights_only" in msg


@pytest.mark.parametrize(
    ("pkl", "refused"),
    [
        (_g("__builtin__", "frozenset") + P.MARK + P.EMPTY_LIST + P.TUPLE + P.REDUCE, "GLOBAL frozenset"),
        (_g("__builtin__", "range") + P.MARK + _i(10**9) + P.TUPLE + P.REDUCE, "GLOBAL range"),
        (_g("builtins", "slice") + P.MARK + _i(1) + P.TUPLE + P.REDUCE, "GLOBAL slice"),
        (_g("torch", "Tensor") + P.MARK + _i(10**9) + P.TUPLE + P.REDUCE, "reduce for unrecognized function"),
        (_g("__builtin__", "bytearray") + P.MARK + _i(10**9) + P.TUPLE + P.REDUCE, "bytearray"),
        (_g("torch", "float32") + P.EMPTY_TUPLE + P.REDUCE, "reduce for unrecognized function"),
    ],
)
def test_allowlist_refuses_what_pytorch_refuses_or_what_allocates(pkl: bytes, refused: str) -> None:
    with pytest.raises(pickle.UnpicklingError, match=refused):
        ember.load(_archive(pkl))


def test_allowed_builds_still_work() -> None:
    """State dicts carry ``_metadata`` set by BUILD on a fresh OrderedDict, as PyTorch writes them."""
    od = _g("collections", "OrderedDict") + P.EMPTY_TUPLE + P.REDUCE
    meta = P.EMPTY_DICT + _s("_metadata") + P.EMPTY_DICT + P.SETITEM + P.BUILD
    out = ember.load(_archive(od + _s("w") + _i(3) + P.SETITEM + meta))
    assert isinstance(out, collections.OrderedDict) and out == {"w": 3} and out._metadata == {}
    built = (
        _g("__builtin__", "set")
        + P.MARK
        + P.EMPTY_LIST
        + P.MARK
        + _i(1)
        + _i(2)
        + P.APPENDS
        + P.TUPLE
        + P.REDUCE
    )
    assert ember.load(_archive(built)) == {1, 2}
    enc = _g("_codecs", "encode") + P.MARK + _s("\xff") + _s("latin1") + P.TUPLE + P.REDUCE
    assert ember.load(_archive(enc)) == b"\xff"


class _Point:
    def __init__(self, x: int) -> None:
        self.x = x


def test_user_allowlisted_class_is_built_only_as_a_new_instance() -> None:
    new = (
        _g(__name__, "_Point")
        + P.EMPTY_TUPLE
        + P.NEWOBJ
        + P.EMPTY_DICT
        + _s("x")
        + _i(5)
        + P.SETITEM
        + P.BUILD
    )
    with S.safe_globals([_Point]):
        assert ember.load(_archive(new)).x == 5
        with pytest.raises(pickle.UnpicklingError, match="Can only build"):
            ember.load(
                _archive(_g(__name__, "_Point") + P.EMPTY_DICT + _s("x") + _i(5) + P.SETITEM + P.BUILD)
            )
    assert not hasattr(_Point, "x")


def test_weights_only_false_still_loads_anything() -> None:
    pkl = _g("__builtin__", "range") + P.MARK + _i(3) + P.TUPLE + P.REDUCE
    assert ember.load(_archive(pkl), weights_only=False) == range(3)


@pytest.mark.parametrize(
    ("pkl", "what"),
    [
        (b"", "stack underflow"),
        (P.SETITEM, "stack underflow"),
        (P.BINGET + b"\x07", "memo key 7"),
        (b"\xff", "unsupported opcode"),
        (P.EMPTY_DICT + P.EMPTY_LIST + _i(1) + P.SETITEM, "unhashable"),
        (_s("x") + P.BINPERSID, "persistent id"),
    ],
)
def test_malformed_pickles_raise_unpickling_error(pkl: bytes, what: str) -> None:
    with pytest.raises(pickle.UnpicklingError, match=what):
        ember.load(_archive(pkl))


@pytest.mark.parametrize("pkl", [b"", P.MARK + _i(1), _s("abc")[:-1], P.BININT[:1] + b"\x01"])
def test_truncated_pickles_raise_unpickling_error(pkl: bytes) -> None:
    with pytest.raises(pickle.UnpicklingError, match="pickle data was truncated"):
        ember.load(_archive(pkl, stop=b""))


# -- work and memory bounded by the file's size ------------------------------------------------
DEEP_TUPLE = r"""
import io, pickle, sys, zipfile
import ember
pkl = b"\x80\x02}" + b")" + b"\x85" * 10**6 + b"K\x01s."  # {((((...)))): 1}, a million tuples deep
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    z.writestr("a/data.pkl", pkl)
buf.seek(0)
try:
    ember.load(buf)
except pickle.UnpicklingError as e:
    print(str(e).rsplit(": ", 1)[-1][:60])
"""


def test_deeply_nested_tuples_are_refused_not_a_crash() -> None:
    """Hashing a million-deep tuple overflows C's stack (a segfault); the loader refuses first."""
    done = subprocess.run(
        [sys.executable, "-c", DEEP_TUPLE], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert "tuples nested 1001 deep (the limit is 1000)" in done.stdout


def test_tuples_sharing_halves_cannot_make_hashing_exponential() -> None:
    """t(k+1) = (t(k), t(k)): 70 levels are 2**70 leaves to hash, from 300 bytes."""
    pkl = P.EMPTY_DICT + P.MARK + P.EMPTY_TUPLE + P.BINPUT + b"\x00"
    for _ in range(70):
        pkl += P.BINGET + b"\x00" + P.BINGET + b"\x00" + P.TUPLE2 + P.BINPUT + b"\x00"
    pkl += P.TUPLE + _i(1) + P.SETITEM  # {(t0, t1, ..., t70): 1}
    assert len(pkl) < 1000
    with pytest.raises(pickle.UnpicklingError, match="more work than 64 units per byte"):
        ember.load(_archive(pkl))


def test_repeated_copies_of_a_large_argument_are_bounded() -> None:
    """One 1 MB string encoded 100,000 times would be 100 GB of bytes objects from a 1.5 MB file."""
    args = P.MARK + _s("x" * 2**20) + _s("latin1") + P.TUPLE + P.BINPUT + b"\x01"
    func = _g("_codecs", "encode") + P.BINPUT + b"\x00"
    call = P.BINGET + b"\x00" + P.BINGET + b"\x01" + P.REDUCE
    pkl = P.EMPTY_LIST + func + args + P.REDUCE + P.APPEND + (call + P.APPEND) * 100_000
    with pytest.raises(pickle.UnpicklingError, match=r"calling _codecs.encode|calling .*_encode"):
        ember.load(_archive(pkl))
