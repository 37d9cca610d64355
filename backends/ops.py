"""The closed table of ops the frontend may ask a backend for: the price of a backend.

Calling convention for every kernel (the frontend guarantees it, backends rely on it):

* Arrays are the backend's native arrays; Python values are plain ``int``/``float``/
  ``complex``/``bool``/``tuple``/``DType``. Parameters are positional, in the order below.
* Elementwise kernels (``unary``, ``binary``, ``compare``, ``where``) receive arrays of
  one shape and one dtype (the frontend has promoted, cast and ``expand``-ed them), or a
  Python scalar in place of an array. They return a new array of that shape; ``compare``
  returns bool, ``abs`` of a complex array returns its real dtype, everything else keeps
  the dtype. Inputs may be non-contiguous views (unless the backend declares
  ``contiguous_only``; then the frontend copies them first — except for view kernels and
  ``assign``, which always receive the strided arrays they alias or write).
* Reductions and scans return the input's dtype (the frontend casts first when PyTorch
  widens, e.g. integer ``sum`` to int64). They take ``dims`` as a sorted tuple of
  non-negative axes (``()`` never occurs: the frontend passes every axis instead) and
  ``keepdim``. Half-precision inputs must be accumulated in at least float32.
* View kernels return an array that aliases the input's storage. ``reshape`` returns
  ``None`` when the layout cannot be viewed with the new shape (the frontend then copies).
* ``assign`` raises ``ValueError`` when ``dst`` has overlapping elements (an ``expand``-ed
  view): the frontend turns that into PyTorch's "more than one element of the written-to
  tensor refers to a single memory location" error.
* Index kernels (``gather``, ``scatter``) raise ``IndexError`` for an out-of-range index;
  they must never crash the process or read outside the buffer.
* Creation kernels (``full``, ``arange``, ``philox``) end with the device index.
* Optional, per kernel: a ``binary`` kernel marked with ``writes_out`` also accepts a keyword
  ``out``, an array of the result's shape and dtype that may be the first operand itself; it
  writes the result there and returns it. The frontend then runs ``x += y`` (``add_``,
  ``sub_``, ``mul_``, ``div_``) in place instead of computing a new array and copying it. A
  read-only ``out`` (an ``expand``-ed view) raises ``ValueError`` as ``assign`` does.

Composite kernels follow the same rules (a Python scalar may replace an array operand
only where the primitive of the same kind allows it).

``PRIMITIVES`` must all be implemented for a backend to pass conformance without fallback;
``COMPOSITES`` have a decomposition into primitives in the frontend and a backend may
register a faster kernel for any of them (same convention, on native arrays).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALL_OPS",
    "BINARY",
    "COMPARE",
    "COMPOSITES",
    "KINDS",
    "PRIMITIVES",
    "REDUCE",
    "UNARY",
    "VIEWS",
    "WRITES_OUT",
    "OpDef",
    "writes_out",
]

KINDS = (
    "creation",
    "random",
    "copy",
    "view",
    "unary",
    "binary",
    "compare",
    "where",
    "reduction",
    "scan",
    "matmul",
    "indexing",
    "sort",
    "join",
    "composite",
)


@dataclass(frozen=True)
class OpDef:
    """One op: its name, kind, tensor-argument count, further parameters and meaning."""

    name: str
    kind: str
    inputs: int
    params: tuple[str, ...]
    doc: str
    # View kernels and ``assign`` alias or write memory, so a CPU round trip would break
    # them: a backend must implement these itself.
    may_fall_back: bool = True


def _op(name: str, kind: str, inputs: int, params: str, doc: str, fb: bool = True) -> OpDef:
    return OpDef(name, kind, inputs, tuple(params.split()), doc, fb)


_PRIMITIVE_LIST = [
    # creation and random: the last parameter is the device index
    _op("full", "creation", 0, "shape value dtype index", "array of shape filled with value"),
    _op("arange", "creation", 0, "start step n dtype index", "start + i*step for i < n"),
    _op("philox", "random", 0, "n key counter index", "n Philox-4x32-10 words as int64 in [0, 2**32)"),
    # copy
    _op("cast", "copy", 1, "dtype", "new array converted as PyTorch's .to(dtype) does"),
    _op("assign", "copy", 2, "", "write src (array or scalar) into dst in place", False),
    # views: alias the input's storage
    _op("reshape", "view", 1, "shape", "view with a new shape, or None if impossible", False),
    _op("permute", "view", 1, "dims", "view with axes reordered", False),
    _op("expand", "view", 1, "shape", "broadcast view (new leading dims allowed)", False),
    _op("slice", "view", 1, "key", "view by a tuple of ints and step>0 slices", False),
    _op("as_strided", "view", 1, "shape strides offset", "view of the storage", False),
    _op(
        "bitcast",
        "view",
        1,
        "dtype",
        "view of the same bytes as dtype (PyTorch's view(dtype)): equal itemsizes keep shape and "
        "strides; otherwise the last dim's size is scaled by old/new itemsize and its stride is 1, "
        "other strides and the offset are rescaled (the frontend checks divisibility and stride 1)",
        False,
    ),
    # unary math
    _op("neg", "unary", 1, "", "-x"),
    _op("abs", "unary", 1, "", "|x| (complex gives its real dtype)"),
    _op("exp", "unary", 1, "", "e**x"),
    _op("log", "unary", 1, "", "natural logarithm"),
    _op("sqrt", "unary", 1, "", "square root"),
    _op("sin", "unary", 1, "", "sine"),
    _op("cos", "unary", 1, "", "cosine"),
    _op("tanh", "unary", 1, "", "hyperbolic tangent"),
    _op("erf", "unary", 1, "", "error function"),
    _op("floor", "unary", 1, "", "round toward minus infinity"),
    # binary math
    _op("add", "binary", 2, "", "a + b"),
    _op("sub", "binary", 2, "", "a - b"),
    _op("mul", "binary", 2, "", "a * b"),
    _op("div", "binary", 2, "", "true division (inputs are floating or complex)"),
    _op("floordiv", "binary", 2, "", "floor(a / b), Python's rule, also for integers"),
    _op("pow", "binary", 2, "", "a ** b"),
    _op("maximum", "binary", 2, "", "elementwise max, NaN propagates"),
    _op("minimum", "binary", 2, "", "elementwise min, NaN propagates"),
    _op("bitwise_and", "binary", 2, "", "a & b (logical for bool)"),
    _op("bitwise_or", "binary", 2, "", "a | b (logical for bool)"),
    _op("bitwise_xor", "binary", 2, "", "a ^ b (logical for bool)"),
    # comparisons (gt/ge swap arguments, ne negates eq)
    _op("eq", "compare", 2, "", "a == b"),
    _op("lt", "compare", 2, "", "a < b"),
    _op("le", "compare", 2, "", "a <= b"),
    _op("where", "where", 3, "", "cond ? a : b"),
    # reductions and scan
    _op("sum", "reduction", 1, "dims keepdim", "sum over dims"),
    _op("prod", "reduction", 1, "dims keepdim", "product over dims"),
    _op("amax", "reduction", 1, "dims keepdim", "max over dims, NaN propagates"),
    _op("argmax", "reduction", 1, "dim keepdim", "first index of the max (dim None: flat)"),
    _op("cumsum", "scan", 1, "dim", "inclusive prefix sum along dim"),
    # products, indexing, sort, join
    _op("matmul", "matmul", 2, "", "(..., n, k) @ (..., k, m), identical batch dims"),
    _op("gather", "indexing", 2, "dim", "out[i][j] = x[index[i][j]][j] for dim 0"),
    _op("scatter", "indexing", 3, "dim reduce", "copy of x with src written at index"),
    _op("sort", "sort", 1, "dim descending", "stable sort: (values, int64 indices)"),
    _op("cat", "join", 1, "dim", "join a list of arrays along dim"),
]

# Composites: the frontend decomposes them into primitives; a backend may override any.
_COMPOSITE_LIST = [
    _op("clone", "composite", 1, "", "contiguous copy"),
    _op("ceil", "composite", 1, "", "round toward plus infinity"),
    _op("trunc", "composite", 1, "", "round toward zero"),
    _op("round", "composite", 1, "", "round half to even"),
    _op("sign", "composite", 1, "", "-1, 0 or 1"),
    _op("sigmoid", "composite", 1, "", "1 / (1 + exp(-x))"),
    _op("log1p", "composite", 1, "", "log(1 + x)"),
    _op("expm1", "composite", 1, "", "exp(x) - 1"),
    _op("remainder", "composite", 2, "", "a - floordiv(a, b) * b"),
    _op("amin", "composite", 1, "dims keepdim", "min over dims"),
    _op("argmin", "composite", 1, "dim keepdim", "first index of the min"),
    _op("softmax", "composite", 1, "dim", "exp(x - max) / sum"),
    _op("log_softmax", "composite", 1, "dim", "x - max - log(sum(exp(x - max)))"),
    _op("index", "composite", 1, "indices", "NumPy advanced indexing: per-dim int64 arrays or None"),
    _op("index_put", "composite", 2, "indices accumulate", "in place: x[indices] = values (or +=)"),
    _op("nonzero", "composite", 1, "", "int64 (count, ndim) coordinates of non-zero elements"),
    _op("conv2d", "composite", 2, "stride padding dilation groups", "cross-correlation, NCHW, no bias"),
    _op("max_pool2d", "composite", 1, "kernel stride padding dilation ceil_mode", "(values, flat indices)"),
    _op("avg_pool2d", "composite", 1, "kernel stride padding ceil_mode count_include_pad", "window means"),
    _op(
        "conv2d_input_grad",
        "composite",
        2,
        "in_hw stride padding dilation groups",
        "gradient of conv2d in x for output gradient g and weight w: (N, C, *in_hw)",
    ),
    _op(
        "conv2d_weight_grad",
        "composite",
        2,
        "w_shape stride padding dilation groups",
        "gradient of conv2d in its weight for input x and output gradient g: w_shape",
    ),
    _op(
        "max_pool2d_backward",
        "composite",
        2,
        "in_hw accumulate",
        "g placed at the flat (h*W + w) indices of max_pool2d in (N, C, *in_hw) zeros; summed if accumulate",
    ),
    _op(
        "avg_pool2d_backward",
        "composite",
        1,
        "in_hw kernel stride padding",
        "each input cell gets the sum of g (already divided by the divisors) over the windows holding it",
    ),
    # add/sub with alpha (PyTorch's fused multiply-add); writes_out like the binary kernels
    _op(
        "add_scaled",
        "composite",
        2,
        "alpha",
        "x + alpha * y rounded once (a fused multiply-add, as PyTorch's add(x, y, alpha=alpha)) for "
        "float32/float64 x and y of one shape and dtype (expanded views allowed); alpha a Python float "
        "used at their precision",
    ),
    # optimizer updates: in place, return None (the optimizers' per-op formula is the decomposition)
    _op(
        "sgd_update",
        "composite",
        3,
        "lr momentum dampening weight_decay nesterov maximize first_step",
        "in place on param, buf (None if momentum == 0): g = -grad if maximize else grad; "
        "g += weight_decay * param; buf = g if first_step else momentum * buf + (1 - dampening) * g; "
        "g = g + momentum * buf if nesterov else buf (if momentum != 0); param += -lr * g",
    ),
    _op(
        "adam_update",
        "composite",
        5,
        "lr beta1 beta2 eps weight_decay amsgrad maximize step decoupled",
        "in place on param, exp_avg m, exp_avg_sq v, max_exp_avg_sq (None unless amsgrad): "
        "g = -grad if maximize; param *= 1 - lr * weight_decay if decoupled else g += weight_decay * param; "
        "m = lerp(m, g, 1 - beta1); v = beta2 * v + (1 - beta2) * g * g; vmax = max(vmax, v) if amsgrad; "
        "param += (-lr / (1 - beta1**step)) * m / (sqrt(v or vmax) / (1 - beta2**step) ** 0.5 + eps)",
    ),
    # multi-tensor (foreach) updates: one call per parameter group, lists of arrays in place
    _op(
        "sgd_update_foreach",
        "composite",
        3,
        "lr momentum dampening weight_decay nesterov maximize first_steps",
        "sgd_update on each (param, grad, buf) of three equal-length lists (buf entries may be None); "
        "first_steps: one bool per tensor",
    ),
    _op(
        "adam_update_foreach",
        "composite",
        5,
        "lr beta1 beta2 eps weight_decay amsgrad maximize steps decoupled",
        "adam_update on each (param, grad, m, v, vmax) of five equal-length lists (vmax entries None "
        "unless amsgrad); steps: one float per tensor",
    ),
    # multi-tensor gradient clipping (clip_grad_norm_): lists of arrays of one dtype
    _op(
        "norm_foreach",
        "composite",
        1,
        "ord",
        "(len,) array of the ord-norm of each array of a list of one floating or complex dtype (as "
        "linalg.vector_norm: inf max |x|, -inf min |x|, 0 the count of non-zeros, else sum(|x|**ord) "
        "** (1/ord)), in their real dtype; half types accumulate in float32",
    ),
    _op(
        "mul_foreach",
        "composite",
        2,
        "",
        "in place: each array of a list *= s, a 0-d floating array (the product in the wider of the two "
        "dtypes, rounded to the array's, as PyTorch's opmath); returns None",
    ),
    # layer norm over the trailing k dims: one call forward, one backward (one recorded node)
    _op(
        "layer_norm",
        "composite",
        3,
        "k eps",
        "(out, mean, rstd) for x (floating), weight and bias (None or the trailing k dims' shape): "
        "mean and rstd = 1/sqrt(var + eps) (biased variance) over the last k dims, kept as size-1 "
        "dims; out = (x - mean) * rstd * weight + bias",
    ),
    _op(
        "layer_norm_backward",
        "composite",
        5,
        "k",
        "(dx, dw, db) for layer_norm's output gradient g given x, weight (None: dw None), mean and "
        "rstd: xhat = (x - mean) * rstd, gw = g * weight, dx = rstd * (gw - mean(gw) - xhat * "
        "mean(gw * xhat)) over the last k dims, dw = sum(g * xhat), db = sum(g) over the leading dims",
    ),
    # recurrent layers: one call per layer and direction over the whole sequence, forward and
    # backward (the frontend records one node); gi is the input projection of every step,
    # (L, N, G*H); b_hh may be None; lengths None or one int per batch row (packed sequences:
    # a row past its length keeps its state, repeats it as output and gets no gate gradient)
    _op(
        "lstm_layer",
        "composite",
        5,
        "reverse lengths",
        "(hc, gates) for gi, h0, c0 (N, H), w_hh (4H, H), b_hh: gates i, f, g, o = sigmoid, sigmoid, "
        "tanh, sigmoid of gi[t] + h @ w_hh^T + b_hh; c = f*c + i*g; h = o*tanh(c); steps run from "
        "L-1 down to 0 if reverse; hc (2, L, N, H) holds every h then every c; gates (L, N, 4H) the "
        "activated gates",
    ),
    _op(
        "lstm_layer_backward",
        "composite",
        6,
        "reverse lengths",
        "(d_gates (L, N, 4H) of the pre-activations, d_h0, d_c0) for the gradient g (2, L, N, H) of "
        "lstm_layer's hc, given h0, c0, w_hh, hc and gates",
    ),
    _op(
        "gru_layer",
        "composite",
        4,
        "reverse lengths",
        "(out, gates) for gi, h0, w_hh (3H, H), b_hh: gh = h @ w_hh^T + b_hh; r, z = sigmoid(gi + gh) "
        "(first two thirds); n = tanh(gi_n + r*gh_n); h = (1-z)*n + z*h; out (L, N, H) every h, "
        "gates (L, N, 4H) r, z, n, gh_n",
    ),
    _op(
        "gru_layer_backward",
        "composite",
        5,
        "reverse lengths",
        "(d_gi, d_gh, d_h0) for the gradient g (L, N, H) of gru_layer's out, given h0, w_hh, out and "
        "gates: d_gi, d_gh (L, N, 3H) those of gi and of h @ w_hh^T + b_hh",
    ),
    _op(
        "rnn_layer",
        "composite",
        4,
        "relu reverse lengths",
        "out (L, N, H): every h = tanh (relu if relu) of gi[t] + h @ w_hh^T + b_hh",
    ),
    _op(
        "rnn_layer_backward",
        "composite",
        4,
        "relu reverse lengths",
        "(d_gi, d_h0) for the gradient g (L, N, H) of rnn_layer's out, given h0, w_hh and out",
    ),
    # attention: one call forward, one backward (the frontend records one node)
    _op(
        "sdpa",
        "composite",
        5,
        "scale is_causal",
        "(out, weights) of softmax(q @ k^T * scale + mask) @ v for q (..., Lq, E), k (..., Lk, E), "
        "v (..., Lk, Ev) of identical batch dims; mask None, bool (True attends) or additive, "
        "(..., Lq, Lk); is_causal hides j > i; weights: the softmax (rows with nothing to attend "
        "are 0), before drop, None or (..., Lq, Lk) factors that multiply weights ahead of @ v",
    ),
    _op(
        "sdpa_backward",
        "composite",
        6,
        "scale",
        "(dq, dk, dv) of sdpa for output gradient g, given q, k, v, its weights and drop",
    ),
    # softmax backward: one call each (the frontend's rules; g and out of one shape)
    _op(
        "softmax_backward",
        "composite",
        2,
        "dim",
        "out * (g - sum(g * out, dim)) for softmax's output out and its gradient g",
    ),
    _op(
        "log_softmax_backward",
        "composite",
        2,
        "dim",
        "g - exp(out) * sum(g, dim) for log_softmax's output out and its gradient g",
    ),
    # relu backward: one call (the frontend's rule; g and out of one shape)
    _op(
        "relu_backward",
        "composite",
        2,
        "",
        "g where relu's output out is not <= 0, else 0 (0 even where g is inf or NaN)",
    ),
    # special functions, scans, scatter_reduce, complex parts, linear algebra (ember.special, .linalg)
    _op("atan", "composite", 1, "", "arctangent"),
    _op("atan2", "composite", 2, "", "angle of (b, a) in (-pi, pi], quadrant-aware"),
    _op("asin", "composite", 1, "", "arcsine"),
    _op("acos", "composite", 1, "", "arccosine"),
    _op("erfc", "composite", 1, "", "1 - erf(x), accurate for large x"),
    _op("erfinv", "composite", 1, "", "inverse error function"),
    _op("erfcx", "composite", 1, "", "exp(x**2) * erfc(x)"),
    _op("lgamma", "composite", 1, "", "log |gamma(x)|"),
    _op("digamma", "composite", 1, "", "d/dx lgamma(x)"),
    _op("polygamma", "composite", 1, "n", "n-th derivative of digamma"),
    _op("zeta", "composite", 2, "", "Hurwitz zeta(x, q)"),
    _op("ndtri", "composite", 1, "", "inverse of the standard normal CDF"),
    _op("log_ndtr", "composite", 1, "", "log of the standard normal CDF"),
    _op("i0", "composite", 1, "", "modified Bessel function I0"),
    _op("i0e", "composite", 1, "", "exp(-|x|) * I0(x)"),
    _op("i1", "composite", 1, "", "modified Bessel function I1"),
    _op("i1e", "composite", 1, "", "exp(-|x|) * I1(x)"),
    _op("bessel_j0", "composite", 1, "", "Bessel function J0"),
    _op("bessel_j1", "composite", 1, "", "Bessel function J1"),
    _op("cumprod", "composite", 1, "dim", "inclusive prefix product along dim"),
    _op("cummax", "composite", 1, "dim", "(running max, int64 index of its last occurrence)"),
    _op("cummin", "composite", 1, "dim", "(running min, int64 index of its last occurrence)"),
    _op("scatter_reduce", "composite", 3, "dim reduce include_self", "reduce src into x at index"),
    _op("real", "composite", 1, "", "real part of a complex array, as a new real array"),
    _op("imag", "composite", 1, "", "imaginary part of a complex array, as a new real array"),
    _op("complex", "composite", 2, "", "re + 1j * im as complex64/complex128"),
    _op("linalg_det", "composite", 1, "", "determinants of (..., n, n)"),
    _op("linalg_slogdet", "composite", 1, "", "(sign, log|det|) of (..., n, n)"),
    _op("linalg_inv", "composite", 1, "", "inverses of (..., n, n); RuntimeError if singular"),
    _op("linalg_solve", "composite", 2, "", "A^-1 B for (..., n, n) and (..., n, k)"),
    _op("linalg_lstsq", "composite", 2, "", "least-squares solution of (..., m, n) X = (..., m, k)"),
    _op("linalg_cholesky", "composite", 1, "upper", "Cholesky factor (lower, or upper if upper)"),
    _op("linalg_qr", "composite", 1, "mode", "(Q, R) for mode reduced/complete/r"),
    _op("linalg_eig", "composite", 1, "", "complex (eigenvalues, eigenvectors)"),
    _op("linalg_eigh", "composite", 1, "upper", "(ascending eigenvalues, eigenvectors) of Hermitian"),
    _op("linalg_svd", "composite", 1, "full_matrices", "(U, S, Vh)"),
    _op("linalg_matrix_exp", "composite", 1, "", "matrix exponential"),
    _op("linalg_householder_product", "composite", 2, "", "first n columns of prod of reflectors"),
]

PRIMITIVES: dict[str, OpDef] = {o.name: o for o in _PRIMITIVE_LIST}
COMPOSITES: dict[str, OpDef] = {o.name: o for o in _COMPOSITE_LIST}
ALL_OPS: dict[str, OpDef] = {**PRIMITIVES, **COMPOSITES}


WRITES_OUT = "ember_writes_out"


def writes_out(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``kernel`` as accepting ``out=`` (see the calling convention above)."""
    setattr(kernel, WRITES_OUT, True)
    return kernel


def _names(kind: str) -> tuple[str, ...]:
    return tuple(o.name for o in _PRIMITIVE_LIST if o.kind == kind)


UNARY = _names("unary")
BINARY = _names("binary")
COMPARE = _names("compare")
REDUCE = _names("reduction")
VIEWS = _names("view")
