"""``ember.nn.functional`` (and its ops re-exported at top level)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as F

from .table_spec import E, Entry, P, U, idx

_X = U(2, 3)
_IMG = U(1, 2, 4, 4)
_SEQ = U(1, 2, 6)
_VOL = U(1, 1, 2, 4, 4)
_CLS = idx([2, 0])
_SIGN = ember.tensor([1.0, -1.0], dtype=ember.float64)
_PROB = ember.tensor([[0.2, 0.7, 0.4], [0.9, 0.1, 0.5]], dtype=ember.float64)

_ACT = [
    "celu",
    "elu",
    "gelu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "logsigmoid",
    "mish",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
]
_INPLACE = ["celu_", "elu_", "hardtanh_", "leaky_relu_", "relu_", "selu_"]


def _seeded(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """Random ops with the same seed on every call, so finite differences see one mask."""

    def run(*xs: ember.Tensor) -> Any:
        ember.manual_seed(0)
        return op(*xs, *args, **kwargs)

    return run


def _losses() -> list[Entry]:
    t = U(2, 3)
    return [
        *(E(f"F.{n}", U(2, 3), t) for n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")),
        E("F.soft_margin_loss", _X, ember.tensor([[1.0, -1, 1], [-1, 1, 1]], dtype=ember.float64)),
        E("F.binary_cross_entropy", U(2, 3, lo=0.1, hi=0.9), _PROB),
        E("F.binary_cross_entropy_with_logits", _X, _PROB),
        E("F.cross_entropy", _X, _CLS),
        E("F.cross_entropy", _X, _PROB, case="probabilities", label_smoothing=0.1),
        E("F.nll_loss", _X, _CLS),
        E("F.kl_div", _X, _PROB, reduction="batchmean"),
        E("F.poisson_nll_loss", _X, _PROB),
        E("F.gaussian_nll_loss", _X, U(2, 3), P(2, 3)),
        E("F.hinge_embedding_loss", _X, ember.tensor([[1.0, -1, 1], [-1, 1, 1]], dtype=ember.float64)),
        E("F.cosine_embedding_loss", _X, U(2, 3), _SIGN),
        E("F.margin_ranking_loss", U(2), U(2), _SIGN),
        E("F.multi_margin_loss", _X, _CLS),
        E("F.multilabel_soft_margin_loss", _X, _PROB),
        E("F.triplet_margin_loss", _X, U(2, 3), U(2, 3)),
        E(
            "F.ctc_loss",
            U(4, 1, 3),
            fn=lambda x: F.ctc_loss(x.log_softmax(2), idx([[1, 2]]), [4], [2]),
            gradgrad=False,
        ),
    ]


ENTRIES: list[Entry] = [
    *(E(f"F.{n}") for n in _ACT),
    *(E(f"F.{n}", _X, fn=lambda x, n=n: getattr(F, n)(x.clone())) for n in _INPLACE),
    E("F.gelu", case="tanh", approximate="tanh"),
    E("F.threshold", _X, 0.2, -1.0),
    E("F.threshold_", _X, fn=lambda x: F.threshold_(x.clone(), 0.2, -1.0)),
    E("F.rrelu", _X),
    E("F.rrelu_", _X, fn=lambda x: F.rrelu_(x.clone())),
    E("F.prelu", _X, U(3)),
    E("F.glu", U(2, 4)),
    E("F.softmin", _X, 1),
    E("F.normalize", _X),
    E("F.linear", _X, U(4, 3), U(4)),
    E("F.bilinear", _X, U(2, 2), U(4, 3, 2), U(4)),
    E("F.embedding", idx([[0, 2], [1, 0]]), U(3, 2), fn=lambda w: F.embedding(idx([[0, 2], [1, 0]]), w)),
    E("F.embedding_bag", U(3, 2), fn=lambda w: F.embedding_bag(idx([0, 2, 1, 0]), w, idx([0, 2]))),
    E("F.pad", _X, (1, 2)),
    E("F.pad", U(1, 2, 3), (1, 1), case="reflect", mode="reflect"),
    E("F.pad", U(1, 2, 3), (2, 1), case="replicate", mode="replicate"),
    E("F.pad", U(1, 2, 3), (2, 1), case="circular", mode="circular"),
    E("F.channel_shuffle", U(1, 4, 2, 2), 2),
    E("F.pixel_shuffle", U(1, 4, 2, 2), 2),
    E("F.pixel_unshuffle", U(1, 1, 4, 4), 2),
    E("pixel_shuffle", U(1, 4, 2, 2), 2),
    E("pixel_unshuffle", U(1, 1, 4, 4), 2),
    E("F.conv1d", _SEQ, U(3, 2, 3), U(3), padding=1),
    E("F.conv2d", _IMG, U(2, 2, 3, 3), U(2), stride=2, padding=1),
    E("F.conv3d", _VOL, U(2, 1, 2, 2, 2), U(2)),
    E("F.conv_transpose1d", _SEQ, U(2, 3, 3), U(3), stride=2),
    E("F.conv_transpose2d", U(1, 2, 3, 3), U(2, 1, 2, 2), U(1), stride=2),
    E("conv1d", _SEQ, U(3, 2, 3), U(3)),
    E("conv2d", _IMG, U(2, 2, 3, 3), U(2)),
    E("conv_transpose1d", _SEQ, U(2, 3, 3), U(3)),
    E("conv_transpose2d", U(1, 2, 3, 3), U(2, 1, 2, 2), U(1)),
    E("F.avg_pool1d", _SEQ, 2),
    E("avg_pool1d", _SEQ, 2),
    E("F.avg_pool2d", _IMG, 2),
    E("F.avg_pool3d", _VOL, 2),
    E("F.max_pool1d", _SEQ, 2),
    E("max_pool1d", _SEQ, 2),
    E("F.max_pool2d", _IMG, 2),
    E("max_pool2d", _IMG, 2),
    E("F.max_pool3d", _VOL, 2),
    E("F.max_pool1d_with_indices", _SEQ, fn=lambda x: F.max_pool1d_with_indices(x, 2)[0]),
    E("F.max_pool2d_with_indices", _IMG, fn=lambda x: F.max_pool2d_with_indices(x, 2)[0]),
    E("F.adaptive_avg_pool1d", _SEQ, 4),
    E("F.adaptive_avg_pool2d", _IMG, 3),
    E("F.adaptive_avg_pool3d", _VOL, 2),
    E("F.adaptive_max_pool1d", _SEQ, 4),
    E("F.adaptive_max_pool2d", _IMG, 3),
    E("F.adaptive_max_pool1d_with_indices", _SEQ, fn=lambda x: F.adaptive_max_pool1d_with_indices(x, 4)[0]),
    E("F.adaptive_max_pool2d_with_indices", _IMG, fn=lambda x: F.adaptive_max_pool2d_with_indices(x, 3)[0]),
    E("F.lp_pool1d", U(1, 2, 6, lo=0.2, hi=1.0), 2.0, 2),
    E("F.lp_pool2d", U(1, 1, 4, 4, lo=0.2, hi=1.0), 2.0, 2),
    E("F.max_unpool1d", U(1, 1, 2), idx([[[1, 2]]]), 2),
    E("F.max_unpool2d", U(1, 1, 1, 2), idx([[[[1, 6]]]]), 2),
    E("F.fold", U(1, 4, 4), (3, 3), 2),
    E("F.unfold", U(1, 1, 3, 3), 2),
    E("F.interpolate", _IMG, scale_factor=2, mode="bilinear", align_corners=False),
    E("F.interpolate", _SEQ, case="nearest", size=9),
    E("F.upsample", _IMG, scale_factor=2, mode="nearest"),
    E("F.upsample_bilinear", _IMG, scale_factor=2),
    E("F.upsample_nearest", _IMG, scale_factor=2),
    E("F.batch_norm", U(3, 2), None, None, U(2), U(2), training=True),
    E("F.instance_norm", U(2, 2, 3), weight=None),
    E("F.layer_norm", _X, (3,), U(3), U(3)),
    E("layer_norm", _X, (3,), U(3), U(3)),
    E("F.group_norm", U(2, 4, 2), 2, U(4), U(4)),
    E("group_norm", U(2, 4, 2), 2, U(4), U(4)),
    E("F.rms_norm", _X, (3,), U(3)),
    E("F.local_response_norm", U(1, 4, 2), 3),
    E("F.scaled_dot_product_attention", U(1, 2, 3), U(1, 2, 3), U(1, 2, 3)),
    E(
        "F.multi_head_attention_forward",
        U(2, 1, 4),
        U(4, 4),
        U(4, 4),
        fn=lambda x, w, wo: F.multi_head_attention_forward(
            x, x, x, 2, (w, w, w), (None, None, None), wo, None, need_weights=False
        )[0],
    ),
    E("F.dropout", _X, fn=_seeded(F.dropout, 0.5)),
    E("dropout", _X, fn=_seeded(ember.dropout, 0.5, True)),
    E("F.dropout1d", U(2, 2, 3), fn=_seeded(F.dropout1d, 0.5)),
    E("F.dropout2d", U(1, 2, 3, 3), fn=_seeded(F.dropout2d, 0.5)),
    E("F.dropout3d", U(1, 2, 2, 2, 2), fn=_seeded(F.dropout3d, 0.5)),
    E("F.alpha_dropout", _X, fn=_seeded(F.alpha_dropout, 0.5, True)),
    E("F.gumbel_softmax", _X, fn=_seeded(F.gumbel_softmax)),
    E("F.affine_grid", U(1, 2, 3), (1, 1, 2, 3), align_corners=False),
    E("F.grid_sample", U(1, 1, 3, 3), U(1, 2, 2, 2, lo=-0.9, hi=0.9), align_corners=False),
    *_losses(),
]
