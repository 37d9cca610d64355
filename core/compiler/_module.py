"""``ember.compile(module)``: PyTorch's ``OptimizedModule``, a wrapper whose calls replay."""

from __future__ import annotations

from typing import Any

from ember.nn.modules.module import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """Holds the original module as ``_orig_mod`` (so ``state_dict`` keys read
    ``_orig_mod.weight``, as PyTorch's) and reads its other attributes through."""

    def __init__(self, mod: Module, compiled: Any) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def train(self, mode: bool = True) -> OptimizedModule:
        self._orig_mod.train(mode)
        self.training = mode
        return self

    @property
    def code(self) -> str:
        return self._compiled.code
