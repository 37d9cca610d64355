"""Fused attention (the ``sdpa`` composite: one CPU kernel call and one graph node) against
PyTorch: ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention`` and the Transformer
encoder, outputs and every gradient, with copied weights."""

from __future__ import annotations

from typing import Any

import ember
import ember.nn as enn
import ember.nn.functional as EF
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DTYPES = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-11)}


def _pair(a: np.ndarray, grad: bool = True) -> tuple[Any, Any]:
    return (
        ember.tensor(a, requires_grad=grad and a.dtype.kind == "f"),
        torch.tensor(a, requires_grad=grad and a.dtype.kind == "f"),
    )


def _close(e: Any, t: Any, tol: float) -> None:
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _mask(kind: str, shape: tuple, rng: np.random.Generator, dtype: Any) -> np.ndarray | None:
    if kind == "none":
        return None
    allowed = rng.random(shape) > 0.3
    allowed[..., 0] = True  # every query keeps a key
    if kind == "bool":
        return allowed
    return np.where(allowed, rng.normal(size=shape), -np.inf).astype(dtype)


SHAPES = [  # q, k, v, mask shapes
    ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), (4, 5)),
    ((3, 6, 4), (3, 7, 4), (3, 7, 4), (3, 6, 7)),
    ((2, 1, 4, 8), (1, 3, 5, 8), (3, 5, 8), (2, 1, 4, 5)),  # batch dims broadcast
    ((5, 8), (6, 8), (6, 3), (5, 6)),  # no batch dims
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask", ["none", "bool", "float"])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(map(str, s[0])))
def test_sdpa_output_and_grads(shapes: tuple, mask: str, dtype: str) -> None:
    np_dt, tol = DTYPES[dtype]
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=s).astype(np_dt) for s in shapes[:3]]
    (eq, tq), (ek, tk), (ev, tv) = (_pair(a) for a in arrays)
    m = _mask(mask, shapes[3], rng, np_dt)
    em, tm = (None, None) if m is None else _pair(m, grad=False)
    eo = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=em)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    _close(eo, to, tol)
    g = rng.normal(size=to.shape).astype(np_dt)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        _close(e.grad, t.grad, tol * 10)


@pytest.mark.parametrize("lq,lk", [(5, 5), (4, 6), (6, 4)])
def test_sdpa_causal_and_scale_and_empty_rows(lq: int, lk: int) -> None:
    """is_causal is top-left aligned; a query with no key (lq > lk) gets zeros, as PyTorch."""
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=(2, n, 8)) for n in (lq, lk, lk)]
    (eq, tq), (ek, tk), (ev, tv) = (_pair(a) for a in arrays)
    eo = EF.scaled_dot_product_attention(eq, ek, ev, is_causal=True, scale=0.3)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True, scale=0.3)
    _close(eo, to, 1e-12)
    eo.sum().backward()
    to.sum().backward()
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        _close(e.grad, t.grad, 1e-11)


def test_sdpa_fully_masked_bool_row_is_zero_with_zero_grads() -> None:
    rng = np.random.default_rng(2)
    (eq, tq), (ek, tk), (ev, tv) = (_pair(rng.normal(size=(2, 4, 8))) for _ in range(3))
    m = np.ones((4, 4), bool)
    m[1] = False
    eo = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=ember.tensor(m))
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(m))
    _close(eo, to, 1e-12)
    assert not np.isnan(eo.detach().numpy()).any()
    eo.sum().backward()
    to.sum().backward()
    _close(eq.grad, tq.grad, 1e-11)


def test_sdpa_float_mask_that_requires_grad_gets_pytorchs_grad() -> None:
    rng = np.random.default_rng(3)
    (eq, tq), (ek, tk), (ev, tv) = (_pair(rng.normal(size=(2, 3, 4, 8))) for _ in range(3))
    em, tm = _pair(rng.normal(size=(4, 4)))
    eo = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=em)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    eo.sum().backward()
    to.sum().backward()
    for e, t in ((eq, tq), (em, tm)):
        _close(e.grad, t.grad, 1e-11)


def test_sdpa_grouped_query_heads() -> None:
    rng = np.random.default_rng(4)
    (eq, tq) = _pair(rng.normal(size=(2, 6, 4, 8)))
    (ek, tk), (ev, tv) = (_pair(rng.normal(size=(2, 3, 5, 8))) for _ in range(2))
    eo = EF.scaled_dot_product_attention(eq, ek, ev, enable_gqa=True)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    _close(eo, to, 1e-12)
    eo.sum().backward()
    to.sum().backward()
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        _close(e.grad, t.grad, 1e-11)


def test_sdpa_double_backward_matches() -> None:
    rng = np.random.default_rng(5)
    (eq, tq), (ek, tk), (ev, tv) = (_pair(rng.normal(size=(2, 4, 3))) for _ in range(3))
    m = np.tril(np.ones((4, 4), bool))
    eo = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=ember.tensor(m))
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(m))
    (egq,) = ember.autograd.grad((eo**2).sum(), (eq,), create_graph=True)
    (tgq,) = torch.autograd.grad((to**2).sum(), (tq,), create_graph=True)
    _close(egq, tgq, 1e-11)
    for e, t in zip(ember.autograd.grad(egq.sum(), (ek, ev)), torch.autograd.grad(tgq.sum(), (tk, tv))):
        _close(e, t, 1e-10)


def test_sdpa_records_one_node() -> None:
    q = ember.randn(2, 3, 4, 8, requires_grad=True)
    out = EF.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(4, 4, dtype=ember.bool).tril())
    assert type(out.grad_fn).__name__ == "ScaledDotProductAttentionBackward0"
    assert [type(f).__name__ for f, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 3


def test_sdpa_dropout_draws_as_f_dropout() -> None:
    """The dropout mask is F.dropout's draw from ember's generator (PyTorch's generator differs,
    so no bitwise match with it): the fused op equals the explicit ops for a seed."""
    rng = np.random.default_rng(6)
    q, k, v = (ember.tensor(rng.normal(size=(2, 3, 4, 8))) for _ in range(3))
    ember.manual_seed(11)
    fused = EF.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    ember.manual_seed(11)
    w = EF.softmax((q @ k.transpose(-2, -1)) / np.sqrt(8), -1)
    explicit = EF.dropout(w, 0.4) @ v
    np.testing.assert_allclose(fused.numpy(), explicit.numpy(), rtol=1e-12, atol=1e-12)  # same draws
    tq, tk, tv = (torch.tensor(t.numpy()) for t in (q, k, v))
    full = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, dropout_p=1.0)
    assert (
        not ember.tensor(full.numpy()).any()
        and not EF.scaled_dot_product_attention(q, k, v, dropout_p=1.0).any()
    )


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda F, t: F.scaled_dot_product_attention(t(3), t(3), t(3)), "at least 2 dimensional"),
        (lambda F, t: F.scaled_dot_product_attention(t(2, 3).double(), t(2, 3), t(2, 3)), "same dtype"),
        (
            lambda F, t: F.scaled_dot_product_attention(t(2, 3), t(2, 3), t(2, 3), attn_mask=t(2, 2).long()),
            "attn_mask dtype",
        ),
        (
            lambda F, t: F.scaled_dot_product_attention(
                t(2, 3), t(2, 3), t(2, 3), attn_mask=t(2, 2), is_causal=True
            ),
            "should not be set",
        ),
        (
            lambda F, t: F.scaled_dot_product_attention(t(2, 3), t(2, 3), t(2, 3), dropout_p=1.5),
            "between 0 and 1",
        ),
        (lambda F, t: F.scaled_dot_product_attention(t(2, 3), t(2, 4), t(2, 3)), "cannot be multiplied"),
        (lambda F, t: F.scaled_dot_product_attention(t(2, 3), t(2, 3), t(4, 3)), "cannot be multiplied"),
        (lambda F, t: F.scaled_dot_product_attention(t(2, 2, 3), t(2, 2, 4), t(2, 2, 3)), "batch2"),
        (lambda F, t: F.scaled_dot_product_attention(t(3, 2, 3), t(3, 2, 3), t(3, 4, 3)), "batch2"),
        (
            lambda F, t: F.scaled_dot_product_attention(
                t(1, 4, 2, 3), t(1, 3, 2, 3), t(1, 3, 2, 3), enable_gqa=True
            ),
            "divide",
        ),
    ],
)
def test_sdpa_errors_as_pytorch(call: Any, message: str) -> None:
    with pytest.raises(RuntimeError, match=message) as te:
        call(torch.nn.functional, lambda *s: torch.ones(s))
    with pytest.raises(RuntimeError) as ee:
        call(EF, lambda *s: ember.ones(s))
    assert str(ee.value) == str(te.value)


# -- modules with copied weights -------------------------------------------------------------
def _copy(src: Any, dst: Any) -> None:
    """PyTorch module ``src``'s parameters into ember module ``dst`` (same names)."""
    params = dict(dst.named_parameters())
    for name, p in src.named_parameters():
        params[name].data = ember.tensor(p.detach().numpy().copy())


def _grads_close(e_mod: Any, t_mod: Any, tol: float) -> None:
    e_params = dict(e_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        assert e_params[name].grad is not None, name
        _close(e_params[name].grad, p.grad, tol)


MHA_CASES = {
    "self": {"kw": {}, "mask": None, "kpm": None, "same": True},
    "batch_first": {"kw": {"batch_first": True}, "mask": None, "kpm": None, "same": True},
    "bool_masks": {"kw": {}, "mask": "bool", "kpm": "bool", "same": True},
    "float_mask_bool_padding": {"kw": {}, "mask": "float", "kpm": None, "same": True},
    "per_head_mask_cross": {"kw": {}, "mask": "heads", "kpm": "bool", "same": False},
    "kdim_vdim": {"kw": {"kdim": 5, "vdim": 7}, "mask": None, "kpm": "bool", "same": False},
    "no_bias": {"kw": {"bias": False}, "mask": None, "kpm": None, "same": True},
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("need_weights,average", [(False, True), (True, True), (True, False)])
@pytest.mark.parametrize("case", MHA_CASES)
def test_multihead_attention(case: str, need_weights: bool, average: bool, dtype: str) -> None:
    c = MHA_CASES[case]
    np_dt, tol = DTYPES[dtype]
    rng = np.random.default_rng(7)
    kw: dict = c["kw"]
    e, h, lq, lk, n = 8, 2, 4, 5, 3
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(e, h, **kw).to(getattr(torch, dtype))
    em = enn.MultiheadAttention(e, h, dtype=getattr(ember, dtype), **kw)
    _copy(tm, em)
    bf = kw.get("batch_first", False)

    def seq(length: int, dim: int) -> np.ndarray:
        return rng.normal(size=(n, length, dim) if bf else (length, n, dim)).astype(np_dt)

    x = seq(lq, e)
    if c["same"]:
        (eq, tq) = _pair(x)
        ek = ev = eq
        tk = tv = tq
    else:
        (eq, tq) = _pair(x)
        (ek, tk) = _pair(seq(lk, kw.get("kdim", e)))
        (ev, tv) = _pair(seq(lk, kw.get("vdim", e)))
    s = lq if c["same"] else lk
    masks: dict = {}
    if c["mask"] == "bool":
        m = rng.random((lq, s)) > 0.7
        m[:, 0] = False
        masks["attn_mask"] = m
    elif c["mask"] == "float":
        masks["attn_mask"] = rng.normal(size=(lq, s)).astype(np_dt)
    elif c["mask"] == "heads":
        m = rng.random((n * h, lq, s)) > 0.7
        m[..., 0] = False
        masks["attn_mask"] = m
    if c["kpm"] == "bool":
        p = np.zeros((n, s), bool)
        p[0, -2:] = True
        masks["key_padding_mask"] = p
    e_kw = {k: ember.tensor(v) for k, v in masks.items()}
    t_kw = {k: torch.tensor(v) for k, v in masks.items()}
    eo, ew = em(eq, ek, ev, need_weights=need_weights, average_attn_weights=average, **e_kw)
    to, tw = tm(tq, tk, tv, need_weights=need_weights, average_attn_weights=average, **t_kw)
    _close(eo, to, tol)
    assert (ew is None) == (tw is None)
    if tw is not None:
        _close(ew, tw, tol)
    g = rng.normal(size=to.shape).astype(np_dt)
    loss_e = (eo * ember.tensor(g)).sum() + (ew.sum() if ew is not None else 0)
    loss_t = (to * torch.tensor(g)).sum() + (tw.sum() if tw is not None else 0)
    loss_e.backward()
    loss_t.backward()
    _grads_close(em, tm, tol * 10)
    for e_in, t_in in {id(eq): (eq, tq), id(ek): (ek, tk), id(ev): (ev, tv)}.values():
        _close(e_in.grad, t_in.grad, tol * 10)


def test_multihead_attention_unbatched_and_eval_weights() -> None:
    rng = np.random.default_rng(8)
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(6, 3, dropout=0.5).double().eval()
    em = enn.MultiheadAttention(6, 3, dropout=0.5, dtype=ember.float64).eval()
    _copy(tm, em)
    x = rng.normal(size=(4, 6))
    with torch.no_grad():
        to, tw = tm(torch.tensor(x), torch.tensor(x), torch.tensor(x))
    with ember.no_grad():
        eo, ew = em(ember.tensor(x), ember.tensor(x), ember.tensor(x))
    _close(eo, to, 1e-12)
    _close(ew, tw, 1e-12)


def test_multihead_attention_weights_are_after_dropout_as_pytorch() -> None:
    """PyTorch returns the weights v was multiplied by: 0 where dropout hit, else 1/(1-p) times
    the eval-mode weight. Ember's draws come from its own generator (never PyTorch's bits)."""
    for lib, mod in ((ember, enn), (torch, torch.nn)):
        lib.manual_seed(3)
        m = mod.MultiheadAttention(8, 2, dropout=0.5)
        x = lib.randn(6, 2, 8)
        w_train = m(x, x, x, average_attn_weights=False)[1].detach().numpy()
        w_eval = m.eval()(x, x, x, average_attn_weights=False)[1].detach().numpy()
        hit = w_train == 0
        assert hit.any() and not hit.all()
        np.testing.assert_allclose(w_train[~hit], 2 * w_eval[~hit], rtol=1e-5)
    em = enn.MultiheadAttention(8, 2, dropout=0.5)
    x = ember.randn(6, 2, 8)
    outs = []
    for need in (False, True):
        ember.manual_seed(3)
        outs.append(em(x, x, x, need_weights=need)[0])
    _close(outs[0], outs[1], 1e-6)  # the same draws whether or not the weights are asked for


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder(batch_first: bool, norm_first: bool, dtype: str) -> None:
    np_dt, tol = DTYPES[dtype]
    rng = np.random.default_rng(9)
    torch.manual_seed(0)
    tdt = getattr(torch, dtype)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=batch_first, norm_first=norm_first)
    tm = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False).to(tdt)
    e_layer = enn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=batch_first, norm_first=norm_first)
    em = enn.TransformerEncoder(e_layer, 2, norm=enn.LayerNorm(8), enable_nested_tensor=False).to(
        getattr(ember, dtype)
    )
    _copy(tm, em)
    x = rng.normal(size=(3, 5, 8) if batch_first else (5, 3, 8)).astype(np_dt)
    (ex, tx) = _pair(x)
    mask = np.triu(np.full((5, 5), -np.inf), 1).astype(np_dt)
    pad = np.zeros((3, 5), bool)
    pad[1, -1] = True
    to = tm(tx, torch.tensor(mask), src_key_padding_mask=torch.tensor(pad))
    eo = em(ex, ember.tensor(mask), src_key_padding_mask=ember.tensor(pad))
    _close(eo, to, tol * 10)
    g = rng.normal(size=to.shape).astype(np_dt)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    _grads_close(em, tm, tol * 50)
    _close(ex.grad, tx.grad, tol * 50)


def test_transformer_with_causal_hints() -> None:
    """The whole model; ``tgt_is_causal`` makes the decoder's self-attention causal (PyTorch
    then ignores the mask's values, as here), and the hint reaches every layer."""
    rng = np.random.default_rng(10)
    torch.manual_seed(0)
    tm = torch.nn.Transformer(8, 2, 1, 2, 16, 0.0).double()
    em = enn.Transformer(8, 2, 1, 2, 16, 0.0, dtype=ember.float64)
    _copy(tm, em)
    src, tgt = rng.normal(size=(6, 2, 8)), rng.normal(size=(5, 2, 8))
    (es, ts), (et, tt) = _pair(src), _pair(tgt)
    causal = np.triu(np.full((5, 5), -np.inf), 1)
    to = tm(ts, tt, tgt_mask=torch.tensor(causal), tgt_is_causal=True)
    eo = em(es, et, tgt_mask=ember.tensor(causal), tgt_is_causal=True)
    _close(eo, to, 1e-10)
    eo.sum().backward()
    to.sum().backward()
    _grads_close(em, tm, 1e-9)
    _close(es.grad, ts.grad, 1e-9)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_without_keys_gives_zeros_and_zero_grads(causal: bool) -> None:
    """No keys at all (Lk = 0): every output row is 0, q's gradient 0, as PyTorch."""
    rng = np.random.default_rng(2)
    arrays = [rng.normal(size=s) for s in ((1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 5))]
    (eq, tq), (ek, tk), (ev, tv) = (_pair(a) for a in arrays)
    eo = EF.scaled_dot_product_attention(eq, ek, ev, is_causal=causal)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    assert tuple(eo.shape) == (1, 2, 3, 5)
    _close(eo, to, 0)
    eo.sum().backward()
    to.sum().backward()
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        assert tuple(e.grad.shape) == tuple(t.grad.shape)
        _close(e.grad, t.grad, 0)
