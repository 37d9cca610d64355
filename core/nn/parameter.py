"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter."""

from __future__ import annotations

from typing import Any, SupportsIndex

from .._tensor import Tensor

__all__ = ["Buffer", "Parameter", "is_lazy"]

_SLOTS = ("_data", "_be", "_device", "dtype", "_shape", "_vc")


def _adopt(cls: type, data: Tensor, requires_grad: bool) -> Any:
    """A ``cls`` instance sharing ``data``'s storage, detached from its graph."""
    t: Any = object.__new__(cls)
    for name in _SLOTS:
        object.__setattr__(t, name, getattr(data, name))
    t._base = None
    t._grad = None
    t._meta = None
    t.grad_fn = None
    t._requires_grad = False
    if requires_grad:
        t.requires_grad_(True)
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    ``Parameter(data, requires_grad=True)`` shares ``data``'s storage (as PyTorch does).
    Example: ``w = nn.Parameter(ember.zeros(3))``; ``w.requires_grad`` is True.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:  # noqa: PYI034
        if data is None:
            from .._creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        return _adopt(cls, data, requires_grad)

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        from .._ops.views import detach

        result = Parameter(detach(self).clone(), self.requires_grad)
        if self._grad is not None:
            result._grad = self._grad.clone()
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        from .._ops.views import detach

        return (_rebuild_parameter, (detach(self).clone(), self.requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            from .._creation import empty

            data = empty(0)
        t = _adopt(cls, data, False)
        t.persistent = persistent
        return t

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """Lazy (uninitialized) parameters are not supported: always False."""
    return False
