"""Regenerate ``torch_refs.json``: PyTorch's outputs and gradients for fixed float64 inputs.

Run with a Python that has PyTorch (not needed by the tests themselves)::

    /tmp/torchref/bin/python tests/nn/make_torch_refs.py

Each case is an expression evaluated with ``F`` (the functional module), ``lib`` (torch or
ember) and inputs ``a, b, c`` (float64 arrays; ``i`` names an int64 target); the gradient
is taken of ``sum(out * g)`` for a fixed ``g``.
"""

from __future__ import annotations

import json
import os

import numpy as np
import torch
import torch.nn.functional as F

# name: (expression, {input: shape or int list}, inputs that require grad)
CASES = {
    "conv2d_basic": ("F.conv2d(a, b, c)", {"a": (2, 3, 5, 5), "b": (4, 3, 3, 3), "c": (4,)}, "abc"),
    "conv2d_stride_pad": (
        "F.conv2d(a, b, stride=2, padding=1)",
        {"a": (1, 2, 6, 5), "b": (3, 2, 3, 2)},
        "ab",
    ),
    "conv2d_dilation": (
        "F.conv2d(a, b, dilation=(2, 1), padding=(2, 0))",
        {"a": (1, 2, 7, 6), "b": (2, 2, 3, 3)},
        "ab",
    ),
    "conv2d_groups": ("F.conv2d(a, b, groups=2, padding=1)", {"a": (2, 4, 4, 4), "b": (6, 2, 3, 3)}, "ab"),
    "conv2d_same": ("F.conv2d(a, b, padding='same')", {"a": (1, 2, 5, 5), "b": (2, 2, 2, 3)}, "ab"),
    "conv1d": ("F.conv1d(a, b, c, stride=2, padding=1)", {"a": (2, 3, 9), "b": (4, 3, 3), "c": (4,)}, "abc"),
    "conv_transpose2d": (
        "F.conv_transpose2d(a, b, stride=2, padding=1, output_padding=1)",
        {"a": (1, 3, 3, 3), "b": (3, 2, 3, 3)},
        "ab",
    ),
    "max_pool2d": ("F.max_pool2d(a, 2)", {"a": (2, 2, 4, 6)}, "a"),
    "max_pool2d_pad_stride": ("F.max_pool2d(a, 3, stride=2, padding=1)", {"a": (1, 2, 5, 5)}, "a"),
    "max_pool2d_ceil": ("F.max_pool2d(a, (2, 3), stride=2, ceil_mode=True)", {"a": (1, 1, 5, 7)}, "a"),
    "max_pool2d_dilation": ("F.max_pool2d(a, 2, stride=1, dilation=2, padding=1)", {"a": (1, 2, 5, 5)}, "a"),
    "avg_pool2d": ("F.avg_pool2d(a, 2)", {"a": (2, 2, 4, 6)}, "a"),
    "avg_pool2d_pad": ("F.avg_pool2d(a, 3, stride=2, padding=1)", {"a": (1, 2, 5, 5)}, "a"),
    "avg_pool2d_nopad_count": (
        "F.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)",
        {"a": (1, 2, 6, 6)},
        "a",
    ),
    "adaptive_avg_pool2d": ("F.adaptive_avg_pool2d(a, (2, 3))", {"a": (1, 2, 5, 7)}, "a"),
    "softmax": ("F.softmax(a, 1)", {"a": (3, 4, 2)}, "a"),
    "log_softmax": ("F.log_softmax(a, -1)", {"a": (3, 5)}, "a"),
    "softmin": ("F.softmin(a, 0)", {"a": (3, 5)}, "a"),
    "layer_norm": ("F.layer_norm(a, (4,), b, c)", {"a": (3, 4), "b": (4,), "c": (4,)}, "abc"),
    "group_norm": ("F.group_norm(a, 2, b, c)", {"a": (2, 4, 3), "b": (4,), "c": (4,)}, "abc"),
    "batch_norm_train": (
        "F.batch_norm(a, None, None, b, c, training=True)",
        {"a": (4, 3, 2), "b": (3,), "c": (3,)},
        "abc",
    ),
    "gelu": ("F.gelu(a)", {"a": (2, 5)}, "a"),
    "gelu_tanh": ("F.gelu(a, approximate='tanh')", {"a": (2, 5)}, "a"),
    "elu": ("F.elu(a, 0.5)", {"a": (2, 5)}, "a"),
    "selu": ("F.selu(a)", {"a": (2, 5)}, "a"),
    "silu": ("F.silu(a)", {"a": (2, 5)}, "a"),
    "mish": ("F.mish(a)", {"a": (2, 5)}, "a"),
    "softplus": ("F.softplus(a * 8, beta=2, threshold=6)", {"a": (2, 5)}, "a"),
    "leaky_relu": ("F.leaky_relu(a, 0.1)", {"a": (2, 5)}, "a"),
    "hardswish": ("F.hardswish(a * 3)", {"a": (2, 5)}, "a"),
    "linear": ("F.linear(a, b, c)", {"a": (3, 4), "b": (2, 4), "c": (2,)}, "abc"),
    "bilinear": ("F.bilinear(a, b, c)", {"a": (3, 2), "b": (3, 4), "c": (5, 2, 4)}, "abc"),
    "pad_reflect": ("F.pad(a, (2, 1, 1, 2), mode='reflect')", {"a": (1, 1, 3, 4)}, "a"),
    "pad_replicate": ("F.pad(a, (2, 1, 1, 2), mode='replicate')", {"a": (1, 1, 3, 4)}, "a"),
    "pad_circular": ("F.pad(a, (2, 1, 1, 2), mode='circular')", {"a": (1, 1, 3, 4)}, "a"),
    "mse_loss": ("F.mse_loss(a, b)", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "l1_loss_sum": ("F.l1_loss(a, b, reduction='sum')", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "smooth_l1_loss": ("F.smooth_l1_loss(a, b, beta=0.5)", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "huber_loss": ("F.huber_loss(a, b, delta=0.7, reduction='none')", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "cross_entropy": ("F.cross_entropy(a, i)", {"a": (4, 5), "i": [1, 0, 4, 2]}, "a"),
    "cross_entropy_ignore_smooth": (
        "F.cross_entropy(a, i, ignore_index=0, label_smoothing=0.2)",
        {"a": (4, 5), "i": [1, 0, 4, 2]},
        "a",
    ),
    "cross_entropy_weight": (
        "F.cross_entropy(a, i, weight=b.abs())",
        {"a": (4, 5), "b": (5,), "i": [1, 0, 4, 2]},
        "a",
    ),
    "cross_entropy_probs": ("F.cross_entropy(a, F.softmax(b, 1))", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "cross_entropy_2d": (
        "F.cross_entropy(a, i, reduction='sum')",
        {"a": (1, 3, 2, 2), "i": [[[0, 2], [1, 1]]]},
        "a",
    ),
    "nll_loss": (
        "F.nll_loss(F.log_softmax(a, 1), i, reduction='none')",
        {"a": (4, 5), "i": [1, 0, 4, 2]},
        "a",
    ),
    "bce": ("F.binary_cross_entropy(a.sigmoid(), b.sigmoid())", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "bce_with_logits": (
        "F.binary_cross_entropy_with_logits(a * 30, b.sigmoid(), pos_weight=c.detach().abs())",
        {"a": (3, 4), "b": (3, 4), "c": (4,)},
        "ab",
    ),
    "kl_div_batchmean": (
        "F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1), reduction='batchmean')",
        {"a": (3, 4), "b": (3, 4)},
        "ab",
    ),
    "cosine_similarity": ("F.cosine_similarity(a, b)", {"a": (3, 4), "b": (3, 4)}, "ab"),
    "normalize": ("F.normalize(a, dim=0)", {"a": (3, 4)}, "a"),
    "interpolate_bilinear": ("F.interpolate(a, scale_factor=1.5, mode='bilinear')", {"a": (1, 2, 3, 4)}, "a"),
    "interpolate_bilinear_corners": (
        "F.interpolate(a, size=(5, 2), mode='bilinear', align_corners=True)",
        {"a": (1, 2, 3, 4)},
        "a",
    ),
    "interpolate_nearest": ("F.interpolate(a, scale_factor=(2, 0.5))", {"a": (1, 2, 3, 4)}, "a"),
    "adaptive_max_pool2d": ("F.adaptive_max_pool2d(a, (2, 3))", {"a": (1, 2, 5, 7)}, "a"),
    "unfold": ("F.unfold(a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))", {"a": (2, 2, 5, 6)}, "a"),
    "fold": ("F.fold(a, (5, 6), (2, 3), padding=1, stride=2)", {"a": (2, 12, 9)}, "a"),
    "max_unpool2d": (
        "F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2, output_size=(5, 5))",
        {"a": (1, 2, 5, 5)},
        "a",
    ),
    "lp_pool2d": ("F.lp_pool2d(a.abs() + 0.1, 2, 2)", {"a": (1, 2, 4, 4)}, "a"),
    "local_response_norm": ("F.local_response_norm(a, 3)", {"a": (2, 5, 3)}, "a"),
    "channel_shuffle": ("F.channel_shuffle(a, 2)", {"a": (1, 6, 2, 2)}, "a"),
    "multi_margin": (
        "F.multi_margin_loss(a, i, p=2, margin=0.7, weight=b.abs())",
        {"a": (4, 5), "b": (5,), "i": [1, 0, 4, 2]},
        "a",
    ),
    "conv3d": (
        "F.conv3d(a, b, c, stride=(2, 1, 1), padding=1, dilation=(1, 2, 1))",
        {"a": (1, 2, 5, 5, 4), "b": (3, 2, 2, 3, 2), "c": (3,)},
        "abc",
    ),
    "conv3d_same_groups": (
        "F.conv3d(a, b, padding='same', groups=2)",
        {"a": (1, 4, 3, 4, 4), "b": (2, 2, 2, 3, 3)},
        "ab",
    ),
    "max_pool3d": ("F.max_pool3d(a, 2, padding=1)", {"a": (1, 2, 4, 5, 3)}, "a"),
    "avg_pool3d": (
        "F.avg_pool3d(a, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0))",
        {"a": (1, 2, 4, 5, 4)},
        "a",
    ),
    "adaptive_avg_pool3d": ("F.adaptive_avg_pool3d(a, (2, 3, 2))", {"a": (1, 2, 5, 4, 3)}, "a"),
    "embedding_bag_mean_offsets": (
        "F.embedding_bag(lib.tensor([1, 2, 4, 5, 4, 3, 2, 9]), a, lib.tensor([0, 4, 4]), mode='mean')",
        {"a": (10, 3)},
        "a",
    ),
    "embedding_bag_sum_weights": (
        "F.embedding_bag(lib.tensor([[1, 2], [4, 4]]), a, mode='sum', per_sample_weights=b)",
        {"a": (6, 3), "b": (2, 2)},
        "ab",
    ),
    "embedding_bag_max_last": (
        "F.embedding_bag(lib.tensor([1, 2, 4, 5, 3]), a, lib.tensor([0, 2, 5]), mode='max', include_last_offset=True)",
        {"a": (6, 3)},
        "a",
    ),
    "embedding_bag_padding": (
        "F.embedding_bag(lib.tensor([[1, 0], [0, 0], [2, 3]]), a, mode='mean', padding_idx=0)",
        {"a": (4, 2)},
        "a",
    ),
    "margin_ranking": (
        "F.margin_ranking_loss(a, b, c.sign(), margin=0.3)",
        {"a": (6,), "b": (6,), "c": (6,)},
        "ab",
    ),
    "hinge_embedding": ("F.hinge_embedding_loss(a, b.sign(), margin=0.5)", {"a": (6,), "b": (6,)}, "a"),
    "soft_margin": ("F.soft_margin_loss(a, b.sign())", {"a": (6,), "b": (6,)}, "a"),
    "multilabel_soft_margin": (
        "F.multilabel_soft_margin_loss(a, (b > 0).double())",
        {"a": (3, 4), "b": (3, 4)},
        "a",
    ),
    "cosine_embedding": (
        "F.cosine_embedding_loss(a, b, c.sign(), margin=0.1)",
        {"a": (3, 4), "b": (3, 4), "c": (3,)},
        "ab",
    ),
    "triplet_margin": (
        "F.triplet_margin_loss(a, b, c, swap=True)",
        {"a": (3, 4), "b": (3, 4), "c": (3, 4)},
        "abc",
    ),
    "poisson_nll_full": ("F.poisson_nll_loss(a, b.abs() * 3, full=True)", {"a": (3, 4), "b": (3, 4)}, "a"),
    "gaussian_nll": (
        "F.gaussian_nll_loss(a, b, c.abs() + 0.1, full=True)",
        {"a": (3, 4), "b": (3, 4), "c": (3, 1)},
        "abc",
    ),
    "kl_div_log_target_sum": (
        "F.kl_div(F.log_softmax(a, 1), F.log_softmax(b, 1), reduction='sum', log_target=True)",
        {"a": (3, 4), "b": (3, 4)},
        "ab",
    ),
}


def _short(t: torch.Tensor) -> list:
    """Values to 12 significant digits (the tests compare at rtol 1e-9)."""
    return np.vectorize(lambda v: float(f"{v:.12g}"))(t.detach().double().numpy()).tolist()


def _case(name: str, expr: str, specs: dict, req: str, rng: np.random.Generator) -> dict:
    inputs, tensors = {}, {}
    for k, spec in specs.items():
        if k == "i":
            inputs[k] = spec
            tensors[k] = torch.tensor(spec)
        else:
            v = np.round(rng.standard_normal(spec), 4)
            inputs[k] = v.tolist()
            tensors[k] = torch.tensor(v, requires_grad=k in req)
    out = eval(expr, {"F": F, "lib": torch}, dict(tensors))
    g = np.round(rng.standard_normal(tuple(out.shape)), 4)
    (out * torch.tensor(g)).sum().backward()
    grads = {k: _short(tensors[k].grad) for k in req}
    return {"expr": expr, "inputs": inputs, "g": g.tolist(), "out": _short(out), "grads": grads}


# name: (constructor, input shapes, forward call using ``m`` and inputs ``x, y, z``, output picker)
MODULES = {
    "lstm_2layer_bidir": (
        "nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)",
        {"x": (2, 5, 3)},
        "m(x)[0]",
    ),
    "lstm_hn": ("nn.LSTM(3, 4)", {"x": (5, 2, 3)}, "m(x)[1][1]"),
    "lstm_packed_data": (
        "nn.LSTM(3, 4, num_layers=2, bidirectional=True)",
        {"x": (5, 3, 3)},
        "m(lib.nn.utils.rnn.pack_padded_sequence(x, [3, 5, 2], enforce_sorted=False))[0].data",
    ),
    "gru_packed_hn": (
        "nn.GRU(3, 4, batch_first=True)",
        {"x": (3, 5, 3)},
        "m(lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2], batch_first=True))[1]",
    ),
    "gru_2layer": ("nn.GRU(3, 4, num_layers=2)", {"x": (5, 2, 3)}, "m(x)[1]"),
    "rnn_relu_bidir": ("nn.RNN(3, 4, nonlinearity='relu', bidirectional=True)", {"x": (4, 2, 3)}, "m(x)[0]"),
    "mha_masks": (
        "nn.MultiheadAttention(8, 2)",
        {"x": (5, 3, 8), "y": (4, 3, 8)},
        (
            "m(x, y, y, key_padding_mask=lib.tensor([[False] * 4, [False, False, True, True], [False] * 4]), "
            "attn_mask=lib.ones(5, 4, dtype=lib.bool).triu(1))[0]"
        ),
    ),
    "mha_weights": ("nn.MultiheadAttention(8, 4, batch_first=True)", {"x": (3, 5, 8)}, "m(x, x, x)[1]"),
    "encoder_layer": (
        "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)",
        {"x": (2, 5, 8)},
        "m(x)",
    ),
    "transformer": (
        "nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)",
        {"x": (5, 2, 8), "y": (4, 2, 8)},
        "m(x, y, tgt_mask=m.generate_square_subsequent_mask(4, dtype=lib.float64))",
    ),
    "encoder_layer_norm_first_gelu": (
        "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation='gelu', norm_first=True)",
        {"x": (5, 2, 8)},
        "m(x)",
    ),
}


def _module_case(ctor: str, specs: dict, call: str, rng: np.random.Generator) -> dict:
    torch.manual_seed(0)
    m = eval(ctor, {"nn": torch.nn}).double()
    with torch.no_grad():  # short literals: round the initial parameters
        for p in m.parameters():
            p.copy_(torch.round(p, decimals=3))
    inputs = {k: np.round(rng.standard_normal(v), 4) for k, v in specs.items()}
    tensors = {k: torch.tensor(v, requires_grad=True) for k, v in inputs.items()}
    out = eval(call, {"lib": torch, "m": m}, dict(tensors))
    g = np.round(rng.standard_normal(tuple(out.shape)), 4)
    (out * torch.tensor(g)).sum().backward()
    return {
        "ctor": ctor,
        "call": call,
        "state": {k: v.tolist() for k, v in m.state_dict().items()},
        "inputs": {k: v.tolist() for k, v in inputs.items()},
        "g": g.tolist(),
        "out": _short(out),
        "grads": {k: _short(t.grad) for k, t in tensors.items()},
        "param_grads": {k: _short(p.grad) for k, p in m.named_parameters() if p.grad is not None},
    }


def main() -> None:
    rng = np.random.default_rng(1234)
    refs = {name: _case(name, *spec, rng) for name, spec in CASES.items()}
    module_refs = {name: _module_case(*spec, rng) for name, spec in MODULES.items()}
    path = os.path.join(os.path.dirname(__file__), "torch_refs.json")
    doc = {
        "generated_by": f"make_torch_refs.py with PyTorch {torch.__version__}",
        "refs": refs,
        "modules": module_refs,
    }
    with open(path, "w") as f:  # one case per line: small diffs when cases change
        f.write("{\n")
        f.write(f' "generated_by": {json.dumps(doc["generated_by"])},\n')
        for key in ("refs", "modules"):
            f.write(f' "{key}": {{\n')
            items = list(doc[key].items())
            f.writelines(
                f"  {json.dumps(name)}: {json.dumps(case)}{',' if i < len(items) - 1 else ''}\n"
                for i, (name, case) in enumerate(items)
            )
            f.write(" }" + ("," if key == "refs" else "") + "\n")
        f.write("}\n")
    print("wrote", path, len(refs) + len(module_refs), "cases")


if __name__ == "__main__":
    main()
