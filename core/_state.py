"""The thread-local grad/inference mode flags, in a module with no imports so that the
Tensor core (``wrap`` marks tensors made in inference mode) and autograd share it."""

from __future__ import annotations

import threading

__all__ = ["state"]


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False


state = _State()
