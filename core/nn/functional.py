"""``ember.nn.functional``: stateless layers, activations and losses (PyTorch's ``F``)."""

from __future__ import annotations

from ._functional.activation import (
    celu,
    elu,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    rrelu,
    selu,
    sigmoid,
    silu,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
)
from ._functional.attention import multi_head_attention_forward, scaled_dot_product_attention
from ._functional.conv3d import adaptive_avg_pool3d, avg_pool3d, conv3d, max_pool3d
from ._functional.conv_api import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ._functional.ctc import ctc_loss
from ._functional.extra import (
    channel_shuffle,
    embedding_bag,
    fold,
    gumbel_softmax,
    local_response_norm,
    lp_pool1d,
    lp_pool2d,
    max_unpool1d,
    max_unpool2d,
    multi_margin_loss,
    unfold,
)
from ._functional.linear import (
    alpha_dropout,
    bilinear,
    cosine_similarity,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    embedding,
    linear,
    normalize,
    one_hot,
    pairwise_distance,
)
from ._functional.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ._functional.loss_extra import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from ._functional.norm import batch_norm, group_norm, instance_norm, layer_norm, rms_norm
from ._functional.padding import pad
from ._functional.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ._functional.sampling import affine_grid, grid_sample, interpolate, pixel_shuffle, pixel_unshuffle
from ._functional.softmax import log_softmax, softmax, softmin


def relu_(input):
    """In-place ``relu``."""
    return relu(input, inplace=True)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _inplace(fn):
    def op(input, *args, **kwargs):
        return fn(input, *args, inplace=True, **kwargs)

    op.__name__ = fn.__name__ + "_"
    op.__doc__ = f"In-place ``{fn.__name__}``."
    return op


elu_ = _inplace(elu)
celu_ = _inplace(celu)
selu_ = _inplace(selu)
leaky_relu_ = _inplace(leaky_relu)
hardtanh_ = _inplace(hardtanh)
threshold_ = _inplace(threshold)
rrelu_ = _inplace(rrelu)


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated alias of ``interpolate(..., mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated alias of ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "affine_grid",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "cross_entropy",
    "ctc_loss",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "elu_",
    "embedding",
    "embedding_bag",
    "fold",
    "gaussian_nll_loss",
    "gelu",
    "glu",
    "grid_sample",
    "group_norm",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "hinge_embedding_loss",
    "huber_loss",
    "instance_norm",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "local_response_norm",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "mish",
    "mse_loss",
    "multi_head_attention_forward",
    "multi_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "scaled_dot_product_attention",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]
