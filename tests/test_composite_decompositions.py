"""Every composite on a primitives-only backend: a declared decomposition runs there (with the
fallback policy ``error``) and matches the CPU backend's kernel; an undeclared one is a CPU
fallback, refused under ``error`` and listed by the registry (so ``ember info`` and the
conformance suite say so)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest
from ember._ops._composite import DECOMPOSITIONS
from ember.backends import COMPOSITES, registry

F = ember.nn.functional
RNG = np.random.default_rng(20)


def _x(*shape: int, lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape)


def _edges(values: np.ndarray, extra: list[float]) -> np.ndarray:
    return np.concatenate([values, np.array(extra)])


WIDE = _edges(_x(60, lo=-40, hi=40), [0.0, -0.0, 1.0, 2.0, -1.0, 0.5, 19.99, 20.01, 25.01, 1e-8, np.nan])
ANY = _edges(_x(40), [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -2.0])
UNIT = _edges(_x(40, lo=-1, hi=1), [0.0, -0.0, 0.5, -0.5, 0.99999, -0.9999999, 1.0, -1.0, 1.5, np.nan])
PROB = _edges(_x(40, lo=0, hi=1), [0.0, 1.0, 1e-300, 1e-12, 0.5, 1 - 1e-12, np.nan])
POS = _edges(_x(40, lo=0.01, hi=60), [1e-8, 1.0, 2.0, 1e6, np.inf])
GAMMA = _edges(_x(40, lo=-8, hi=8), [-0.5, -2.5, 0.0, -0.0, -1.0, -3.0, np.inf, np.nan])
WELL = _x(2, 4, 4, lo=-1, hi=1) + 4 * np.eye(4)
_B = _x(2, 4, 4, lo=-1, hi=1)
SPD = _B @ _B.transpose(0, 2, 1) + 4 * np.eye(4)
TALL = _x(5, 3, lo=-1, hi=1)
CPLX = _x(2, 3, 3, lo=-1, hi=1) + 1j * _x(2, 3, 3, lo=-1, hi=1) + 3 * np.eye(3)
IDX = np.array([0, 2, 2, 1])
SCATTER = (_x(3, 4), RNG.integers(0, 3, (4, 4)), _x(4, 4))


def _t(e: Any, dev: str, a: Any, **kw: Any) -> Any:
    return e.tensor(a, device=dev, **kw)


def _softmax_grad(log: bool) -> Callable[[Any, str], Any]:
    """x's gradient through (log_)softmax along dim 0 of a transposed input (a strided g too)."""

    def run(e: Any, dev: str) -> Any:
        x = _t(e, dev, _x(5, 3), requires_grad=True)
        y = (e.log_softmax if log else e.softmax)(x.t(), 1)
        y.backward(_t(e, dev, _x(5, 3)).t())
        return x.grad

    return run


def _clip(e: Any, dev: str) -> Any:
    """Gradients of two dtypes clipped in place (norm_foreach per group, mul_foreach)."""
    ps = [_t(e, dev, _x(3, 4), requires_grad=True), _t(e, dev, _x(5), requires_grad=True)]
    for p in ps:
        p.grad = _t(e, dev, _x(*p.shape))
    total = e.nn.utils.clip_grad_norm_(ps, 0.5, 3.0)
    return (total, *(p.grad for p in ps))


def _add_scaled(e: Any, dev: str) -> Any:
    """add/sub with alpha (a broadcast operand too) and add_ with alpha in place."""
    x, y = _t(e, dev, _x(3, 4)), _t(e, dev, _x(4))
    z = x.clone()
    z.add_(_t(e, dev, _x(3, 4)), alpha=-0.7)
    return x.add(y, alpha=0.3), x.sub(y, alpha=2), z


def _layer_norm_grad(e: Any, dev: str) -> Any:
    x = _t(e, dev, _x(4, 2, 6), requires_grad=True)
    w, b = (_t(e, dev, _x(2, 6), requires_grad=True) for _ in range(2))
    F.layer_norm(x, (2, 6), w, b).backward(_t(e, dev, _x(4, 2, 6)))
    return x.grad, w.grad, b.grad


def _relu_grad(e: Any, dev: str) -> Any:
    """x's gradient through relu of a transposed input, with a strided g (and zeros in x)."""
    x = _t(e, dev, _x(5, 3), requires_grad=True)
    with e.no_grad():
        x[1] = 0.0
    e.relu(x.t()).backward(_t(e, dev, _x(5, 3)).t())
    return x.grad


def _sgd(e: Any, dev: str, foreach: bool | None = None) -> Any:
    p = _t(e, dev, _x(3, 4), requires_grad=True)
    opt = e.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, foreach=foreach)
    for _ in range(2):
        p.grad = _t(e, dev, _x(3, 4))
        opt.step()
    return p.detach()


def _adam(e: Any, dev: str, foreach: bool | None = None) -> Any:
    p = _t(e, dev, _x(3, 4), requires_grad=True)
    opt = e.optim.AdamW([p], lr=0.1, amsgrad=True, foreach=foreach)
    for _ in range(2):
        p.grad = _t(e, dev, _x(3, 4))
        opt.step()
    return p.detach()


def _index_put(e: Any, dev: str) -> Any:
    x = _t(e, dev, _x(5, 3))
    return x.index_put_((_t(e, dev, IDX),), _t(e, dev, _x(4, 3)), accumulate=True)


def _conv_grad(which: int) -> Callable[[Any, str], Any]:
    """conv2d's gradient in x (0) or w (1), grouped and strided."""

    def call(e: Any, dev: str) -> Any:
        x = _t(e, dev, _x(2, 4, 7, 6), requires_grad=True)
        w = _t(e, dev, _x(6, 2, 3, 2), requires_grad=True)
        out = F.conv2d(x, w, stride=(2, 1), padding=1, groups=2)
        return e.autograd.grad(out, (x, w)[which], _t(e, dev, _x(*out.shape)))[0]

    return call


def _pool_grad(pool: Callable[[Any], Any]) -> Callable[[Any, str], Any]:
    def call(e: Any, dev: str) -> Any:
        x = _t(e, dev, _x(2, 3, 7, 7), requires_grad=True)
        out = pool(x)
        return e.autograd.grad(out, x, _t(e, dev, _x(*out.shape)))[0]

    return call


def _attention(grads: bool) -> Callable[[Any, str], Any]:
    """scaled_dot_product_attention with a bool mask broadcast over heads and dropout factors
    (the draws come from the seed, the same on both devices); its (dq, dk, dv) if ``grads``."""

    def call(e: Any, dev: str) -> Any:
        q, k, v = (_t(e, dev, _x(2, 3, 4, 5), requires_grad=grads) for _ in range(3))
        mask = _t(e, dev, np.tril(np.ones((4, 4), bool)))
        e.manual_seed(5)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.25)
        if not grads:
            return out
        return e.autograd.grad(out, (q, k, v), _t(e, dev, _x(2, 3, 4, 5)))

    return call


def _rnn(kind: str, grad: bool) -> Callable[[Any, str], Any]:
    """A bidirectional recurrent layer's output, or its input's gradient (the *_backward composite)."""

    def call(e: Any, dev: str) -> Any:
        e.manual_seed(0)
        # made on the cpu (the default device may be a test backend), then moved: the same weights
        m = getattr(e.nn, kind)(3, 4, bidirectional=True, device="cpu", dtype=e.float64).to(dev)
        x = _t(e, dev, _x(5, 2, 3), requires_grad=grad)
        out = m(x)[0]
        return e.autograd.grad(out, x, _t(e, dev, _x(*out.shape)))[0] if grad else out.detach()

    return call


def _scatter_reduce(reduce: str) -> Callable[[Any, str], Any]:
    def call(e: Any, dev: str) -> Any:
        x, i, s = SCATTER
        return _t(e, dev, x).scatter_reduce(0, _t(e, dev, i), _t(e, dev, s), reduce)

    return call


def _unary(fn: Callable[[Any, Any], Any], values: np.ndarray) -> Callable[[Any, str], Any]:
    def call(e: Any, dev: str) -> Any:
        return fn(e, _t(e, dev, values))

    return call


# op -> (call(ember, device) -> tensor or tuple, rtol): one frontend call that reaches the composite.
CALLS: dict[str, tuple[Callable[[Any, str], Any], float]] = {
    "clone": (_unary(lambda e, x: x.clone(), ANY), 0),
    "ceil": (_unary(lambda e, x: x.ceil(), ANY), 0),
    "trunc": (_unary(lambda e, x: x.trunc(), ANY), 0),
    "round": (_unary(lambda e, x: x.round(), ANY), 0),
    "sign": (_unary(lambda e, x: x.sign(), ANY), 0),
    "sigmoid": (_unary(lambda e, x: x.sigmoid(), ANY), 1e-15),
    "log1p": (_unary(lambda e, x: x.abs().log1p(), ANY), 1e-15),
    "expm1": (_unary(lambda e, x: x.expm1(), ANY), 1e-15),
    "remainder": (lambda e, d: _t(e, d, _x(3, 4)) % 1.5, 1e-15),
    "amin": (lambda e, d: _t(e, d, _x(3, 4)).amin(1), 0),
    "argmin": (lambda e, d: _t(e, d, _x(3, 4)).argmin(1), 0),
    "softmax": (lambda e, d: e.softmax(_t(e, d, _x(3, 4)), 1), 1e-15),
    "log_softmax": (lambda e, d: e.log_softmax(_t(e, d, _x(3, 4)), 1), 1e-15),
    "index": (lambda e, d: _t(e, d, _x(5, 3))[_t(e, d, IDX)], 0),
    "index_put": (_index_put, 1e-15),
    "nonzero": (lambda e, d: e.nonzero(_t(e, d, _x(3, 4)) > 0), 0),
    "conv2d": (lambda e, d: F.conv2d(_t(e, d, _x(2, 3, 6, 6)), _t(e, d, _x(4, 3, 3, 3)), padding=1), 1e-13),
    "max_pool2d": (lambda e, d: F.max_pool2d(_t(e, d, _x(2, 3, 6, 6)), 2), 0),
    "avg_pool2d": (lambda e, d: F.avg_pool2d(_t(e, d, _x(2, 3, 6, 6)), 2), 1e-15),
    "conv2d_input_grad": (_conv_grad(0), 1e-13),
    "conv2d_weight_grad": (_conv_grad(1), 1e-13),
    "max_pool2d_backward": (_pool_grad(lambda x: F.max_pool2d(x, 3, 2, 1)), 1e-15),
    "avg_pool2d_backward": (_pool_grad(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)), 1e-15),
    "add_scaled": (_add_scaled, 1e-15),
    "sgd_update": (_sgd, 1e-15),
    "adam_update": (_adam, 1e-14),
    "sgd_update_foreach": (lambda e, d: _sgd(e, d, foreach=True), 1e-15),
    "adam_update_foreach": (lambda e, d: _adam(e, d, foreach=True), 1e-14),
    "norm_foreach": (_clip, 1e-14),
    "mul_foreach": (_clip, 1e-14),
    "layer_norm": (
        lambda e, d: F.layer_norm(_t(e, d, _x(4, 6)), (6,), _t(e, d, _x(6)), _t(e, d, _x(6))),
        1e-14,
    ),
    "layer_norm_backward": (_layer_norm_grad, 1e-13),
    "lstm_layer": (_rnn("LSTM", False), 1e-13),
    "lstm_layer_backward": (_rnn("LSTM", True), 1e-13),
    "gru_layer": (_rnn("GRU", False), 1e-13),
    "gru_layer_backward": (_rnn("GRU", True), 1e-13),
    "rnn_layer": (_rnn("RNN", False), 1e-13),
    "rnn_layer_backward": (_rnn("RNN", True), 1e-13),
    "sdpa": (_attention(False), 1e-13),
    "sdpa_backward": (_attention(True), 1e-13),
    "softmax_backward": (_softmax_grad(False), 1e-15),
    "log_softmax_backward": (_softmax_grad(True), 1e-15),
    "relu_backward": (_relu_grad, 0),
    "atan": (_unary(lambda e, x: x.atan(), WIDE), 1e-15),
    "atan2": (lambda e, d: e.atan2(_t(e, d, _x(3, 4)), _t(e, d, _x(3, 4))), 1e-15),
    "asin": (_unary(lambda e, x: x.asin(), UNIT), 1e-15),
    "acos": (_unary(lambda e, x: x.acos(), UNIT), 1e-15),
    "erfc": (_unary(lambda e, x: e.special.erfc(x), WIDE), 1e-13),
    "erfinv": (_unary(lambda e, x: e.special.erfinv(x), UNIT), 1e-13),
    "erfcx": (_unary(lambda e, x: e.special.erfcx(x), WIDE), 1e-13),
    "lgamma": (_unary(lambda e, x: e.lgamma(x), GAMMA), 1e-13),
    "digamma": (_unary(lambda e, x: e.digamma(x), _edges(POS, [-0.5, -2.5, -7.3, 0.0])), 1e-13),
    "polygamma": (_unary(lambda e, x: e.polygamma(2, x), POS[:-1]), 1e-13),
    "zeta": (
        lambda e, d: e.special.zeta(_t(e, d, _x(20, lo=1.1, hi=8)), _t(e, d, _x(20, lo=0.1, hi=9))),
        1e-13,
    ),
    "ndtri": (_unary(lambda e, x: e.special.ndtri(x), PROB), 1e-13),
    "log_ndtr": (_unary(lambda e, x: e.special.log_ndtr(x), WIDE), 1e-13),
    "i0": (_unary(lambda e, x: e.special.i0(x), WIDE), 1e-13),
    "i0e": (_unary(lambda e, x: e.special.i0e(x), WIDE), 1e-13),
    "i1": (_unary(lambda e, x: e.special.i1(x), WIDE), 1e-13),
    "i1e": (_unary(lambda e, x: e.special.i1e(x), WIDE), 1e-13),
    "bessel_j0": (_unary(lambda e, x: e.special.bessel_j0(x), WIDE), 1e-12),
    "bessel_j1": (_unary(lambda e, x: e.special.bessel_j1(x), WIDE), 1e-12),
    "cumprod": (lambda e, d: _t(e, d, _x(3, 5)).cumprod(1), 1e-15),
    "cummax": (lambda e, d: tuple(_t(e, d, _x(3, 5)).cummax(1)), 0),
    "cummin": (lambda e, d: tuple(_t(e, d, _x(3, 5)).cummin(1)), 0),
    "scatter_reduce": (_scatter_reduce("amax"), 0),
    "real": (lambda e, d: _t(e, d, CPLX).real.clone(), 0),
    "imag": (lambda e, d: _t(e, d, CPLX).imag.clone(), 0),
    "complex": (lambda e, d: e.complex(_t(e, d, _x(3, 4)), _t(e, d, _x(3, 4))), 0),
    "linalg_det": (lambda e, d: e.linalg.det(_t(e, d, WELL)), 1e-13),
    "linalg_slogdet": (lambda e, d: tuple(e.linalg.slogdet(_t(e, d, WELL))), 1e-13),
    "linalg_inv": (lambda e, d: e.linalg.inv(_t(e, d, CPLX)), 1e-13),
    "linalg_solve": (lambda e, d: e.linalg.solve(_t(e, d, WELL), _t(e, d, _x(2, 4, 3))), 1e-13),
    "linalg_lstsq": (lambda e, d: e.linalg.lstsq(_t(e, d, TALL), _t(e, d, _x(5, 2))).solution, 1e-12),
    "linalg_cholesky": (lambda e, d: e.linalg.cholesky(_t(e, d, SPD), upper=True), 1e-13),
    "linalg_qr": (lambda e, d: tuple(e.linalg.qr(_t(e, d, TALL), mode="complete")), 1e-13),
    "linalg_eig": (lambda e, d: e.linalg.eigvals(_t(e, d, WELL)).abs().sort().values, 1e-12),
    "linalg_eigh": (lambda e, d: e.linalg.eigvalsh(_t(e, d, SPD)), 1e-12),
    "linalg_svd": (lambda e, d: e.linalg.svdvals(_t(e, d, TALL)), 1e-12),
    "linalg_matrix_exp": (lambda e, d: e.linalg.matrix_exp(_t(e, d, CPLX)), 1e-12),
    "linalg_householder_product": (
        lambda e, d: e.linalg.householder_product(_t(e, d, TALL), _t(e, d, _x(3, lo=0, hi=1.5))),
        1e-13,
    ),
}

DECOMPOSED = sorted(registry.decomposed())


def _host(out: Any) -> list[np.ndarray]:
    outs = out if isinstance(out, tuple) else (out,)
    return [o.to("cpu").cpu().numpy() for o in outs]


def _both(op: str, device: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    call, _ = CALLS[op]
    state = RNG.bit_generator.state
    want = _host(call(ember, "cpu"))
    RNG.bit_generator.state = state  # the same random inputs on both devices
    got = _host(call(ember, device))
    return got, want


def test_every_composite_has_a_call_here() -> None:
    assert sorted(CALLS) == sorted(COMPOSITES)


@pytest.mark.parametrize("op", DECOMPOSED)
def test_decomposition_runs_on_the_device_and_matches_the_cpu_kernel(
    op: str, cpu_prims: str, fallback_policy: Callable[[str], None]
) -> None:
    fallback_policy("error")  # a CPU round trip would raise FallbackError
    got, want = _both(op, cpu_prims)
    rtol = CALLS[op][1]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 0.1, equal_nan=True)


@pytest.fixture
def without_decomposition(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Factory: forget composite ``op``'s decomposition for one test (as if it had none)."""

    def drop(op: str) -> None:
        monkeypatch.delitem(DECOMPOSITIONS, op)
        monkeypatch.delitem(registry._decomposed, op)

    return drop


@pytest.mark.parametrize("op", ["erfc", "linalg_eig", "scatter_reduce"])
def test_composite_without_decomposition_is_a_cpu_fallback(
    op: str, cpu_prims: str, fallback_policy: Callable[[str], None], without_decomposition: Any
) -> None:
    without_decomposition(op)
    assert registry.get(cpu_prims).composite_fallbacks() == [op]
    fallback_policy("error")
    # linalg wraps the FallbackError (a RuntimeError) in its LinAlgError, keeping the text
    with pytest.raises(RuntimeError, match=f"{op}: backend 'cpu_prims' has no kernel"):
        CALLS[op][0](ember, cpu_prims)
    fallback_policy("silent")
    got, want = _both(op, cpu_prims)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # the CPU kernel itself, copied back


def test_ember_info_labels_both_kinds_of_fallback(
    cpu_prims: str, without_decomposition: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from ember.cli import main

    without_decomposition("linalg_eig")
    assert main(["info", "--backend", cpu_prims]) == 0
    out = capsys.readouterr().out
    assert "primitive fallbacks (no kernel; run on the CPU and copied back): none" in out
    assert (
        "composite fallbacks (no kernel, no decomposition; run on the CPU and copied back): linalg_eig" in out
    )
    assert "composites decomposed into primitives on the device: clone, ceil," in out


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda e, d: e.linalg.inv(_t(e, d, np.ones((2, 3, 3)))),
            (
                r"^linalg\.inv: \(Batch element 0\): The diagonal element 2 is zero, the inversion could not "
                r"be completed because the input matrix is singular\.$"
            ),
        ),
        (
            lambda e, d: e.linalg.solve(_t(e, d, np.zeros((2, 2))), _t(e, d, np.ones((2, 1)))),
            r"^ember\.linalg\.solve: The solver failed because the input matrix is singular\.$",
        ),
        (
            lambda e, d: e.linalg.cholesky(_t(e, d, -np.eye(3))),
            (
                r"^linalg\.cholesky: The factorization could not be completed because the input is not "
                r"positive-definite \(the leading minor of order 1 is not positive-definite\)\.$"
            ),
        ),
    ],
)
def test_decomposed_linalg_raises_like_the_cpu_kernel(call: Any, message: str, cpu_prims: str) -> None:
    for device in ("cpu", cpu_prims):
        with pytest.raises(ember.linalg.LinAlgError, match=message):
            call(ember, device)


def test_singular_det_and_slogdet_are_zero(cpu_prims: str) -> None:
    a = _t(ember, cpu_prims, np.ones((3, 3)))
    assert ember.linalg.det(a).item() == 0.0
    sign, logabs = ember.linalg.slogdet(a)
    assert sign.item() == 0.0 and logabs.item() == -np.inf


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_decompositions_keep_the_dtype_and_compute_halves_in_float32(dtype: str, cpu_prims: str) -> None:
    dt = getattr(ember, dtype)
    x = ember.tensor(UNIT[:40], dtype=dt)
    for fn in (ember.special.erfinv, ember.atan, ember.lgamma, ember.special.i0e):
        got, want = fn(x.to(cpu_prims)), fn(x)
        assert got.dtype is dt
        tol = {"float32": 2e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
        np.testing.assert_allclose(got.float().cpu().numpy(), want.float().cpu().numpy(), rtol=tol, atol=tol)


def test_decompositions_differentiate_through_the_frontend_rules(cpu_prims: str) -> None:
    x = ember.tensor([0.3, -0.7, 1.9], device=cpu_prims, requires_grad=True)
    (ember.special.erfinv(x * 0.5).sum() + ember.lgamma(x.abs() + 1).sum()).backward()
    y = ember.tensor([0.3, -0.7, 1.9], requires_grad=True)
    (ember.special.erfinv(y * 0.5).sum() + ember.lgamma(y.abs() + 1).sum()).backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), y.grad.cpu().numpy(), rtol=1e-6)


def test_decompositions_give_pytorchs_values_at_the_edges(cpu_prims: str) -> None:
    inf, nan = np.inf, np.nan
    x = ember.tensor([-inf, inf, 0.0, -0.0, -1.0, nan], dtype=ember.float64, device=cpu_prims)
    expected = {  # torch 2.13 on these inputs
        ember.lgamma: [inf, inf, inf, inf, inf, nan],
        ember.digamma: [nan, inf, -inf, inf, nan, nan],
        ember.special.i0e: [0.0, 0.0, 1.0, 1.0, 0.46575960759364043, nan],
    }
    for fn, want in expected.items():
        np.testing.assert_allclose(fn(x).cpu().numpy(), want, rtol=1e-15)
    p = ember.tensor([0.0, 1.0, nan], dtype=ember.float64, device=cpu_prims)
    np.testing.assert_array_equal(ember.special.ndtri(p).cpu().numpy(), [-inf, inf, nan])
