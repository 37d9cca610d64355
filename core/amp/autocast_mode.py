"""``ember.autocast``: PyTorch's autocast regions over ember's marked ops.

Entering a region sets the device type's state and installs ``_hook`` on the seam
(``ember._autocast_hook``); each marked op on a tensor of that device type then casts its
floating arguments as ``policy.py`` says (ordinary differentiable ``to`` calls, so backward runs
in the dtypes forward chose and gradients reach float32 leaves as float32) and runs with
autocast off, as PyTorch's kernels run with the autocast key excluded.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _autocast_hook as seam
from .._tensor import Tensor
from ..backends import registry
from ..backends.dtypes import FLOAT, DType, bfloat16, float16, float32, float64
from .policy import COMPOSITE, FLOAT32, LOWER, PROMOTE, policy_for

__all__ = [
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])

_LOW = (bfloat16, float16)


class _State(threading.local):
    """Autocast state is per thread, as PyTorch's (and as ember's grad mode)."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, DType] = {}
        self.cache_enabled = True
        self.nesting = 0
        # (id(weight), dtype) -> (weight, its cast): the weight is held so its id stays unique.
        self.cache: dict[tuple[int, DType], tuple[Tensor, Tensor]] = {}
        self.excluded = False  # inside a policy op: its inner ops see no autocast


_tls = _State()
# Threads with a device type's autocast on: the seam's hook is installed while any is.
_threads_on: set[int] = set()
_lock = threading.Lock()


def _known(device_type: str) -> bool:
    return device_type == "cuda" or device_type in registry._discover() or device_type in registry._loaded


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` names a device ember knows (its backend need not be usable)."""
    return _known(device_type)


def _check_device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004 - PyTorch raises ValueError
    if not _known(device_type):
        known = ", ".join(sorted({"cpu", "cuda", *registry._discover(), *registry._loaded}))
        raise RuntimeError(f"Expected one of {known} device type at start of device string: {device_type}")
    return device_type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Autocast state of ``device_type``; with no argument, of ``cuda`` (PyTorch's default)."""
    return _tls.enabled.get("cuda" if device_type is None else _check_device_type(device_type), False)


def set_autocast_enabled(*args: Any) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or the old ``set_autocast_enabled(enabled)``
    for ``cuda``."""
    device_type, enabled = ("cuda", args[0]) if len(args) == 1 else args
    _tls.enabled[_check_device_type(device_type)] = bool(enabled)
    _install()


def get_autocast_dtype(device_type: str) -> DType:
    """The lower dtype of ``device_type``'s regions: bfloat16 on ``cpu``, float16 elsewhere."""
    dev = _check_device_type(device_type)
    return _tls.dtype.get(dev, bfloat16 if dev == "cpu" else float16)


def set_autocast_dtype(device_type: str, dtype: DType) -> None:
    _tls.dtype[_check_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return _tls.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _tls.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _tls.cache.clear()


def autocast_increment_nesting() -> int:
    _tls.nesting += 1
    return _tls.nesting


def autocast_decrement_nesting() -> int:
    _tls.nesting -= 1
    return _tls.nesting


def _install() -> None:
    tid = threading.get_ident()
    with _lock:
        if any(_tls.enabled.values()):
            _threads_on.add(tid)
        else:
            _threads_on.discard(tid)
        seam.set_hook(_hook if _threads_on else None)


def _supported(device_type: str) -> list[DType]:
    """The lower dtypes the backend of ``device_type`` declares (both when it is unknown)."""
    lb = registry._loaded.get(device_type)
    if lb is None:
        return list(_LOW)
    return [d for d in _LOW if d in lb.backend.dtypes]


def _usable(device_type: str) -> bool:
    if device_type == "cpu":
        return True
    try:
        registry.get(device_type)
    except Exception:  # noqa: BLE001 - any load failure means the device is unusable
        return False
    return True


class autocast:
    """A region (context manager or decorator) in which marked ops run in mixed precision."""

    def __init__(
        self,
        device_type: str,
        dtype: DType | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        dev = self.device.upper()
        if enabled and not _usable(self.device):
            if self.device == "cuda":
                msg = "CUDA is not available. Disabling autocast."
            else:
                msg = f"User provided device_type of '{self.device}', but {dev} is not available. Disabling"
            warnings.warn(msg, stacklevel=2)
            enabled = False
        supported = _supported(self.device)
        if enabled and self.fast_dtype not in supported:
            names = ", ".join(f"ember.{d.name}" for d in supported)
            warnings.warn(
                f"In {dev} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{dev} Autocast only supports dtypes of {names} currently.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> None:
        dev = self.device
        self.prev = _tls.enabled.get(dev, False)
        self.prev_fastdtype = get_autocast_dtype(dev)
        self.prev_cache_enabled = is_autocast_cache_enabled()
        _tls.enabled[dev] = self._enabled
        _tls.dtype[dev] = self.fast_dtype
        set_autocast_cache_enabled(self._cache_enabled)
        autocast_increment_nesting()
        _install()

    def __exit__(self, *exc: object) -> None:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        _tls.enabled[self.device] = self.prev
        _tls.dtype[self.device] = self.prev_fastdtype
        set_autocast_cache_enabled(self.prev_cache_enabled)
        _install()

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorated  # type: ignore[return-value]


def _first_device_type(x: Any) -> str | None:
    if isinstance(x, Tensor):
        return x._device.type
    if isinstance(x, (list, tuple)):
        for a in x:
            d = _first_device_type(a)
            if d is not None:
                return d
    return None


def _eligible(t: Any, device_type: str) -> bool:
    """PyTorch's ``is_eligible``: a floating tensor, not float64, on the region's device type."""
    if not isinstance(t, Tensor):
        return False
    d = t.dtype
    return d.category == FLOAT and d is not float64 and t._device.type == device_type


def _widest(x: Any, device_type: str, current: DType) -> DType:
    """PyTorch's ``prioritize``: float32 wins over the lower dtypes; float64 is ignored."""
    if isinstance(x, (list, tuple)):
        for a in x:
            current = _widest(a, device_type, current)
        return current
    if not _eligible(x, device_type) or x.dtype is current:
        return current
    return float32


def _cast(x: Any, dtype: DType, device_type: str) -> Any:
    """``x`` (or each tensor in a list/tuple) cast to ``dtype`` where eligible; ``x`` itself
    when nothing changes (the common case costs no new container)."""
    if isinstance(x, (list, tuple)):
        out = None
        for i, a in enumerate(x):
            c = _cast(a, dtype, device_type)
            if c is not a:
                if out is None:
                    out = list(x)
                out[i] = c
        return x if out is None else type(x)(out)
    if x.__class__ is not Tensor and not isinstance(x, Tensor):
        return x
    d = x.dtype
    if d is dtype or d.category != FLOAT or d is float64 or x._device.type != device_type:
        return x
    st = _tls
    if (
        st.cache_enabled
        and d is float32
        and x.requires_grad
        and x.is_leaf
        and dtype is st.dtype.get(device_type)
    ):
        key = (id(x), dtype)
        hit = st.cache.get(key)
        if hit is None:
            hit = st.cache[key] = (x, x.to(dtype))
        return hit[1]
    return x.to(dtype)


def _hook(name: str, fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    st = _tls
    if st.excluded:
        return fn(*args, **kwargs)
    dev = _first_device_type(args) or _first_device_type(tuple(kwargs.values()))
    if dev is None or not st.enabled.get(dev, False):
        return fn(*args, **kwargs)
    kind = policy_for(dev).get(name)
    if kind is None:  # PyTorch runs it untouched: its kernel's inner ops, or a composite's, see autocast
        if name in COMPOSITE:
            return fn(*args, **kwargs)
        return _run_excluded(fn, args, kwargs)
    if kind == LOWER:
        target = st.dtype[dev]
    elif kind == FLOAT32:
        target = float32
        if kwargs.get("dtype") is not None:  # PyTorch's fp32_set_opt_dtype: an explicit dtype wins
            return _run_excluded(fn, args, kwargs)
    else:
        assert kind == PROMOTE
        target = _widest((args, tuple(kwargs.values())), dev, st.dtype[dev])
    args = _cast(args, target, dev)
    if kwargs:
        kwargs = {k: _cast(v, target, dev) for k, v in kwargs.items()}
    return _run_excluded(fn, args, kwargs)


def _run_excluded(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    """Run ``fn`` with autocast off for its inner ops; the region's hook comes back after."""
    st = _tls
    st.excluded = True
    try:
        return fn(*args, **kwargs)
    finally:
        st.excluded = False
