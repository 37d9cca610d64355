"""Layer classes of ``ember.nn``, one module per family as in ``torch.nn.modules``.

A family's module is imported when one of its names is first used (``nn.Linear``,
``from ember.nn.modules import LSTM``): a program uses a few layers, and importing every family
would be about a tenth of ``import ember``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .activation import (
        CELU,
        ELU,
        GELU,
        GLU,
        SELU,
        Hardshrink,
        Hardsigmoid,
        Hardswish,
        Hardtanh,
        LeakyReLU,
        LogSigmoid,
        LogSoftmax,
        Mish,
        PReLU,
        ReLU,
        ReLU6,
        RReLU,
        Sigmoid,
        SiLU,
        Softmax,
        Softmax2d,
        Softmin,
        Softplus,
        Softshrink,
        Softsign,
        Tanh,
        Tanhshrink,
        Threshold,
    )
    from .channelshuffle import ChannelShuffle
    from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
    from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
    from .data_parallel import DataParallel
    from .distance import CosineSimilarity, PairwiseDistance
    from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
    from .flatten import Flatten, Unflatten
    from .fold import Fold, Unfold
    from .lazy import LazyConv1d, LazyConv2d, LazyLinear
    from .linear import Bilinear, Identity, Linear
    from .loss import (
        BCELoss,
        BCEWithLogitsLoss,
        CosineEmbeddingLoss,
        CrossEntropyLoss,
        CTCLoss,
        GaussianNLLLoss,
        HingeEmbeddingLoss,
        HuberLoss,
        KLDivLoss,
        L1Loss,
        MarginRankingLoss,
        MSELoss,
        MultiLabelSoftMarginLoss,
        MultiMarginLoss,
        NLLLoss,
        NLLLoss2d,
        PoissonNLLLoss,
        SmoothL1Loss,
        SoftMarginLoss,
        TripletMarginLoss,
    )
    from .module import Module
    from .normalization import (
        BatchNorm1d,
        BatchNorm2d,
        BatchNorm3d,
        GroupNorm,
        InstanceNorm1d,
        InstanceNorm2d,
        InstanceNorm3d,
        LayerNorm,
        LocalResponseNorm,
        RMSNorm,
        SyncBatchNorm,
    )
    from .padding import (
        CircularPad1d,
        CircularPad2d,
        CircularPad3d,
        ConstantPad1d,
        ConstantPad2d,
        ConstantPad3d,
        ReflectionPad1d,
        ReflectionPad2d,
        ReflectionPad3d,
        ReplicationPad1d,
        ReplicationPad2d,
        ReplicationPad3d,
        ZeroPad1d,
        ZeroPad2d,
        ZeroPad3d,
    )
    from .pixelshuffle import PixelShuffle, PixelUnshuffle
    from .pooling import (
        AdaptiveAvgPool1d,
        AdaptiveAvgPool2d,
        AdaptiveAvgPool3d,
        AdaptiveMaxPool1d,
        AdaptiveMaxPool2d,
        AvgPool1d,
        AvgPool2d,
        AvgPool3d,
        LPPool1d,
        LPPool2d,
        MaxPool1d,
        MaxPool2d,
        MaxPool3d,
        MaxUnpool1d,
        MaxUnpool2d,
    )
    from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
    from .sparse import Embedding, EmbeddingBag
    from .transformer import (
        MultiheadAttention,
        Transformer,
        TransformerDecoder,
        TransformerDecoderLayer,
        TransformerEncoder,
        TransformerEncoderLayer,
    )
    from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

# family module -> the layer classes it defines
_FAMILIES: dict[str, str] = {
    "activation": (
        "CELU ELU GELU GLU SELU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU "
        "LogSigmoid LogSoftmax Mish PReLU ReLU ReLU6 RReLU Sigmoid SiLU Softmax "
        "Softmax2d Softmin Softplus Softshrink Softsign Tanh Tanhshrink Threshold"
    ),
    "channelshuffle": "ChannelShuffle",
    "container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d",
    "data_parallel": "DataParallel",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "AlphaDropout Dropout Dropout1d Dropout2d Dropout3d",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "lazy": "LazyConv1d LazyConv2d LazyLinear",
    "linear": "Bilinear Identity Linear",
    "loss": (
        "BCELoss BCEWithLogitsLoss CosineEmbeddingLoss CrossEntropyLoss CTCLoss "
        "GaussianNLLLoss HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss MarginRankingLoss "
        "MSELoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d "
        "PoissonNLLLoss SmoothL1Loss SoftMarginLoss TripletMarginLoss"
    ),
    "module": "Module",
    "normalization": (
        "BatchNorm1d BatchNorm2d BatchNorm3d GroupNorm InstanceNorm1d InstanceNorm2d "
        "InstanceNorm3d LayerNorm LocalResponseNorm RMSNorm SyncBatchNorm"
    ),
    "padding": (
        "CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d "
        "ConstantPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d ReplicationPad1d "
        "ReplicationPad2d ReplicationPad3d ZeroPad1d ZeroPad2d ZeroPad3d"
    ),
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": (
        "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d "
        "AdaptiveMaxPool2d AvgPool1d AvgPool2d AvgPool3d LPPool1d LPPool2d MaxPool1d "
        "MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d"
    ),
    "rnn": "GRU LSTM RNN GRUCell LSTMCell RNNBase RNNCell RNNCellBase",
    "sparse": "Embedding EmbeddingBag",
    "transformer": (
        "MultiheadAttention Transformer TransformerDecoder TransformerDecoderLayer "
        "TransformerEncoder TransformerEncoderLayer"
    ),
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}
_WHERE = {name: family for family, names in _FAMILIES.items() for name in names.split()}
_SUBMODULES = frozenset((*_FAMILIES, "_hooks", "_state_dict", "_util"))


def __getattr__(name: str) -> object:
    family = _WHERE.get(name)
    if family is not None:
        value = getattr(importlib.import_module(f"{__name__}.{family}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})


__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "GRU",
    "LSTM",
    "RNN",
    "SELU",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AlphaDropout",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Bilinear",
    "CTCLoss",
    "ChannelShuffle",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "CosineEmbeddingLoss",
    "CosineSimilarity",
    "CrossEntropyLoss",
    "DataParallel",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "Embedding",
    "EmbeddingBag",
    "Flatten",
    "Fold",
    "GRUCell",
    "GaussianNLLLoss",
    "GroupNorm",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "KLDivLoss",
    "L1Loss",
    "LPPool1d",
    "LPPool2d",
    "LSTMCell",
    "LayerNorm",
    "LazyConv1d",
    "LazyConv2d",
    "LazyLinear",
    "LeakyReLU",
    "Linear",
    "LocalResponseNorm",
    "LogSigmoid",
    "LogSoftmax",
    "MSELoss",
    "MarginRankingLoss",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "Mish",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "MultiheadAttention",
    "NLLLoss",
    "NLLLoss2d",
    "PReLU",
    "PairwiseDistance",
    "ParameterDict",
    "ParameterList",
    "PixelShuffle",
    "PixelUnshuffle",
    "PoissonNLLLoss",
    "RMSNorm",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
    "RReLU",
    "ReLU",
    "ReLU6",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "SyncBatchNorm",
    "Tanh",
    "Tanhshrink",
    "Threshold",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "TripletMarginLoss",
    "Unflatten",
    "Unfold",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]
