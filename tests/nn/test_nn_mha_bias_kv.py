"""MultiheadAttention with ``add_bias_kv`` and ``add_zero_attn`` against PyTorch's results."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import nn


def _inputs(lib, kd, batch_first, unbatched):  # type: ignore[no-untyped-def]
    def mk(shape, ph):  # type: ignore[no-untyped-def]
        return lib.tensor(
            np.cos(np.arange(int(np.prod(shape))) * 0.3 + ph).reshape(shape), requires_grad=True
        )

    if unbatched:
        return mk((3, 4), 0), mk((5, kd), 1), mk((5, kd), 2)
    if batch_first:
        return mk((2, 3, 4), 0), mk((2, 5, kd), 1), mk((2, 5, kd), 2)
    return mk((3, 2, 4), 0), mk((5, 2, kd), 1), mk((5, 2, kd), 2)


def _masks(lib, mask, kpm, unbatched):  # type: ignore[no-untyped-def]
    kw = {}
    if mask == "bool":
        kw["attn_mask"] = lib.tensor(np.triu(np.ones((3, 5)), 2).astype(bool))
    elif mask == "float":
        kw["attn_mask"] = lib.tensor(np.sin(np.arange(15)).reshape(3, 5))
    if kpm:
        rows = (
            [False, True, False, False, True]
            if unbatched
            else [[False, False, False, True, True], [False] * 5]
        )
        kw["key_padding_mask"] = lib.tensor(np.array(rows))
    return kw


def run(
    lib,
    add_bias_kv,
    add_zero_attn,
    kdim=None,
    mask=None,
    kpm=False,
    batch_first=False,
    unbatched=False,
    avg=True,
):  # type: ignore[no-untyped-def]
    """Parameter names, output shapes, weighted sums of outputs and of every gradient."""
    m = lib.nn.MultiheadAttention(
        4,
        2,
        add_bias_kv=add_bias_kv,
        add_zero_attn=add_zero_attn,
        kdim=kdim,
        vdim=kdim,
        batch_first=batch_first,
    ).double()
    names = [n for n, _ in m.named_parameters()]
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.sin(np.arange(p.numel()) * 0.61 + i).reshape(tuple(p.shape)) * 0.7))
    q, k, v = _inputs(lib, kdim or 4, batch_first, unbatched)
    out, w = m(q, k, v, average_attn_weights=avg, **_masks(lib, mask, kpm, unbatched))
    (out.sum() + (w * w).sum()).backward()

    def f(t):  # type: ignore[no-untyped-def]
        return float((t.detach().cpu().numpy() * np.sin(np.arange(t.numel())).reshape(tuple(t.shape))).sum())

    grads = sum(f(p.grad) for p in m.parameters())
    return [names, list(out.shape), list(w.shape), f(out), f(w), f(q.grad), f(k.grad), f(v.grad), grads]


CASES = [
    (True, False, {}),
    (False, True, {}),
    (True, True, {"mask": "bool", "kpm": True}),
    (True, True, {"mask": "float", "kdim": 3, "batch_first": True}),
    (False, True, {"kpm": True, "unbatched": True, "avg": False}),
]

# PyTorch 2.x results of run(torch, *case)
EXPECTED = [
    [
        ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"],
        [3, 2, 4],
        [2, 3, 6],
        -0.6248152444785535,
        1.069576712930942,
        0.5748601422761952,
        -0.1683309981313954,
        0.8108286138605865,
        11.95915635739198,
    ],
    [
        ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"],
        [3, 2, 4],
        [2, 3, 6],
        0.15062116501454081,
        1.2383503393640627,
        -0.5349939244699116,
        2.6372353874252026,
        -0.0861353062607365,
        25.745667879300207,
    ],
    [
        ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"],
        [3, 2, 4],
        [2, 3, 7],
        -0.6612779499719946,
        1.7543467792324834,
        0.2403194001518308,
        0.1062835823791673,
        0.5668702737867106,
        10.329300813996097,
    ],
    [
        [
            "q_proj_weight",
            "k_proj_weight",
            "v_proj_weight",
            "in_proj_bias",
            "bias_k",
            "bias_v",
            "out_proj.weight",
            "out_proj.bias",
        ],
        [2, 3, 4],
        [2, 3, 7],
        0.6638576921004584,
        -1.4356491595482483,
        -0.3205564128084456,
        0.05466830031865085,
        0.23492736600110148,
        12.18416934252577,
    ],
    [
        ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"],
        [3, 4],
        [2, 3, 6],
        0.19353884640620567,
        0.6210091300923885,
        0.9088425105341001,
        1.2375104887858746,
        -0.17257578680299923,
        12.302913752690696,
    ],
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_matches_pytorch(i: int) -> None:
    a, z, kw = CASES[i]
    got, want = run(ember, a, z, **kw), EXPECTED[i]
    assert got[:3] == want[:3]
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-10, atol=1e-12)


def test_parameters_and_state_dict() -> None:
    ember.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True)
    assert list(m.state_dict()) == [
        "in_proj_weight",
        "in_proj_bias",
        "bias_k",
        "bias_v",
        "out_proj.weight",
        "out_proj.bias",
    ]
    assert list(m.bias_k.shape) == [1, 1, 4] and m.add_zero_attn
    assert float(m.bias_k.abs().sum()) > 0  # xavier_normal_, not left empty
    plain = nn.MultiheadAttention(4, 2)
    assert plain.bias_k is None and plain.bias_v is None and not plain.add_zero_attn
