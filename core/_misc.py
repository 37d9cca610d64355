"""Small top-level helpers: type queries, broadcast_shapes, determinism switches."""

from __future__ import annotations

from typing import Any

from ember.backends import DType, registry
from ember.backends.dtypes import promote_types as _promote

from ._ops._common import broadcast_shape
from ._public import op, public
from ._tensor import Size, Tensor

PUBLIC = public(
    __name__,
    {
        "are_deterministic_algorithms_enabled": op(),
        "broadcast_shapes": op(),
        "get_num_threads": op(),
        "is_complex": op(),
        "is_deterministic_algorithms_warn_only_enabled": op(),
        "is_floating_point": op(),
        "is_tensor": op(),
        "numel": op(),
        "promote_types": op(),
        "set_num_threads": op(),
        "use_deterministic_algorithms": op(),
    },
)
__all__ = [*PUBLIC]


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


def numel(input: Tensor) -> int:
    return input.numel()


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape all ``shapes`` broadcast to: ``broadcast_shapes((2, 1), (3,)) == (2, 3)``."""
    out: tuple[int, ...] = ()
    for s in shapes:
        out = broadcast_shape(out, (s,) if isinstance(s, int) else tuple(s))
    return Size(out)


def promote_types(type1: DType, type2: DType) -> DType:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing category."""
    for pos, (name, t) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(t, DType):
            raise TypeError(
                f"promote_types(): argument '{name}' (position {pos}) must be ember.dtype, not {type(t).__name__}"
            )
    return _promote(type1, type2)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Run each kernel a backend declares nondeterministic through its registered
    deterministic variant; without one, raise PyTorch's error (``warn_only``: warn and run)."""
    if not isinstance(mode, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not {type(mode).__name__}"
        )
    registry.set_deterministic(mode, warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return registry.is_deterministic()


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return registry.is_deterministic_warn_only()


def _cpu() -> Any:
    try:
        return registry.get("cpu").backend
    except RuntimeError:
        return None  # ember without its CPU backend: nothing to configure


def set_num_threads(n: int) -> None:
    """Threads the CPU backend may use inside one large op (elementwise ops are split
    across them); PyTorch's intra-op setting. BLAS keeps its own thread count."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")  # noqa: TRY004 (PyTorch's type)
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    cpu = _cpu()
    if cpu is not None and hasattr(cpu, "set_num_threads"):
        cpu.set_num_threads(n)


def get_num_threads() -> int:
    """The CPU backend's intra-op thread count (default: ``OMP_NUM_THREADS`` or the CPUs
    this process may use)."""
    cpu = _cpu()
    return cpu.get_num_threads() if cpu is not None and hasattr(cpu, "get_num_threads") else 1
