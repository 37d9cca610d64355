"""The dtype value type and PyTorch's type-promotion lattice.

Lives in the contract because backends and the frontend both name dtypes; backends map
them to their own array library's types in their kernel tables.
"""

from __future__ import annotations

__all__ = [
    "ALL_DTYPES",
    "DTYPES_BY_NAME",
    "DType",
    "bfloat16",
    "bool_",
    "complex64",
    "complex128",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "promote_types",
    "to_complex",
    "to_real",
    "uint8",
]

# Category ranks used by promotion: a higher category always wins over a lower one.
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class DType:
    """A tensor element type, e.g. ``ember.float32``; compares by identity."""

    __slots__ = ("_bits", "category", "is_signed", "itemsize", "name")

    def __init__(self, name: str, itemsize: int, category: int, is_signed: bool) -> None:
        self.name = name
        self.itemsize = itemsize
        self.category = category
        self.is_signed = is_signed
        self._bits = itemsize * 8

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        return self.category == COMPLEX

    @property
    def bits(self) -> int:
        return self._bits

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self) -> str:
        # Pickles as the module-level singleton, so identity comparison survives save/load.
        return self.name if self.name != "bool" else "bool_"


bool_ = DType("bool", 1, BOOL, False)
uint8 = DType("uint8", 1, INT, False)
int8 = DType("int8", 1, INT, True)
int16 = DType("int16", 2, INT, True)
int32 = DType("int32", 4, INT, True)
int64 = DType("int64", 8, INT, True)
float16 = DType("float16", 2, FLOAT, True)
bfloat16 = DType("bfloat16", 2, FLOAT, True)
float32 = DType("float32", 4, FLOAT, True)
float64 = DType("float64", 8, FLOAT, True)
complex64 = DType("complex64", 8, COMPLEX, True)
complex128 = DType("complex128", 16, COMPLEX, True)

ALL_DTYPES: tuple[DType, ...] = (
    bool_,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
)
DTYPES_BY_NAME: dict[str, DType] = {d.name: d for d in ALL_DTYPES}

_SIGNED_BY_SIZE = {1: int8, 2: int16, 4: int32, 8: int64}
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
_REAL_OF = {complex64: float32, complex128: float64}


def to_complex(d: DType) -> DType:
    """The complex dtype whose parts have float dtype ``d``."""
    return _COMPLEX_OF.get(d, d)


def to_real(d: DType) -> DType:
    """The real dtype of a complex dtype's parts (identity for real dtypes)."""
    return _REAL_OF.get(d, d)


def _promote_uncached(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo is float64:
            return complex128
        return hi
    if a.category == INT:
        if a.is_signed == b.is_signed:
            return a if a.itemsize >= b.itemsize else b
        unsigned, signed = (a, b) if not a.is_signed else (b, a)
        return _SIGNED_BY_SIZE[min(8, max(signed.itemsize, unsigned.itemsize * 2))]
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a.itemsize >= b.itemsize else b


_PROMOTE: dict[tuple[DType, DType], DType] = {
    (a, b): _promote_uncached(a, b) for a in ALL_DTYPES for b in ALL_DTYPES
}


def promote_types(a: DType, b: DType) -> DType:
    """PyTorch's ``promote_types``: the smallest dtype both ``a`` and ``b`` convert to."""
    return _PROMOTE[a, b]
