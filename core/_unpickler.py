"""The weights-only unpickler: a pickle opcode interpreter that builds data and nothing else.

Threat model (what ``ember.load(f)`` with ``weights_only=True``, the default, promises about a
malicious file ``f``):

- It cannot run code: the only callables reachable are the allowlist below (tensor rebuild
  functions, ``OrderedDict``, ``Counter``, ``set``, ``complex``, ``Size``, ``device``,
  ``_codecs.encode``, a ``bytearray`` that refuses sizes) plus what the user allowlisted with
  ``add_safe_globals``. ``range``, ``frozenset``, ``slice``, ``Tensor(n)`` and anything else are
  refused, as PyTorch refuses them.
- It cannot change any object outside what it returns: the mutating opcodes (BUILD, SETITEM(S),
  APPEND(S)) act only on objects this unpickler itself created during this load (an empty
  list/dict/set, a new ``OrderedDict``/``Counter``, a new instance of a user-allowlisted class),
  never on a global it looked up (a dtype, ``Size``, ``device``, a rebuild function) nor on a
  tensor (ember tensors carry no Python state). The memo and stack are private to the load.
- It cannot allocate more than its declared tensors need: every object is built from bytes
  that are in the file; storages are read with their declared size checked against the
  archive entry first (see ``_checkpoint_zip``), and views stay views.
- It can give you wrong numbers, shapes and names: the file is data, and data can lie.

Every refusal is ``pickle.UnpicklingError`` naming the file, what was refused and the way out
(PyTorch's wording); a malformed pickle stream is ``pickle.UnpicklingError`` too.
"""

from __future__ import annotations

import _compat_pickle
import collections
import pickle
import struct
from collections.abc import Callable
from typing import Any

from ._safe_globals import (
    Malformed,
    Refused,
    brief,
    set_state,
    unsafe_hint,
    unsupported_global,
    user_globals,
)

__all__ = ["WeightsUnpickler"]

# -- the interpreter -------------------------------------------------------------------------
_MUTABLE_CONTAINERS = (dict, collections.OrderedDict, collections.Counter)
_MAX_GLOBAL_LINE = 1024
# Tuples nested deeper than this would overflow C's stack when hashed (Python's tuple hash
# recurses without a guard: a 1 MB pickle of nested TUPLE1s kills the process).
_MAX_TUPLE_DEPTH = 1000
# Work units a load may spend per byte of pickle on copying arguments and hashing keys: bounds
# quadratic and exponential inputs (one big string encoded 10**5 times, tuples sharing halves).
_WORK_PER_BYTE = 64


class WeightsUnpickler:
    """Runs a pickle's opcodes with an allowlist; ``load()`` returns the data or raises.

    ``table`` maps ``"module.name"`` to what GLOBAL pushes; ``callables`` are the entries of
    ``table`` that REDUCE may call and NEWOBJ may instantiate (identity, never equality);
    ``persistent_load(pid)`` turns a storage record into a storage.
    """

    def __init__(
        self,
        data: bytes,
        label: str,
        table: dict[str, Any],
        callables: list[Any],
        persistent_load: Callable[[Any], Any],
    ) -> None:
        self._data, self._pos, self._label = memoryview(data), 0, label
        self._table, self._persistent_load = table, persistent_load
        self._users = dict(user_globals())
        self._callable_ids = {id(c) for c in callables} | {id(u) for u in self._users.values()}
        self._user_class_ids = {id(u) for u in self._users.values() if isinstance(u, type)}
        self._made: dict[int, Any] = {}  # objects this load created: the only ones it may mutate
        self._memo: dict[int, Any] = {}
        self._stack: list[Any] = []
        self._marks: list[list[Any]] = []
        # id -> (tuple, nesting depth, size with shared parts counted again); holds the tuple so ids stay unique
        self._tuples: dict[int, tuple[tuple, int, int]] = {}
        self._work_left = _WORK_PER_BYTE * len(data) + (1 << 20)

    def load(self) -> Any:
        try:
            return self._run()
        except Refused as e:
            raise pickle.UnpicklingError(unsafe_hint(self._label) + str(e)) from None
        except pickle.UnpicklingError as e:  # from a rebuild function, which does not know the file
            if self._label in str(e):
                raise
            raise pickle.UnpicklingError(f"ember.load: {self._label}: {e}") from None
        except Malformed as e:
            raise pickle.UnpicklingError(f"ember.load: {self._label}: malformed data.pkl: {e}") from None
        except (
            TypeError,
            ValueError,
            KeyError,
            IndexError,
            OverflowError,
            AttributeError,
            RecursionError,
            struct.error,
        ) as e:
            raise pickle.UnpicklingError(
                f"ember.load: {self._label}: malformed data.pkl: {type(e).__name__}: {e}"
            ) from None

    # -- reading the stream ------------------------------------------------------------------
    def _read(self, n: int) -> memoryview:
        end = self._pos + n
        if end > len(self._data):
            raise Malformed("pickle data was truncated")
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def _line(self) -> str:
        rest = self._data[self._pos : self._pos + _MAX_GLOBAL_LINE]
        end = bytes(rest).find(b"\n")
        if end < 0:
            raise Malformed("pickle data was truncated (a GLOBAL name without its newline)")
        self._pos += end + 1
        return bytes(rest[:end]).decode("utf-8")

    def _run(self) -> Any:
        ops = _OPS
        while True:
            op = self._read(1)[0]
            handler = ops.get(op)
            if handler is None:
                raise Malformed(f"unsupported opcode {bytes([op])!r} at byte {self._pos - 1}")
            if handler is _stop:
                return self._pop()
            handler(self)

    # -- the stack ---------------------------------------------------------------------------
    def _pop(self) -> Any:
        if not self._stack:
            raise Malformed(f"stack underflow at byte {self._pos - 1}")
        return self._stack.pop()

    def _top(self) -> Any:
        if not self._stack:
            raise Malformed(f"stack underflow at byte {self._pos - 1}")
        return self._stack[-1]

    def _pop_mark(self) -> list[Any]:
        if not self._marks:
            raise Malformed(f"no MARK before byte {self._pos - 1}")
        items, self._stack = self._stack, self._marks.pop()
        return items

    # -- bounding the work -------------------------------------------------------------------
    def tuple_made(self, items: tuple) -> tuple:
        """Record ``items``'s nesting depth and expanded size (its tree size, shared parts counted again)."""
        depth, size = 1, 1
        for x in items:
            if isinstance(x, tuple):
                _, d, n = self._weigh(x)
                depth, size = max(depth, d + 1), size + n
            else:
                size += 1
        if depth > _MAX_TUPLE_DEPTH:
            raise Refused(f"tuples nested {depth} deep (the limit is {_MAX_TUPLE_DEPTH})")
        self._tuples[id(items)] = (items, depth, size)
        return items

    def _weigh(self, t: tuple) -> tuple[tuple, int, int]:
        known = self._tuples.get(id(t))
        if known is not None and known[0] is t:
            return known
        self.tuple_made(t)  # a tuple an allowlisted callable returned
        return self._tuples[id(t)]

    def cost(self, obj: Any) -> int:
        """Work to copy ``obj`` shallowly and hash what it holds."""
        if isinstance(obj, tuple):
            return self._weigh(obj)[2]
        if isinstance(obj, (list, set)):
            return 1 + len(obj) + sum(self._weigh(x)[2] for x in obj if isinstance(x, tuple))
        if isinstance(obj, (str, bytes, bytearray, dict)):
            return 1 + len(obj)
        return 1

    def charge(self, units: int, what: str) -> None:
        self._work_left -= units
        if self._work_left < 0:
            raise Refused(
                f"{what}: the pickle asks for more work than {_WORK_PER_BYTE} units per byte of its "
                f"{len(self._data)} bytes (repeated copies of large arguments or hashing of shared tuples)"
            )

    def _make(self, obj: Any) -> Any:
        self._made[id(obj)] = obj
        return obj

    def _owned(self, obj: Any, kinds: tuple[type, ...]) -> bool:
        return type(obj) in kinds and self._made.get(id(obj)) is obj

    # -- globals and calls -------------------------------------------------------------------
    def global_(self, module: str, name: str) -> Any:
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        if full in self._table:
            return self._table[full]
        if full in self._users:
            return self._users[full]
        raise Refused(unsupported_global(full))

    def call(self, func: Any, args: Any) -> Any:
        if id(func) not in self._callable_ids:
            raise Refused(f"Trying to call reduce for unrecognized function {brief(func)}")
        if type(args) is not tuple:
            raise Malformed(f"REDUCE arguments are a {type(args).__name__}, not a tuple")
        self.charge(1 + sum(self.cost(a) for a in args), f"calling {brief(func)}")
        result = func(*args)
        if isinstance(result, tuple):
            self.tuple_made(result)
        if isinstance(func, type) and (func in _MUTABLE_CONTAINERS or id(func) in self._user_class_ids):
            self._make(result)
        return result

    def new(self, cls: Any, args: Any) -> Any:
        if type(args) is not tuple:
            raise Malformed(f"NEWOBJ arguments are a {type(args).__name__}, not a tuple")
        if cls is self._table.get("torch.nn.parameter.Parameter"):
            return cls(*args)  # type: ignore[misc]
        if id(cls) not in self._user_class_ids:
            raise Refused(
                "Can only create new object for nn.Parameter or classes allowlisted via `add_safe_globals` "
                f"but got {brief(cls)}"
            )
        self.charge(1 + sum(self.cost(a) for a in args), f"creating {brief(cls)}")
        return self._make(cls.__new__(cls, *args))

    def build(self, inst: Any, state: Any) -> None:
        made = self._made.get(id(inst)) is inst
        if made and type(inst) is collections.OrderedDict and type(state) is dict:
            inst.__dict__.update(state)
        elif made and id(type(inst)) in self._user_class_ids:
            set_state(inst, state)
        else:
            raise Refused(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, "
                f"but got {type(inst)!r}{'' if made else ' that this load did not create'}"
            )


# -- opcode handlers -------------------------------------------------------------------------
def _stop(u: WeightsUnpickler) -> None:  # handled in _run; here to mark the opcode as known
    raise AssertionError


def _push(value: Any) -> Callable[[WeightsUnpickler], None]:
    return lambda u: u._stack.append(value)


def _empty(kind: type) -> Callable[[WeightsUnpickler], None]:
    return lambda u: u._stack.append(u._make(kind()))


def _proto(u: WeightsUnpickler) -> None:
    u._read(1)


def _global(u: WeightsUnpickler) -> None:
    module = u._line()
    found = u.global_(module, u._line())
    u._stack.append(found)


def _reduce(u: WeightsUnpickler) -> None:
    args = u._pop()
    result = u.call(u._pop(), args)
    u._stack.append(result)


def _newobj(u: WeightsUnpickler) -> None:
    args = u._pop()
    result = u.new(u._pop(), args)
    u._stack.append(result)


def _build(u: WeightsUnpickler) -> None:
    state = u._pop()
    u.build(u._top(), state)


def _mark(u: WeightsUnpickler) -> None:
    u._marks.append(u._stack)
    u._stack = []


def _tuple(u: WeightsUnpickler) -> None:
    items = u.tuple_made(tuple(u._pop_mark()))  # before naming u._stack: popping the mark replaces it
    u._stack.append(items)


def _tuple_n(n: int) -> Callable[[WeightsUnpickler], None]:
    def handler(u: WeightsUnpickler) -> None:
        if len(u._stack) < n:
            raise Malformed(f"stack underflow at byte {u._pos - 1}")
        items = u.tuple_made(tuple(u._stack[-n:]))
        del u._stack[-n:]
        u._stack.append(items)

    return handler


def _append(u: WeightsUnpickler) -> None:
    item = u._pop()
    _extend(u, u._top(), [item])


def _appends(u: WeightsUnpickler) -> None:
    items = u._pop_mark()
    _extend(u, u._top(), items)


def _extend(u: WeightsUnpickler, target: Any, items: list[Any]) -> None:
    if not u._owned(target, (list,)):
        raise Refused(f"Can only append to lists, but got {type(target)!r}")
    target.extend(items)


def _setitem(u: WeightsUnpickler) -> None:
    value = u._pop()
    key = u._pop()
    _set_items(u, u._top(), [key, value])


def _setitems(u: WeightsUnpickler) -> None:
    items = u._pop_mark()
    _set_items(u, u._top(), items)


def _set_items(u: WeightsUnpickler, target: Any, items: list[Any]) -> None:
    if not u._owned(target, _MUTABLE_CONTAINERS):
        raise Refused(
            f"Can only SETITEMS for dict, collections.OrderedDict, collections.Counter, but got {type(target)!r}"
        )
    if len(items) % 2:
        raise Malformed("SETITEMS with an odd number of items")
    u.charge(sum(u.cost(k) for k in items[::2]), "hashing dict keys")
    for i in range(0, len(items), 2):
        try:
            target[items[i]] = items[i + 1]
        except TypeError as e:
            raise Malformed(f"dict key {type(items[i]).__name__}: {e}") from None


def _persid(u: WeightsUnpickler) -> None:
    pid = u._pop()
    if type(pid) is not tuple or not pid or pid[0] != "storage":
        raise Refused(f"Only persistent_load of storage is allowed, but got persistent id {brief(pid)}")
    storage = u._persistent_load(pid)
    u._stack.append(storage)


def _get(width: str) -> Callable[[WeightsUnpickler], None]:
    size = struct.calcsize(width)

    def handler(u: WeightsUnpickler) -> None:
        (i,) = struct.unpack(width, u._read(size))
        if i not in u._memo:
            raise Malformed(f"memo key {i} was never stored")
        u._stack.append(u._memo[i])

    return handler


def _put(width: str) -> Callable[[WeightsUnpickler], None]:
    size = struct.calcsize(width)

    def handler(u: WeightsUnpickler) -> None:
        (i,) = struct.unpack(width, u._read(size))
        u._memo[i] = u._top()

    return handler


def _number(fmt: str) -> Callable[[WeightsUnpickler], None]:
    size = struct.calcsize(fmt)
    return lambda u: u._stack.append(struct.unpack(fmt, u._read(size))[0])


def _long1(u: WeightsUnpickler) -> None:
    n = u._read(1)[0]
    u._stack.append(int.from_bytes(u._read(n), "little", signed=True))


def _binunicode(u: WeightsUnpickler) -> None:
    (n,) = struct.unpack("<I", u._read(4))
    u._stack.append(str(u._read(n), "utf-8", "surrogatepass"))


def _short_binstring(u: WeightsUnpickler) -> None:
    n = u._read(1)[0]
    u._stack.append(str(u._read(n), "utf-8", "strict"))


P = pickle
_OPS: dict[int, Callable[[WeightsUnpickler], None]] = {
    P.PROTO[0]: _proto,
    P.STOP[0]: _stop,
    P.GLOBAL[0]: _global,
    P.REDUCE[0]: _reduce,
    P.NEWOBJ[0]: _newobj,
    P.BUILD[0]: _build,
    P.MARK[0]: _mark,
    P.TUPLE[0]: _tuple,
    P.TUPLE1[0]: _tuple_n(1),
    P.TUPLE2[0]: _tuple_n(2),
    P.TUPLE3[0]: _tuple_n(3),
    P.APPEND[0]: _append,
    P.APPENDS[0]: _appends,
    P.SETITEM[0]: _setitem,
    P.SETITEMS[0]: _setitems,
    P.NONE[0]: _push(None),
    P.NEWTRUE[0]: _push(True),
    P.NEWFALSE[0]: _push(False),
    P.EMPTY_TUPLE[0]: _push(()),
    P.EMPTY_LIST[0]: _empty(list),
    P.EMPTY_DICT[0]: _empty(dict),
    P.EMPTY_SET[0]: _empty(set),
    P.BININT[0]: _number("<i"),
    P.BININT1[0]: _number("<B"),
    P.BININT2[0]: _number("<H"),
    P.BINFLOAT[0]: _number(">d"),
    P.LONG1[0]: _long1,
    P.BINUNICODE[0]: _binunicode,
    P.SHORT_BINSTRING[0]: _short_binstring,
    P.BINPERSID[0]: _persid,
    P.BINGET[0]: _get("<B"),
    P.LONG_BINGET[0]: _get("<I"),
    P.BINPUT[0]: _put("<B"),
    P.LONG_BINPUT[0]: _put("<I"),
}
