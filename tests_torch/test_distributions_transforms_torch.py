"""ember.distributions transforms and constraint registry against PyTorch's, on the same inputs.

Forward values, inverses, log-Jacobians and shapes must agree to float64 rounding, and
``biject_to``/``transform_to`` must pick the same transform for each constraint.
"""

from __future__ import annotations

import ember
import ember.distributions as ED
import numpy as np
import pytest

torch = pytest.importorskip("torch")
TD = torch.distributions


def _np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _same(e, t):
    got, want = _np(e), _np(t)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True)


TRANSFORMS = [
    ("exp", lambda D, T: D.ExpTransform(), [[-1.0, 0.0, 2.0]]),
    ("affine", lambda D, T: D.AffineTransform(T([1.0, -1.0, 0.5]), T([2.0, -3.0, 0.5])), [[-1.0, 0.0, 2.0]]),
    (
        "affine_event",
        lambda D, T: D.AffineTransform(T(1.0), T([2.0, 3.0, 0.5]), event_dim=1),
        [[-1.0, 0.0, 2.0]],
    ),
    ("sigmoid", lambda D, T: D.SigmoidTransform(), [[-3.0, 0.0, 2.0]]),
    ("tanh", lambda D, T: D.TanhTransform(), [[-3.0, 0.0, 2.0]]),
    ("softplus", lambda D, T: D.SoftplusTransform(), [[-3.0, 0.0, 2.0]]),
    ("power", lambda D, T: D.PowerTransform(T([0.5, 2.0, -1.0])), [[0.5, 1.5, 3.0]]),
    ("abs", lambda D, T: D.AbsTransform(), [[-3.0, 0.0, 2.0]]),
    ("stick_breaking", lambda D, T: D.StickBreakingTransform(), [[0.3, -1.0, 2.0], [0.0, 0.0, 0.0]]),
    ("softmax", lambda D, T: D.SoftmaxTransform(), [[0.3, -1.0, 2.0]]),
    ("lower_cholesky", lambda D, T: D.LowerCholeskyTransform(), [[[0.3, 5.0], [-1.0, 2.0]]]),
    ("positive_definite", lambda D, T: D.PositiveDefiniteTransform(), [[[0.3, 5.0], [-1.0, 2.0]]]),
    (
        "compose",
        lambda D, T: D.ComposeTransform(
            [D.AffineTransform(T(0.5), T(2.0)), D.ExpTransform(), D.PowerTransform(T(0.5))]
        ),
        [[-1.0, 0.0, 2.0]],
    ),
    ("independent", lambda D, T: D.IndependentTransform(D.ExpTransform(), 1), [[[-1.0, 0.0], [2.0, 1.0]]]),
    ("inverse", lambda D, T: D.ExpTransform().inv, [[0.5, 1.0, 3.0]]),
]


@pytest.mark.parametrize(("case", "build", "x"), TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transforms_match(case, build, x):
    def T64(v, lib):
        return lib.tensor(v, dtype=lib.float64)

    e = build(ED.transforms, lambda v: T64(v, ember))
    t = build(TD.transforms, lambda v: T64(v, torch))
    xe, xt = T64(x, ember), T64(x, torch)
    ye, yt = e(xe), t(xt)
    _same(ye, yt)
    _same(e.inv(ember.tensor(yt.tolist(), dtype=ember.float64)), t.inv(yt))
    assert e.bijective == t.bijective
    assert (e.domain.event_dim, e.codomain.event_dim) == (t.domain.event_dim, t.codomain.event_dim)
    assert repr(e.domain) == repr(t.domain).replace("torch.", "ember.")
    assert tuple(e.forward_shape(tuple(xt.shape))) == tuple(t.forward_shape(xt.shape))
    assert tuple(e.inverse_shape(tuple(yt.shape))) == tuple(t.inverse_shape(yt.shape))
    if case in {"softmax", "abs", "lower_cholesky", "positive_definite"}:
        return  # no log-Jacobian in PyTorch either
    _same(e.log_abs_det_jacobian(xe, ye), t.log_abs_det_jacobian(xt, yt))
    try:
        sign_t = t.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            _ = e.sign
        return
    sign_e = e.sign
    if isinstance(sign_t, torch.Tensor):
        _same(sign_e, sign_t)
    else:
        assert sign_e == sign_t


CONSTRAINTS = [
    ("real", lambda c: c.real),
    ("positive", lambda c: c.positive),
    ("nonnegative", lambda c: c.nonnegative),
    ("greater_than", lambda c: c.greater_than(2.0)),
    ("less_than", lambda c: c.less_than(1.0)),
    ("unit_interval", lambda c: c.unit_interval),
    ("interval", lambda c: c.interval(-1.0, 3.0)),
    ("half_open", lambda c: c.half_open_interval(0.0, 2.0)),
    ("simplex", lambda c: c.simplex),
    ("real_vector", lambda c: c.real_vector),
    ("independent_positive", lambda c: c.independent(c.positive, 1)),
    ("lower_cholesky", lambda c: c.lower_cholesky),
    ("positive_definite", lambda c: c.positive_definite),
    ("boolean", lambda c: c.boolean),
    ("nonnegative_integer", lambda c: c.nonnegative_integer),
]


def _outcome(registry, constraint):
    try:
        return repr(registry(constraint)).replace("torch.", "ember.")
    except NotImplementedError as exc:
        return f"NotImplementedError: {exc}"


@pytest.mark.parametrize(("case", "make"), CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraint_registries_match(case, make):
    for name in ("biject_to", "transform_to"):
        want = _outcome(getattr(TD, name), make(TD.constraints))
        got = _outcome(getattr(ED, name), make(ED.constraints))
        assert got == want, name
        if want.startswith("NotImplementedError"):
            continue
        matrix = case in {"lower_cholesky", "positive_definite"}
        x = np.linspace(-1.5, 1.5, 4).reshape((1, 2, 2) if matrix else (1, 4))
        ye = getattr(ED, name)(make(ED.constraints))(ember.tensor(x.tolist(), dtype=ember.float64))
        yt = getattr(TD, name)(make(TD.constraints))(torch.tensor(x, dtype=torch.float64))
        _same(ye, yt)
        assert bool(make(ED.constraints).check(ye).all())
