"""The ember names the distributions use, from the modules that define them.

``ember/__init__`` imports this package, so a module-level ``import ember`` here would be an
import cycle (``tests/test_layers.py``); the modules say ``from . import _ember as ember``.
"""

from ember._namespace import *
from ember._tensor import Size, Tensor
from ember.backends.dtypes import bool_ as bool
from ember.backends.dtypes import float64
from ember.backends.dtypes import int64 as long

from .. import linalg, special
from .._dtype_info import finfo
from ..autograd.grad_mode import enable_grad, no_grad
from ..nn import functional

__all__ = [
    "Size",
    "Tensor",
    "bool",
    "enable_grad",
    "finfo",
    "float64",
    "functional",
    "linalg",
    "long",
    "no_grad",
    "special",
]
