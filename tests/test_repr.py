"""repr of tensors, recorded from PyTorch 2.13 (``torch.`` printed as ``ember.``, the one allowed difference)."""

from __future__ import annotations

import ember
import pytest

# (expression building the tensor, with ``ember`` standing for ``torch``; PyTorch 2.13 repr)
CASES = [
    ("ember.tensor([1., 2.5, -3.])", "tensor([ 1.0000,  2.5000, -3.0000])"),
    ("ember.tensor([1., 2., 3.])", "tensor([1., 2., 3.])"),
    ("ember.tensor(3.5)", "tensor(3.5000)"),
    ("ember.tensor(3)", "tensor(3)"),
    ("ember.tensor([1, 2], dtype=ember.int32)", "tensor([1, 2], dtype=ember.int32)"),
    ("ember.tensor([[1, -20], [300, 4]])", "tensor([[  1, -20],\n        [300,   4]])"),
    ("ember.tensor([True, False])", "tensor([ True, False])"),
    ("ember.tensor([1.5, 2.25], dtype=ember.float64)", "tensor([1.5000, 2.2500], dtype=ember.float64)"),
    ("ember.tensor([1.5, 2.25], dtype=ember.float16)", "tensor([1.5000, 2.2500], dtype=ember.float16)"),
    ("ember.tensor([1.5, 2.25], dtype=ember.bfloat16)", "tensor([1.5000, 2.2500], dtype=ember.bfloat16)"),
    ("ember.tensor([1, 255], dtype=ember.uint8)", "tensor([  1, 255], dtype=ember.uint8)"),
    ("ember.tensor([-1, 5], dtype=ember.int8)", "tensor([-1,  5], dtype=ember.int8)"),
    ("ember.tensor([1+2j, -0.5j])", "tensor([1.+2.0000j, -0.-0.5000j])"),
    ("ember.tensor([1+2j], dtype=ember.complex128)", "tensor([1.+2.j], dtype=ember.complex128)"),
    ("ember.tensor([])", "tensor([])"),
    ("ember.zeros(0, dtype=ember.int64)", "tensor([], dtype=ember.int64)"),
    ("ember.zeros(2, 0)", "tensor([], size=(2, 0))"),
    ("ember.tensor([1e-5, 1e5])", "tensor([1.0000e-05, 1.0000e+05])"),
    ("ember.tensor([1.5e10, 1.])", "tensor([1.5000e+10, 1.0000e+00])"),
    (
        "ember.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
        "tensor([   nan,    inf,   -inf, 1.5000])",
    ),
    (
        "ember.arange(8.).reshape(2, 2, 2)",
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])",
    ),
    ("ember.arange(1001)", "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (
        "ember.arange(2000.).reshape(40, 50)",
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n         4.9000e+01],\n        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n         9.9000e+01],\n        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n         1.4900e+02],\n        ...,\n        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n         1.8990e+03],\n        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n         1.9490e+03],\n        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n         1.9990e+03]])",
    ),
    ("ember.tensor([1., 2.], requires_grad=True)", "tensor([1., 2.], requires_grad=True)"),
    ("ember.tensor([1., 2.], requires_grad=True) * 2", "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    ("ember.tensor([-0., 0.])", "tensor([-0., 0.])"),
    ("ember.tensor([0.001, 0.0001])", "tensor([1.0000e-03, 1.0000e-04])"),
    ("ember.tensor(2.5, dtype=ember.float64)", "tensor(2.5000, dtype=ember.float64)"),
    ("ember.tensor(True)", "tensor(True)"),
    (
        "ember.tensor([[1.123456789, 200.5], [-3., 0.]])",
        "tensor([[  1.1235, 200.5000],\n        [ -3.0000,   0.0000]])",
    ),
    (
        "ember.arange(30.) / 7",
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n        3.8571, 4.0000, 4.1429])",
    ),
    (
        "ember.arange(40) * 1001",
        "tensor([    0,  1001,  2002,  3003,  4004,  5005,  6006,  7007,  8008,  9009,\n        10010, 11011, 12012, 13013, 14014, 15015, 16016, 17017, 18018, 19019,\n        20020, 21021, 22022, 23023, 24024, 25025, 26026, 27027, 28028, 29029,\n        30030, 31031, 32032, 33033, 34034, 35035, 36036, 37037, 38038, 39039])",
    ),
    (
        "ember.arange(3000).reshape(3, 1000)",
        "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n        [1000, 1001, 1002,  ..., 1997, 1998, 1999],\n        [2000, 2001, 2002,  ..., 2997, 2998, 2999]])",
    ),
    ("ember.tensor([1e-6+1j, 2+3e5j])", "tensor([1.0000e-06+1.0000e+00j, 2.0000e+00+3.0000e+05j])"),
    ("ember.tensor(1.5-2j)", "tensor(1.5000-2.j)"),
    (
        "ember.tensor([1e10, 1.], dtype=ember.float64)",
        "tensor([1.0000e+10, 1.0000e+00], dtype=ember.float64)",
    ),
    ("ember.tensor([[True], [False]])", "tensor([[ True],\n        [False]])"),
    ("ember.zeros(0, 3, dtype=ember.int8)", "tensor([], size=(0, 3), dtype=ember.int8)"),
    (
        "ember.arange(16).reshape(2, 2, 2, 2)",
        "tensor([[[[ 0,  1],\n          [ 2,  3]],\n\n         [[ 4,  5],\n          [ 6,  7]]],\n\n\n        [[[ 8,  9],\n          [10, 11]],\n\n         [[12, 13],\n          [14, 15]]]])",
    ),
    ("ember.tensor([float('nan')])", "tensor([nan])"),
    ("ember.zeros(3)", "tensor([0., 0., 0.])"),
    ("ember.tensor([-1., -10., 100.])", "tensor([ -1., -10., 100.])"),
    ("ember.tensor([1e9, 2.])", "tensor([1.0000e+09, 2.0000e+00])"),
]


@pytest.mark.parametrize("expr, expected", CASES, ids=list(range(len(CASES))))
def test_repr_matches_pytorch(expr, expected):
    assert repr(eval(expr)) == expected


def test_printoptions_and_device_suffix():
    try:
        ember.set_printoptions(precision=2)
        assert repr(ember.tensor([1.2345, 2.0])) == "tensor([1.23, 2.00])"
        ember.set_printoptions(sci_mode=True)
        assert repr(ember.tensor([1.5])) == "tensor([1.50e+00])"
    finally:
        ember.set_printoptions(profile="default")
    assert repr(ember.tensor([1.2345])) == "tensor([1.2345])"
    assert repr(ember.tensor([1, 2], device="cpu:1")) == "tensor([1, 2], device='cpu:1')"
    assert repr(ember.Size([2, 3])) == "ember.Size([2, 3])"
    assert str(ember.tensor(2.5)) == "tensor(2.5000)" and f"{ember.tensor(2.5):.1f}" == "2.5"
