"""End to end: the small CNN of the training demo learns; utils and layer odds and ends."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import nn
from ember.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters


def _digits(n: int, rng: np.random.Generator) -> tuple[ember.Tensor, ember.Tensor]:
    """8x8 images: class k has a bright 2x2 block at one of 4 corners (k = corner)."""
    y = rng.integers(0, 4, n)
    x = rng.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
    for i, k in enumerate(y):
        r, c = divmod(int(k), 2)
        x[i, 0, r * 5 : r * 5 + 3, c * 5 : c * 5 + 3] += 2.0
    return ember.tensor(x), ember.tensor(y)


def test_small_cnn_learns() -> None:
    ember.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = _digits(128, rng)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16, 4),
    )  # fmt: skip
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for _ in range(30):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.3 * first
    model.eval()
    with ember.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    assert acc > 0.9


def test_clip_grad() -> None:
    a = nn.Parameter(ember.zeros(2))
    b = nn.Parameter(ember.zeros(2))
    a.grad, b.grad = ember.tensor([3.0, 0.0]), ember.tensor([0.0, 4.0])
    total = clip_grad_norm_([a, b], 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad.cpu().numpy(), [0.6, 0.0], rtol=1e-5)
    assert clip_grad_norm_([a, b], 10.0, norm_type="inf").item() == pytest.approx(0.8, rel=1e-5)
    clip_grad_value_([a, b], 0.5)
    assert b.grad.tolist() == [0.0, 0.5]


def test_parameters_vector_roundtrip() -> None:
    m = nn.Linear(3, 2)
    v = parameters_to_vector(m.parameters())
    assert v.shape == (8,)
    vector_to_parameters(ember.arange(8, dtype=ember.float32), m.parameters())
    assert m.bias.tolist() == [6.0, 7.0] and isinstance(m.weight, nn.Parameter)


def test_module_layers_shapes() -> None:
    x = ember.randn(2, 4, 8, 8)
    assert nn.AdaptiveAvgPool2d((1, 1))(x).shape == (2, 4, 1, 1)
    assert nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1)(x).shape == (2, 3, 16, 16)
    assert nn.Conv2d(4, 6, 3, padding="same", padding_mode="reflect")(x).shape == (2, 6, 8, 8)
    assert nn.Conv1d(4, 2, 3)(ember.randn(2, 4, 10)).shape == (2, 2, 8)
    assert nn.PixelShuffle(2)(x).shape == (2, 1, 16, 16)
    assert nn.Upsample(scale_factor=2)(x).shape == (2, 4, 16, 16)
    assert nn.GroupNorm(2, 4)(x).shape == x.shape
    assert nn.Unflatten(1, (2, 2))(x).shape == (2, 2, 2, 8, 8)
    assert nn.Embedding(10, 3)(ember.tensor([[1, 2], [3, 4]])).shape == (2, 2, 3)
    assert nn.Bilinear(3, 4, 5)(ember.randn(2, 3), ember.randn(2, 4)).shape == (2, 5)
    vals, idx = nn.MaxPool2d(2, return_indices=True)(x)
    assert idx.dtype is ember.int64 and vals.shape == idx.shape == (2, 4, 4, 4)
    for act in (nn.GELU(), nn.SiLU(), nn.Mish(), nn.Hardswish(), nn.PReLU(), nn.Softmax(dim=1), nn.GLU(1)):
        assert act(x).shape[0] == 2


def test_pack_pad_roundtrip() -> None:
    from ember.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, unpack_sequence

    x = ember.arange(15, dtype=ember.float32).reshape(5, 3)
    packed = pack_padded_sequence(x, [3, 5, 2], enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2]
    assert packed.data.tolist() == [1.0, 0.0, 2.0, 4.0, 3.0, 5.0, 7.0, 6.0, 10.0, 13.0]
    padded, lengths = pad_packed_sequence(packed, total_length=6)
    assert lengths.tolist() == [3, 5, 2] and padded.shape == (6, 3)
    assert padded[:, 2].tolist() == [2.0, 5.0, 0.0, 0.0, 0.0, 0.0]
    seqs = unpack_sequence(pack_sequence([ember.ones(2), ember.ones(3)], enforce_sorted=False))
    assert [s.shape[0] for s in seqs] == [2, 3]
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(x, [3, 5, 2])


def test_lazy_layers_materialise_in_place() -> None:
    m = nn.Sequential(nn.LazyConv2d(4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    params = list(m.parameters())
    opt = ember.optim.SGD(params, lr=0.1)
    y = m(ember.randn(2, 3, 5, 5))
    assert y.shape == (2, 2)
    assert [tuple(p.shape) for p in m.parameters()] == [(4, 3, 3, 3), (4,), (2, 36), (2,)]
    assert all(p is q for p, q in zip(params, m.parameters()))
    assert type(m[0]) is nn.Conv2d and type(m[3]) is nn.Linear
    y.sum().backward()
    opt.step()
    assert abs(m[3].weight).max().item() <= 1 / 6 + 0.1 * abs(m[3].weight.grad).max().item() + 1e-6
