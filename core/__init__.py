"""ember: PyTorch's API over pluggable backends.

``import ember as torch`` runs ordinary PyTorch code; kernels come from backend plugins
(``ember info`` lists them).
"""

from __future__ import annotations

from typing import Any

from ember.backends import DType, device
from ember.backends.dtypes import (
    bfloat16,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from ember.backends.dtypes import (
    bool_ as bool,
)

from . import (
    _decompositions,  # noqa: F401 - declares the composites' decompositions
    _kernel_check,  # noqa: F401 - EMBER_CHECK_KERNELS=1 turns kernel-result checks on
    _methods,
    accelerator,
    autograd,
    backends,
    cuda,
    linalg,
    special,
)
from ._dtype_info import (
    finfo,
    iinfo,
)
from ._legacy import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from ._ops.reduction import (
    return_types,
)
from ._random import (
    Generator,
    default_generator,
)
from ._tensor import Size, Tensor
from .accelerator import Event, Stream
from .autograd import (
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)

_methods.bind()

# These subpackages need the Tensor methods bound above.
from . import (
    amp,
    nn,
    serialization,
)

# Subpackages imported on first use (``ember.distributions``, ``from ember import jit``): most
# programs never touch them (about a sixth of ``import ember``).
_LAZY = frozenset(
    (
        "compiler",
        "distributed",
        "distributions",
        "fft",
        "func",
        "jit",
        "onnx",
        "optim",
        "profiler",
        "testing",
        "utils",
    )
)


def compile(model: Any = None, **kwargs: Any) -> Any:
    """``ember.compile(fn_or_module, *, fullgraph=False, dynamic=None, backend="default")``:
    capture once per input signature, replay without Python dispatch (``ember.compiler``)."""
    from .compiler import compile as _compile

    return _compile(model, **kwargs)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")  # binds the name in this module too
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Every op's public names, generated from the PUBLIC tables beside the ops (_public.py).
from ._namespace import *
from ._namespace import __all__ as _op_names
from .amp import (
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128
dtype = DType

__version__ = "0.1.0"

from ._random_inplace import bind as _bind_inplace_methods

_bind_inplace_methods(Tensor)  # in-place view/shape and random ops (they replace older entries)


# ember's names that are not ops (types, dtypes, subpackages), then the ops'.
__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DType",
    "DoubleTensor",
    "Event",
    "FloatTensor",
    "Generator",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "Size",
    "Stream",
    "Tensor",
    "accelerator",
    "amp",
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "autograd",
    "backends",
    "bfloat16",
    "bool",
    "cdouble",
    "cfloat",
    "clear_autocast_cache",
    "complex128",
    "complex64",
    "cuda",
    "default_generator",
    "device",
    "distributed",
    "distributions",
    "double",
    "dtype",
    "enable_grad",
    "fft",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "compile",
    "compiler",
    "func",
    "get_autocast_dtype",
    "half",
    "iinfo",
    "inference_mode",
    "int",
    "int16",
    "int32",
    "int64",
    "int8",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "jit",
    "linalg",
    "long",
    "nn",
    "no_grad",
    "onnx",
    "optim",
    "profiler",
    "return_types",
    "serialization",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_grad_enabled",
    "short",
    "special",
    "testing",
    "uint8",
    "utils",
    *_op_names,
]
