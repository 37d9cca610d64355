"""ember.distributions against torch.distributions on the same parameters: closed forms.

log_prob, cdf, icdf, entropy, mean, variance, stddev, mode and KL must agree to float64
rounding; validation errors must have PyTorch's type and message. Draws and their gradients
are compared in ``test_distributions_sampling_torch.py``.
"""

from __future__ import annotations

import math

import ember
import ember.distributions as ED
import pytest
from _distribution_cases import CASES, KL_PAIRS, _call, _et, _pair, _same, _tt

torch = pytest.importorskip("torch")
TD = torch.distributions
scipy_stats = pytest.importorskip("scipy.stats")


# Where PyTorch computes less exactly than float64: its Multinomial entropy takes lgamma of an
# int64 tensor (float32); VonMises uses polynomial fits of log I0 and log I1 (about 1e-7
# relative; ember uses the scaled Bessel functions, exact to float64 against scipy).
LOOSER = {("multinomial", "entropy"): 1e-6, "von_mises": 1e-6}


@pytest.mark.parametrize(("case", "build"), CASES, ids=[c[0] for c in CASES])
def test_closed_forms_match(case, build):
    e, t = _pair(build)
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    assert e.has_rsample == t.has_rsample
    value_t = t.sample((4,))
    value_e = _et(value_t.tolist())
    checks = [("log_prob", value_e, value_t), ("entropy",), ("mean",), ("variance",), ("stddev",), ("mode",)]
    if not t.support.is_discrete and t.event_shape == ():
        checks += [
            ("cdf", value_e, value_t),
            ("icdf", _et([[0.1], [0.5], [0.9]]), _tt([[0.1], [0.5], [0.9]])),
        ]
    for name, *args in checks:
        want = _call(t, name, *args[1:] if args else ())
        got = _call(e, name, *args[:1] if args else ())
        if want is NotImplementedError:
            assert got is NotImplementedError, name
        else:
            _same(got, want, rtol=LOOSER.get((case, name), LOOSER.get(case, 1e-9)))


@pytest.mark.parametrize(("case", "p", "q"), KL_PAIRS, ids=[c[0] for c in KL_PAIRS])
def test_kl_divergence_matches(case, p, q):
    got = ED.kl_divergence(p(ED, _et), q(ED, _et))
    want = TD.kl_divergence(p(TD, _tt), q(TD, _tt))
    _same(got, want)


def _msg(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is compared too
        return type(exc), str(exc).replace("torch.", "ember.")
    return None


ERRORS = [
    ("loc_nan", lambda D, T: D.Normal(T([0.0, math.nan]), T([1.0, 1.0]))),
    ("scale_negative", lambda D, T: D.Normal(T([0.0, 1.0]), T([1.0, -1.0]))),
    ("sample_nan", lambda D, T: D.Normal(0.0, T([1.0, 1.0])).log_prob(T([math.nan]))),
    ("bernoulli_support", lambda D, T: D.Bernoulli(probs=T([0.5])).log_prob(T([0.3]))),
    ("both_params", lambda D, T: D.Bernoulli(probs=0.2, logits=0.1)),
    ("no_params", lambda D, T: D.Categorical()),
    ("uniform_order", lambda D, T: D.Uniform(T([1.0]), T([0.0]))),
    ("scalar_probs", lambda D, T: D.Categorical(T(0.5))),
    ("event_shape", lambda D, T: D.Dirichlet(T([1.0, 1.0])).log_prob(T([0.5, 0.25, 0.25]))),
    ("broadcast", lambda D, T: D.Normal(T([0.0, 1.0]), 1.0).log_prob(T([0.0, 1.0, 2.0]))),
    ("not_tensor", lambda D, T: D.Normal(0.0, 1.0).log_prob(0.5)),
    ("mvn_two", lambda D, T: D.MultivariateNormal(T([0.0]), T([[1.0]]), scale_tril=T([[1.0]]))),
    ("mvn_pd", lambda D, T: D.MultivariateNormal(T([0.0, 0.0]), T([[1.0, 2.0], [2.0, 1.0]]))),
    ("dirichlet_simplex", lambda D, T: D.Dirichlet(T([1.0, 2.0])).log_prob(T([0.5, 0.6]))),
    ("independent_ndims", lambda D, T: D.Independent(D.Normal(T([0.0]), T([1.0])), 2)),
    ("multinomial_count", lambda D, T: D.Multinomial(2.5, T([0.5, 0.5]))),
    ("binomial_entropy", lambda D, T: D.Binomial(T([2.0, 3.0]), T([0.5, 0.5])).entropy()),
    ("kl_missing", lambda D, T: D.kl_divergence(D.Normal(0.0, 1.0), D.Cauchy(0.0, 1.0))),
    ("gamma_param", lambda D, T: D.Gamma(T([1.0]), T([0.0]))),
    ("categorical_value", lambda D, T: D.Categorical(T([0.5, 0.5])).log_prob(T(2.0))),
    ("geometric_zero", lambda D, T: D.Geometric(T([0.0, 0.5]))),
    (
        "lowrank_factor",
        lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0, 2.0, 3.0]]), T([1.0, 1.0])),
    ),
    (
        "lowrank_diag",
        lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [2.0]]), T([1.0, 1.0, 1.0])),
    ),
    ("lowrank_dim", lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([1.0, 2.0]), T([1.0, 1.0]))),
    (
        "lowrank_kl",
        lambda D, T: D.kl_divergence(
            D.LowRankMultivariateNormal(T([0.0]), T([[1.0]]), T([1.0])),
            D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0]]), T([1.0, 1.0])),
        ),
    ),
    ("bernoulli_probs", lambda D, T: D.Bernoulli(T([1.5, 0.5]))),
    ("categorical_simplex", lambda D, T: D.Categorical(T([0.5, -0.1]))),
    ("binomial_count", lambda D, T: D.Binomial(T([2.5]), T([0.5]))),
    ("binomial_support", lambda D, T: D.Binomial(3, T([0.5])).log_prob(T([4.0]))),
    ("mvn_tril", lambda D, T: D.MultivariateNormal(T([0.0, 0.0]), scale_tril=T([[1.0, 1.0], [0.0, 1.0]]))),
    ("mvn_loc_dim", lambda D, T: D.MultivariateNormal(T(0.0), T([[1.0]]))),
    ("multinomial_support", lambda D, T: D.Multinomial(2, T([0.5, 0.5])).log_prob(T([2.0, 1.0]))),
    ("dirichlet_dim", lambda D, T: D.Dirichlet(T(1.0))),
    ("poisson_negative", lambda D, T: D.Poisson(T([-1.0]))),
    ("transformed_bad", lambda D, T: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")),
    ("beta_support", lambda D, T: D.Beta(T([1.0]), T([1.0])).log_prob(T([1.5]))),
    ("studentt_df", lambda D, T: D.StudentT(T([0.0]))),
    ("uniform_support", lambda D, T: D.Uniform(T([0.0]), T([1.0])).log_prob(T([2.0]))),
    ("halfnormal_support", lambda D, T: D.HalfNormal(T([1.0])).log_prob(T([-1.0]))),
    ("onehot_support", lambda D, T: D.OneHotCategorical(T([0.5, 0.5])).log_prob(T([1.0, 1.0]))),
    ("binomial_kl", lambda D, T: D.kl_divergence(D.Binomial(2, T([0.5])), D.Binomial(3, T([0.5])))),
    ("mixture_type", lambda D, T: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(T([0.0]), 1.0))),
    (
        "mixture_count",
        lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.5, 0.5])), D.Normal(T([0.0, 1.0, 2.0]), 1.0)),
    ),
    (
        "mixture_support",
        lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.5, 0.5])), D.Gamma(T([1.0, 2.0]), 1.0)).log_prob(
            T(-1.0)
        ),
    ),
]


@pytest.mark.parametrize(("case", "fn"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_pytorch(case, fn):
    want = _msg(lambda: fn(TD, _tt))
    got = _msg(lambda: fn(ED, _et))
    assert want is not None
    assert got == want


def test_validation_default_switch_matches():
    for D, T in ((TD, _tt), (ED, _et)):
        D.Distribution.set_default_validate_args(False)
        try:
            D.Normal(T([0.0]), T([-1.0]))  # accepted unchecked
        finally:
            D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Normal(T([0.0]), T([-1.0]))


def test_reprs_match():
    for _, build in CASES:
        e, t = _pair(build)
        assert repr(e) == repr(t).replace("torch.", "ember.")


NUMBER_PARAMS = [
    ("normal", lambda D: D.Normal(0.5, 2.0)),
    ("gamma", lambda D: D.Gamma(2.0, 3.0)),
    ("beta", lambda D: D.Beta(2.0, 3.0)),
    ("bernoulli", lambda D: D.Bernoulli(logits=0.3)),
    ("poisson", lambda D: D.Poisson(3.0)),
    ("studentt", lambda D: D.StudentT(4.0)),
    ("lognormal", lambda D: D.LogNormal(0.0, 0.5)),
    ("chi2", lambda D: D.Chi2(3.0)),
]


@pytest.mark.parametrize(("case", "build"), NUMBER_PARAMS, ids=[c[0] for c in NUMBER_PARAMS])
def test_number_parameters_in_the_default_dtype(case, build):
    """Numbers become 0-dim tensors of the default dtype (float32): shapes, reprs and values."""
    e, t = build(ED), build(TD)
    assert tuple(e.batch_shape) == tuple(t.batch_shape) == ()
    assert repr(e) == repr(t)
    x = t.sample((3,))
    got = e.log_prob(ember.tensor(x.tolist()))
    assert got.dtype == ember.float32
    _same(got, t.log_prob(x), rtol=1e-5, atol=1e-6)
    if _call(t, "entropy") is not NotImplementedError:
        _same(e.entropy(), t.entropy(), rtol=1e-5, atol=1e-6)
        _same(e.perplexity(), t.perplexity(), rtol=1e-5, atol=1e-6)


ENUMERABLE = [
    c for c in CASES if c[0] in {"bernoulli_probs", "categorical", "onehot", "binomial_logits", "independent"}
]


@pytest.mark.parametrize(("case", "build"), ENUMERABLE, ids=[c[0] for c in ENUMERABLE])
def test_enumerate_support_matches(case, build):
    e, t = _pair(build)
    assert e.has_enumerate_support == t.has_enumerate_support
    for expand in (True, False):
        want = _call(t, "enumerate_support", expand)
        got = _call(e, "enumerate_support", expand)
        if want is NotImplementedError:
            assert got is NotImplementedError
            continue
        _same(got, want)
        _same(e.log_prob(got), t.log_prob(want))


def test_expanded_distributions_match():
    for case, build in CASES:
        e, t = _pair(build)
        batch = (3, *t.batch_shape)
        te, ee = t.expand(batch), e.expand(batch)
        assert tuple(ee.batch_shape) == tuple(te.batch_shape)
        x = te.sample()
        _same(ee.log_prob(_et(x.tolist())), te.log_prob(x), rtol=LOOSER.get(case, 1e-9))


def _leaf_maker(lib, dtype, leaves):
    """A tensor maker whose tensors are leaves that require grad, recorded in ``leaves``."""

    def make(v):
        t = lib.tensor(v, dtype=dtype, requires_grad=True)
        leaves.append(t)
        return t

    return make


@pytest.mark.parametrize(("case", "build"), CASES, ids=[c[0] for c in CASES])
def test_parameter_gradients_of_log_prob_and_entropy(case, build):
    """d/dparams of sum(log_prob(x)) + sum(entropy) match PyTorch's (the composed ops' derivative rules)."""
    le, lt = [], []
    e, t = build(ED, _leaf_maker(ember, ember.float64, le)), build(TD, _leaf_maker(torch, torch.float64, lt))
    x = t.sample((3,))
    loss_t = t.log_prob(x).sum()
    loss_e = e.log_prob(_et(x.tolist())).sum()
    if _call(t, "entropy") is not NotImplementedError:
        loss_t = loss_t + t.entropy().sum()
        loss_e = loss_e + e.entropy().sum()
    want = torch.autograd.grad(loss_t, lt, allow_unused=True)
    got = ember.autograd.grad(loss_e, le, allow_unused=True)
    for g, w in zip(got, want):
        if w is None:
            assert g is None or not bool(g.abs().sum() > 0)
        else:
            _same(g, w, rtol=LOOSER.get(case, 1e-7) * 5, atol=1e-9)
