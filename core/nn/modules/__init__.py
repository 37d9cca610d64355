"""Layer classes of ``ember.nn``, one module per family as in ``torch.nn.modules``."""

from __future__ import annotations

from .activation import (
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, PReLU, ReLU, ReLU6, RReLU, SELU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink,
    Softsign, Tanh, Tanhshrink, Threshold,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
)
from .module import Module
from .normalization import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm, RMSNorm,
)
from .padding import (
    CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d,
    ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d,
)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .sparse import Embedding
from .upsampling import Upsample, UpsamplingNearest2d

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AlphaDropout", "AvgPool1d", "AvgPool2d", "BCELoss",
    "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear", "CELU", "CircularPad1d",
    "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "CrossEntropyLoss", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "ELU", "Embedding", "Flatten", "GELU",
    "GLU", "GroupNorm", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "HuberLoss", "Identity",
    "InstanceNorm1d", "InstanceNorm2d", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid",
    "LogSoftmax", "MSELoss", "MaxPool1d", "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList", "NLLLoss",
    "PReLU", "ParameterDict", "ParameterList", "PixelShuffle", "PixelUnshuffle", "RMSNorm", "RReLU", "ReLU",
    "ReLU6", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "SELU", "Sequential",
    "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign",
    "Tanh", "Tanhshrink", "Threshold", "Unflatten", "Upsample", "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d",
]
