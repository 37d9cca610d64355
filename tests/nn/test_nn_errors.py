"""Error types and messages of nn layers and functions, as PyTorch 2.13 raises them (recorded)."""

from __future__ import annotations

import ember as torch
import pytest

nn = torch.nn
F = torch.nn.functional

CASES = {
    "linear": (
        lambda: nn.Linear(4, 5)(torch.zeros(2, 3)),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    ),
    "conv_ch": (
        lambda: nn.Conv2d(1, 32, 3)(torch.zeros(64, 3, 28, 28)),
        RuntimeError,
        "Given groups=1, weight of size [32, 1, 3, 3], expected input[64, 3, 28, 28] to have 1 channels, but got 3 channels instead",
    ),
    "conv_dim": (
        lambda: nn.Conv2d(1, 32, 3)(torch.zeros(2, 3)),
        RuntimeError,
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]",
    ),
    "conv_small": (
        lambda: nn.Conv2d(1, 2, 3)(torch.zeros(1, 1, 2, 2)),
        RuntimeError,
        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than actual input size",
    ),
    "ce_batch": (
        lambda: F.cross_entropy(torch.zeros(3, 4), torch.tensor([1, 2])),
        ValueError,
        "Expected input batch_size (3) to match target batch_size (2).",
    ),
    "ce_oob": (
        lambda: F.cross_entropy(torch.zeros(2, 4), torch.tensor([1, 5])),
        IndexError,
        "Target 5 is out of bounds.",
    ),
    "bn_dim": (
        lambda: nn.BatchNorm2d(3)(torch.zeros(2, 3, 4)),
        ValueError,
        "expected 4D input (got 3D input)",
    ),
    "ln": (
        lambda: nn.LayerNorm(4)(torch.zeros(3, 5)),
        RuntimeError,
        "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[3, 5]",
    ),
    "emb": (lambda: nn.Embedding(3, 2)(torch.tensor([3])), IndexError, "index out of range in self"),
    "pool_small": (
        lambda: F.max_pool2d(torch.zeros(1, 1, 1, 1), 2),
        RuntimeError,
        "Given input size: (1x1x1). Calculated output size: (1x0x0). Output size is too small",
    ),
    "pool_pad": (
        lambda: F.max_pool2d(torch.zeros(1, 1, 4, 4), 2, padding=2),
        RuntimeError,
        "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1",
    ),
    "dropout_p": (
        lambda: nn.Dropout(1.5),
        ValueError,
        "dropout probability has to be between 0 and 1, but got 1.5",
    ),
    "mse_warn_none": (
        lambda: F.mse_loss(torch.zeros(3), torch.zeros(3), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "conv_groups": (
        lambda: nn.Conv2d(3, 4, 3, groups=2),
        ValueError,
        "in_channels must be divisible by groups",
    ),
    "softmax_int": (
        lambda: F.softmax(torch.tensor([1, 2]), 0),
        NotImplementedError,
        "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
    ),
    "bce_range": (
        lambda: F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0])),
        RuntimeError,
        "all elements of input should be between 0 and 1",
    ),
    "bce_shape": (
        lambda: F.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([[1.0], [0.0]])),
        ValueError,
        "Using a target size (torch.Size([2, 1])) that is different to the input size (torch.Size([2])) is deprecated. Please ensure they have the same size.",
    ),
    "bcel_shape": (
        lambda: F.binary_cross_entropy_with_logits(torch.tensor([0.5, 0.5]), torch.tensor([[1.0], [0.0]])),
        ValueError,
        "Target size (torch.Size([2, 1])) must be the same as input size (torch.Size([2]))",
    ),
    "load_sd": (
        lambda: nn.Linear(2, 2).load_state_dict({"weight": torch.zeros(3, 2), "bias": torch.zeros(2)}),
        RuntimeError,
        "Error(s) in loading state_dict for Linear:",
    ),
    "nll_float_target": (
        lambda: F.nll_loss(torch.zeros(2, 3), torch.tensor([0.0, 1.0])),
        RuntimeError,
        "expected target dtype to be Long or Byte, but got Float",
    ),
    "pad_odd": (
        lambda: F.pad(torch.zeros(2, 3), (1,)),
        RuntimeError,
        "Padding length must be divisible by 2",
    ),
    "reflect_big": (
        lambda: F.pad(torch.zeros(1, 2, 3), (3, 0), mode="reflect"),
        RuntimeError,
        "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 0) at dimension 2 of input [1, 2, 3]",
    ),
    "group_norm": (
        lambda: F.group_norm(torch.zeros(2, 3, 4), 2),
        RuntimeError,
        "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 3, 4] and num_groups=2",
    ),
    "one_hot_big": (
        lambda: F.one_hot(torch.tensor([3]), 2),
        RuntimeError,
        "Class values must be smaller than num_classes.",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_message(name: str) -> None:
    fn, exc, message = CASES[name]
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value).split("\n")[0][:230] == message
