"""The Backend object: an allocator and host transfer for ``MinArray``s (one device)."""

from __future__ import annotations

import numpy as np
from ember.backends import ALL_DTYPES, CONTRACT_VERSION, DType, UnsupportedDTypeError

__all__ = ["DTYPES", "MinArray", "MinimalBackend", "np_dtype"]

# Everything but bfloat16, which NumPy lacks without ml_dtypes: a backend declares what it has.
DTYPES = frozenset(d for d in ALL_DTYPES if d.name != "bfloat16")
_NP = {d: np.dtype(d.name) for d in DTYPES}
_BY_NP = {v: k for k, v in _NP.items()}


class MinArray:
    """A device array: a NumPy array (possibly a view) in a wrapper of our own."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __repr__(self) -> str:
        return f"MinArray({self.a!r})"


def np_dtype(d: DType) -> np.dtype:
    """NumPy's dtype for ``d``; refuses dtypes this backend does not declare."""
    try:
        return _NP[d]
    except KeyError:
        raise UnsupportedDTypeError(
            f"backend 'minimal' has no {d.name} (supported: {', '.join(sorted(x.name for x in DTYPES))})"
        ) from None


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class MinimalBackend:
    name = "minimal"
    version = "0.1.0"
    contract_version = CONTRACT_VERSION
    dtypes = DTYPES
    contiguous_only = False  # NumPy handles strided views; set True to receive only dense arrays
    nondeterministic: frozenset[str] = frozenset()
    array_type = MinArray
    # Optional: an accelerator (ember.accelerator may pick it), but of low priority, so a real
    # device (OpenCL, CUDA: priority 0 or more) wins when one is installed too.
    is_accelerator = True
    accelerator_priority = -100

    def unavailable_reason(self) -> str | None:
        return None  # real hardware backends say why not here ("no CUDA driver")

    def device_count(self) -> int:
        return 1

    def device_name(self, index: int) -> str:
        return "NumPy (minimal example backend)"

    def synchronize(self, index: int) -> None:
        return None

    def empty(self, shape: tuple[int, ...], dtype: DType, index: int) -> MinArray:
        return MinArray(np.empty(shape, np_dtype(dtype)))

    def from_numpy(self, array: np.ndarray, index: int) -> MinArray:
        if array.dtype not in _BY_NP:
            raise UnsupportedDTypeError(f"backend 'minimal' cannot hold NumPy dtype {array.dtype}")
        return MinArray(np.array(array, copy=True))

    def to_numpy(self, x: MinArray) -> np.ndarray:
        return x.a

    def layout(self, x: MinArray) -> tuple[tuple[int, ...], int]:
        size = x.a.itemsize
        offset = x.a.__array_interface__["data"][0] - _root(x.a).__array_interface__["data"][0]
        return tuple(s // size for s in x.a.strides), offset // size

    def index_of(self, x: MinArray) -> int:
        return 0

    def storage_id(self, x: MinArray) -> int:
        return id(_root(x.a))
