"""``ember.nn``: modules, parameters, ``functional``, ``init`` and ``utils``, as in ``torch.nn``."""

from __future__ import annotations

from . import functional, init, modules, parameter, utils
from .modules import (
    CELU, ELU, GELU, GLU, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AlphaDropout, AvgPool1d, AvgPool2d, BatchNorm1d,
    BatchNorm2d, BatchNorm3d, BCELoss, BCEWithLogitsLoss, Bilinear, CircularPad1d, CircularPad2d, ConstantPad1d,
    ConstantPad2d, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, CrossEntropyLoss, Dropout, Dropout1d,
    Dropout2d, Dropout3d, Embedding, Flatten, GroupNorm, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, HuberLoss,
    Identity, InstanceNorm1d, InstanceNorm2d, KLDivLoss, L1Loss, LayerNorm, LeakyReLU, Linear, LogSigmoid,
    LogSoftmax, MaxPool1d, MaxPool2d, Mish, Module, ModuleDict, ModuleList, MSELoss, NLLLoss, ParameterDict,
    ParameterList, PixelShuffle, PixelUnshuffle, PReLU, ReflectionPad1d, ReflectionPad2d, ReLU, ReLU6,
    ReplicationPad1d, ReplicationPad2d, RMSNorm, RReLU, SELU, Sequential, Sigmoid, SiLU, SmoothL1Loss, Softmax,
    Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold, Unflatten, Upsample,
    UpsamplingNearest2d, ZeroPad1d, ZeroPad2d,
)
from .parameter import Buffer, Parameter

__all__ = [
    "CELU", "ELU", "GELU", "GLU", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AlphaDropout", "AvgPool1d",
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear",
    "Buffer", "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "Conv1d", "Conv2d",
    "ConvTranspose1d", "ConvTranspose2d", "CrossEntropyLoss", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "Embedding", "Flatten", "GroupNorm", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "HuberLoss",
    "Identity", "InstanceNorm1d", "InstanceNorm2d", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSigmoid", "LogSoftmax", "MSELoss", "MaxPool1d", "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList",
    "NLLLoss", "PReLU", "Parameter", "ParameterDict", "ParameterList", "PixelShuffle", "PixelUnshuffle",
    "RMSNorm", "RReLU", "ReLU", "ReLU6", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "SELU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softmax2d", "Softmin",
    "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold", "Unflatten", "Upsample",
    "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d", "functional", "init", "modules", "parameter", "utils",
]
