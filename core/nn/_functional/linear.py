"""``linear``, ``bilinear``, dropout variants, ``embedding``, ``one_hot``, similarity and resizing."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember.backends import dtypes as D

from ..._autocast_hook import autocast_op
from ..._creation import arange
from ..._dispatch import call, call_out, kernel_writes_out
from ..._ops import pointwise_unary as U
from ..._ops.convert import inplace as _inplace_form
from ..._ops.gather_scatter import INDEX_DTYPES, first_outside, legacy_type_name
from ..._ops.indexing import select_rows
from ..._ops.matmul import matmul
from ..._ops.select import where
from ..._public import op, public
from ..._random import _SIGNIFICAND_BITS, rand, random_words
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from ...autograd.grad_mode import state as _grad
from ...autograd.graph import record, relabel
from ...linalg._misc import vector_norm

PUBLIC = public(
    __name__,
    {
        "cosine_similarity": op(),
        "dropout": op(),
        "pairwise_distance": op(),
    },
)
__all__ = [
    *PUBLIC,
    "alpha_dropout",
    "bilinear",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "embedding",
    "linear",
    "normalize",
    "one_hot",
]


@autocast_op("nn.functional.linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``; ``weight`` is (out_features, in_features)."""
    if _plain_2d(input, weight, bias):
        return _linear_2d(input, weight, bias)
    if input.ndim > 2 and weight.ndim == 2 and input.is_contiguous():
        # As PyTorch: the batch dims fold into the rows of one addmm, viewed back.
        flat = input.reshape(math.prod(input._shape[:-1]), input._shape[-1])
        if _plain_2d(flat, weight, bias):
            return _linear_2d(flat, weight, bias).view(*input._shape[:-1], weight._shape[0])
    _check_linear(input, weight, bias)
    out = matmul(input, weight.t() if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def _check_linear(x: Tensor, w: Tensor, b: Tensor | None) -> None:
    """PyTorch's errors off the fast path: a 0-d operand, a bias that does not expand to the
    (flattened batch, out_features) result of its ``addmm``."""
    if x.ndim == 0 or w.ndim == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {x.ndim}D and {w.ndim}D"
        )
    if b is None or w.ndim != 2 or b.ndim > 2:
        return
    rows = 1
    for s in x._shape[:-1]:
        rows *= s
    target = [rows, w._shape[0]]
    for j in range(1, b.ndim + 1):
        have, want = b._shape[-j], target[-j]
        if have != want and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) at "
                f"non-singleton dimension {2 - j}.  Target sizes: {target}.  Tensor sizes: {list(b._shape)}"
            )


def _plain_2d(x: Tensor, w: Tensor, b: Tensor | None) -> bool:
    """The layer of every MLP: real floating (N, in) @ (out, in).T (+ (out,)), one device.
    Anything else (batched, complex, mismatched) takes the general path and its errors."""
    return (
        x.ndim == 2
        and w.ndim == 2
        and x.dtype is w.dtype
        and x.dtype.category == 2
        and x._device is w._device
        and x._shape[1] == w._shape[1]
        and (b is None or (b._shape == (w._shape[0],) and b.dtype is x.dtype and b._device is x._device))
    )


def _linear_rule(n: Any, g: Tensor) -> tuple:
    # PyTorch's addmm/mm backward for mat2 = weight.t(): grad_x = g @ w, grad_w = g.t() @ x.
    x, w = n.ctx
    need = n.needs_input_grad
    gx = matmul(g, w) if need[0] else None
    gw = matmul(g.t(), x) if need[1] else None
    if len(need) == 2:
        return gx, gw
    return gx, gw, g.sum(0) if need[2] else None


def _linear_2d(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """One kernel call for the product, one for the bias, one graph node (``AddmmBackward0``
    or ``MmBackward0``, PyTorch's names) instead of a transpose, a matmul and an add."""
    be = x._be
    shape = (x._shape[0], w._shape[0])
    if b is not None and x.dtype.name in _FOLD_DTYPES and _fold_bias(*shape, w._shape[1]):
        data = _folded_product(x, w, b)
    else:
        data = call(be, "matmul", x._data, call(be, "permute", w._data, (1, 0)))
        if b is not None:
            bias = call(be, "expand", b._data, shape)
            if kernel_writes_out(be, "add"):  # into the product's fresh array: no second result
                call_out(be, "add", data, bias, out=data)
            else:
                data = call(be, "add", data, bias)
    out = wrap(data, x._be, x._device, x.dtype, shape)
    if _grad.enabled and (x._requires_grad or w._requires_grad or (b is not None and b._requires_grad)):
        if b is None:
            record("MmBackward0", _linear_rule, out, (x, w), (), (x, w))
        else:
            record("AddmmBackward0", _linear_rule, out, (x, w, b), (), (x, w))
    return out


_FOLD_MIN = 1 << 16  # output elements from which folding the bias can pay
_FOLD_DTYPES = ("float32", "float64")  # half products round differently with the bias inside


def _fold_bias(rows: int, out_features: int, in_features: int) -> bool:
    """Whether the bias joins the product as one more input feature: a large output from few
    input features (a vocabulary decoder), where the bias add's pass over the output costs
    more than copying ``x`` and ``w`` one column wider (measured: 2.4 against 3.6 ms for
    (200, 32) @ (32, 10000) + bias in float32 on the CPU)."""
    n = rows * out_features
    return n >= _FOLD_MIN and n >= 4 * (rows + out_features) * (in_features + 1)


def _folded_product(x: Tensor, w: Tensor, b: Tensor) -> Any:
    """``[x, 1] @ [w, b]^T``: the (rows, out) result is written once, as PyTorch's addmm writes
    it; each bias is the last term of its dot product, where matmul-then-add adds it after."""
    be, rows, out_features = x._be, x._shape[0], w._shape[0]
    ones = call(be, "full", (rows, 1), 1.0, x.dtype, x._device.index or 0)
    xa = call(be, "cat", [x._data, ones], 1)
    wa = call(be, "cat", [w._data, call(be, "reshape", b._data, (out_features, 1))], 1)
    return call(be, "matmul", xa, call(be, "permute", wa, (1, 0)))


@autocast_op("nn.functional.bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1 @ W_k @ x2 + b_k`` with ``weight`` (out, in1, in2)."""
    for name, got, want in (
        ("input1", input1._shape[-1], weight._shape[1]),
        ("input2", input2._shape[-1], weight._shape[2]),
        ("bias", bias._shape[-1] if bias is not None else weight._shape[0], weight._shape[0]),
    ):
        if got != want:
            raise RuntimeError(
                f"bilinear(): {name} size does not match weight size: got {got} but expected {want}"
            )
    if input1._shape[:-1] != input2._shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1._shape[:-1])} and "
            f"{list(input2._shape[:-1])}"
        )
    t = matmul(input1.unsqueeze(-2).unsqueeze(-3), weight)  # (..., out, 1, in2)  # type: ignore[attr-defined]
    out = (t.squeeze(-2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


_THRESHOLDS: dict[tuple[Any, float], int | None] = {}


def _word_threshold(p: float, dtype: Any) -> int | None:
    """The smallest raw Philox word whose ``rand`` uniform (of ``dtype``) is ``>= p``, or None
    where ``rand`` takes two words a sample (float64). Found once per (dtype, p) by running
    ``rand``'s own conversion and comparison on the candidate words next to ``p``."""
    key = (dtype, p)
    if key not in _THRESHOLDS:
        if len(_THRESHOLDS) >= 256:  # a schedule of many p: keep the table small
            _THRESHOLDS.clear()
        found = None
        if dtype in (D.float32, D.float16, D.bfloat16):  # else rand's path (and its errors)
            width = _SIGNIFICAND_BITS.get(dtype.name, 24)
            k0 = max(0, min(int(p * 2.0**width) - 2, 2**width))
            ks = list(range(k0, min(k0 + 5, 2**width + 1)))
            with no_grad():
                u = (_ints(ks).to(D.float32) * (2.0**-width)).to(dtype)
                hits = (u >= p).tolist()
            first = next((k for k, hit in zip(ks, hits) if hit), None)
            if first is not None and (first > k0 or k0 == 0):
                found = first << (32 - width)
        _THRESHOLDS[key] = found
    return _THRESHOLDS[key]


def _ints(values: list[int]) -> Tensor:
    from ..._creation import tensor

    return tensor(values, dtype=D.int64)


def keep_mask(shape: tuple, p: float, dtype: Any, device: Any) -> Tensor:
    """``rand(shape, dtype) >= p`` (the same draws, the same mask, the same generator state)
    as one comparison of the raw words: rand's shift, cast and scale are monotone."""
    threshold = _word_threshold(p, dtype)
    if threshold is None:
        return rand(shape, dtype=dtype, device=device) >= p
    n = math.prod(shape)
    return random_words(n, device, None).reshape(shape) >= threshold


def _apply_mask(input: Tensor, mask_shape: tuple, p: float, inplace: bool) -> Tensor:
    if p == 1.0:
        scale: Any = 0.0
    else:
        keep = keep_mask(mask_shape, p, input.dtype, input._device)
        scale = keep.to(input.dtype) * (1.0 / (1.0 - p))
    if not inplace:
        return input * scale
    # PyTorch's in-place dropout is a mul_: same tensor, version bumped, MulBackward0, views rebased
    before = input.grad_fn
    out = _inplace_form(lambda x: x * scale)(input)
    if out.grad_fn is not None and out.grad_fn is not before:
        relabel(out, "MulBackward0")
    return out


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` (training only)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _apply_mask(input, input._shape, p, inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, batch_dims: int) -> Tensor:
    """Zero whole feature maps: one draw per leading (batch, channel) entry."""
    if not training or p == 0.0:
        return input
    lead = min(batch_dims, input.ndim)
    return _apply_mask(input, input._shape[:lead] + (1,) * (input.ndim - lead), p, inplace)


def _wrong_rank(name: str, ndim: int, spatial: int) -> None:
    lo, hi = spatial + 1, spatial + 2
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an error in a "
        "future release. To retain the behavior and silence this warning, please use dropout instead. Note "
        f"that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a "
        f"channel dimension, and an optional batch dimension (i.e. {lo}D or {hi}D inputs).",
        stacklevel=3,
    )


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that dropout1d exists "
            "to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs)."
        )
    return _feature_dropout(input, p, training, inplace, 2 if input.ndim == 3 else 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability ``p``.

    As in PyTorch, a 3-D input is read as (N, C, L) (with a warning), not as unbatched (C, H, W).
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        _wrong_rank("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    _check_p(p)
    if input.ndim not in (4, 5):
        _wrong_rank("dropout3d", input.ndim, 3)
    return _feature_dropout(input, p, training, inplace, 2 if input.ndim == 5 else 1)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's mean and variance: dropped units take the saturation value."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    alpha = -1.7580993408473766
    keep = (rand(input._shape, dtype=input.dtype, device=input._device) >= p).to(input.dtype)
    a = ((1 - p) * (1 + p * alpha**2)) ** -0.5
    b = -a * alpha * p
    return (input * keep + alpha * (1 - keep)) * a + b


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` at the integer ``input`` indices; ``padding_idx`` rows get no gradient.

    Indices must lie in ``[0, num_embeddings)``: as in PyTorch, ``-1`` is an IndexError, not the last row.
    """
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    check_embedding_indices(input, "embedding")
    n = weight._shape[0]
    if n == 0 and input.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if first_outside(input, 0, n) is not None:
        raise IndexError("index out of range in self")
    out = embedding_rows(input, weight, max_norm, norm_type)
    if padding_idx is not None and out.requires_grad:
        # rows looked up at padding_idx pass no gradient to the table
        pi = padding_idx + n if padding_idx < 0 else padding_idx
        out = where((input == pi).unsqueeze(-1), out.detach(), out)
    return out


def check_embedding_indices(input: Tensor, op: str) -> None:
    """Embedding indices are int32 or int64 (PyTorch names the dtype by its legacy type)."""
    if input.dtype not in INDEX_DTYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {legacy_type_name(input.dtype)} instead (while checking arguments for {op})"
        )


def embedding_rows(input: Tensor, weight: Tensor, max_norm: float | None, norm_type: float) -> Tensor:
    """The lookup behind ``embedding``/``embedding_bag`` for indices already checked in range."""
    if max_norm is not None:
        with no_grad():
            flat = input.reshape(-1)
            rows = select_rows(weight, flat)
            norms = (
                rows.norm(norm_type, -1, keepdim=True)
                if hasattr(rows, "norm")
                else (rows * rows).sum(-1, keepdim=True).sqrt()
            )
            scale = (max_norm / (norms + 1e-7)).clamp(max=1.0)
            weight[flat] = rows * scale
    return select_rows(weight, input)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding: ``one_hot(ember.tensor([0, 2]), 3)`` is ``[[1, 0, 0], [0, 0, 1]]``."""
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    elif tensor.numel() and int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor._device)
    return (tensor.unsqueeze(-1) == classes).to(D.int64)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:
    """``x / max(||x||_p, eps)`` along ``dim``."""
    norm = _pnorm(input, p, dim, True)
    return input / norm.clamp(min=eps).expand_as(input)


def _pnorm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    if p == 2:  # vector_norm's rule: gradient 0 at a zero vector (PyTorch), not 0 * inf = nan
        return vector_norm(x, 2, dim, keepdim)
    if p == 1:
        return U.abs(x).sum(dim, keepdim=keepdim)
    if p == float("inf"):
        return U.abs(x).amax(dim, keepdim=keepdim)
    return (U.abs(x) ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1·x2 / max(||x1|| ||x2||, eps)`` along ``dim`` (inputs broadcast)."""
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    return (x1 * x2).sum(dim) / ((n1 * n2).clamp(min=eps * eps)).sqrt()


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    return _pnorm(x1 - x2 + eps, p, -1, keepdim)
