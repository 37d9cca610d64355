"""ember: PyTorch's API over pluggable backends.

``import ember as torch`` runs ordinary PyTorch code; kernels come from backend plugins
(``ember info`` lists them).
"""

from __future__ import annotations

from ember.backends import DType, device
from ember.backends.dtypes import (
    bfloat16,
    bool_ as bool,  # noqa: A004 - PyTorch's name
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

from . import _methods
from ._creation import (
    arange,
    as_tensor,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from ._device import get_default_device, set_default_device
from ._dtype import get_default_dtype, set_default_dtype
from ._ops.binary import (
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    div,
    divide,
    eq,
    floor_divide,
    ge,
    gt,
    le,
    logical_and,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    pow,  # noqa: A004
    remainder,
    result_type,
    sub,
    subtract,
    true_divide,
)
from ._ops.convert import clone, conj, real, imag
from ._ops.indexing import gather, index_put, index_select, masked_fill, nonzero, scatter, scatter_add
from ._ops.join import cat, concat, concatenate, hstack, stack, vstack
from ._ops.matmul import bmm, dot, matmul, mm, mv
from ._ops.reduce import (
    all,  # noqa: A004
    amax,
    amin,
    any,  # noqa: A004
    argmax,
    argmin,
    cumsum,
    max,  # noqa: A004
    mean,
    min,  # noqa: A004
    prod,
    return_types,
    std,
    std_mean,
    sum,  # noqa: A004
    var,
    var_mean,
)
from ._ops.select import clamp, clip, where
from ._ops.sort import argsort, msort, sort, topk
from ._ops.unary import (
    abs,  # noqa: A004
    bitwise_not,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    expm1,
    floor,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log2,
    log10,
    logical_not,
    neg,
    positive,
    reciprocal,
    relu,
    round,  # noqa: A004
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tan,
    tanh,
    trunc,
)
from ._ops.views import (
    chunk,
    flatten,
    movedim,
    narrow,
    permute,
    reshape,
    select,
    split,
    squeeze,
    t,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
)
from ._printing import set_printoptions
from ._random import (
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from ._tensor import Size, Tensor
from ._misc import (
    are_deterministic_algorithms_enabled,
    broadcast_shapes,
    is_complex,
    is_floating_point,
    is_tensor,
    numel,
    promote_types,
    use_deterministic_algorithms,
)
from . import accelerator, autograd, backends, cuda, testing
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled

_methods.bind()

negative = neg
absolute = abs
swapaxes = transpose
float = float32  # noqa: A001 - PyTorch's alias names
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
dtype = DType

__version__ = "0.1.0"

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations",)]
