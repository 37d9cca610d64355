"""ember.distributions on its own: shapes, validation, seeding, gradients, transforms, KL dispatch.

Values PyTorch also computes are checked against it in ``tests_torch/``; here the expected
numbers are closed forms written out, and everything runs on the session's test backend.
"""

from __future__ import annotations

import math

import ember
import ember.distributions as D
import pytest
from ember.distributions import constraints
from ember.distributions.transforms import sum_rightmost


def _t(v, **kw):
    return ember.tensor(v, **kw)


def _close(a, b, tol=1e-5):
    a = a.tolist() if isinstance(a, ember.Tensor) else a
    b = b.tolist() if isinstance(b, ember.Tensor) else b
    assert ember.allclose(_t(a, dtype=ember.float64), _t(b, dtype=ember.float64), atol=tol, rtol=tol), (a, b)


BUILDERS = {
    "normal": lambda: D.Normal(_t([0.0, 1.0]), _t([1.0, 2.0])),
    "uniform": lambda: D.Uniform(_t([0.0, 1.0]), _t([1.0, 3.0])),
    "exponential": lambda: D.Exponential(_t([1.0, 2.0])),
    "laplace": lambda: D.Laplace(_t([0.0, 1.0]), _t([1.0, 2.0])),
    "cauchy": lambda: D.Cauchy(_t([0.0, 1.0]), _t([1.0, 2.0])),
    "gamma": lambda: D.Gamma(_t([0.5, 3.0]), _t([1.0, 2.0])),
    "beta": lambda: D.Beta(_t([0.5, 3.0]), _t([1.0, 2.0])),
    "dirichlet": lambda: D.Dirichlet(_t([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])),
    "studentt": lambda: D.StudentT(_t([3.0, 5.0])),
    "lognormal": lambda: D.LogNormal(_t([0.0, 1.0]), _t([1.0, 0.5])),
    "bernoulli": lambda: D.Bernoulli(_t([0.2, 0.7])),
    "categorical": lambda: D.Categorical(_t([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
    "onehot": lambda: D.OneHotCategorical(_t([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
    "poisson": lambda: D.Poisson(_t([1.0, 15.0])),
    "binomial": lambda: D.Binomial(_t([4.0, 50.0]), _t([0.3, 0.6])),
    "multinomial": lambda: D.Multinomial(5, _t([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
    "mvn": lambda: D.MultivariateNormal(_t([[0.0, 1.0], [1.0, 0.0]]), _t([[2.0, 0.5], [0.5, 1.0]])),
    "independent": lambda: D.Independent(D.Normal(_t([[0.0, 1.0], [2.0, 3.0]]), _t([1.0, 2.0])), 1),
    "transformed": lambda: D.TransformedDistribution(D.Normal(_t([0.0, 1.0]), 1.0), [D.TanhTransform()]),
    "relaxed": lambda: D.RelaxedBernoulli(_t(0.5), probs=_t([0.2, 0.7])),
    "halfnormal": lambda: D.HalfNormal(_t([1.0, 2.0])),
    "halfcauchy": lambda: D.HalfCauchy(_t([1.0, 2.0])),
    "gumbel": lambda: D.Gumbel(_t([0.0, 1.0]), _t([1.0, 2.0])),
    "geometric": lambda: D.Geometric(_t([0.2, 0.7])),
    "negative_binomial": lambda: D.NegativeBinomial(_t([3.0, 10.0]), _t([0.4, 0.8])),
    "pareto": lambda: D.Pareto(_t([1.0, 2.0]), _t([3.0, 1.5])),
    "weibull": lambda: D.Weibull(_t([1.0, 2.0]), _t([0.5, 3.0])),
    "inverse_gamma": lambda: D.InverseGamma(_t([3.0, 1.5]), _t([2.0, 1.0])),
    "fisher_snedecor": lambda: D.FisherSnedecor(_t([3.0, 10.0]), _t([5.0, 12.0])),
    "continuous_bernoulli": lambda: D.ContinuousBernoulli(_t([0.2, 0.5])),
    "von_mises": lambda: D.VonMises(_t([0.0, 1.0]), _t([0.5, 20.0])),
    "kumaraswamy": lambda: D.Kumaraswamy(_t([0.5, 2.0]), _t([0.7, 3.0])),
    "lowrank_mvn": lambda: D.LowRankMultivariateNormal(
        _t([[0.0, 1.0, 2.0], [1.0, -1.0, 0.0]]),
        _t([[1.0, 0.5], [0.3, -0.2], [0.0, 2.0]]),
        _t([0.5, 1.0, 2.0]),
    ),
    "logistic_normal": lambda: D.LogisticNormal(_t([[0.0, 1.0], [-1.0, 0.5]]), _t([1.0, 0.5])),
    "relaxed_onehot": lambda: D.RelaxedOneHotCategorical(
        _t(0.5), logits=_t([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    ),
    "mixture": lambda: D.MixtureSameFamily(
        D.Categorical(_t([[0.3, 0.7], [0.5, 0.5]])),
        D.Independent(D.Normal(_t([[[0.0], [1.0]], [[2.0], [3.0]]]), 1.0), 1).expand((2, 2)),
    ),
}
EVENT = {
    "dirichlet": (3,),
    "onehot": (3,),
    "multinomial": (3,),
    "mvn": (2,),
    "independent": (2,),
    "relaxed_onehot": (3,),
    "mixture": (1,),
    "logistic_normal": (3,),
    "lowrank_mvn": (3,),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_shapes_of_draws_and_log_prob(name):
    d = BUILDERS[name]()
    event = EVENT.get(name, ())
    batch = (2,)
    assert tuple(d.batch_shape) == batch and tuple(d.event_shape) == event
    s = d.sample((4, 3))
    assert tuple(s.shape) == (4, 3, *batch, *event)
    assert not s.requires_grad
    assert tuple(d.log_prob(s).shape) == (4, 3, *batch)
    e = d.expand((5, 2))
    assert tuple(e.batch_shape) == (5, 2) and tuple(e.event_shape) == event
    assert tuple(e.sample().shape) == (5, 2, *event)
    assert tuple(e.log_prob(e.sample()).shape) == (5, 2)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_manual_seed_makes_draws_reproducible(name):
    d = BUILDERS[name]()
    ember.manual_seed(123)
    a = d.sample((50,))
    ember.manual_seed(123)
    b = d.sample((50,))
    assert ember.equal(a, b)
    assert not ember.equal(a, d.sample((50,))) or name == "multinomial"


def test_default_dtype_and_number_parameters():
    d = D.Normal(0.0, 1.0)
    assert tuple(d.batch_shape) == () and d.loc.dtype == ember.float32
    assert d.sample().dtype == ember.float32 and tuple(d.sample().shape) == ()
    assert repr(d) == "Normal(loc: 0.0, scale: 1.0)"
    d64 = D.Normal(_t([0.0], dtype=ember.float64), 1.0)
    assert d64.scale.dtype == ember.float64 and d64.rsample((2,)).dtype == ember.float64


def test_exact_values():
    _close(D.Normal(0.0, 1.0).log_prob(_t(0.0)), -0.5 * math.log(2 * math.pi))
    _close(D.Normal(1.0, 2.0).cdf(_t(1.0)), 0.5)
    _close(D.Normal(0.0, 1.0).icdf(_t(0.975)), 1.959964, tol=1e-4)
    _close(D.Exponential(2.0).cdf(_t(1.0)), 1 - math.exp(-2.0))
    _close(D.Exponential(2.0).entropy(), 1 - math.log(2.0))
    _close(D.Uniform(1.0, 3.0, validate_args=False).log_prob(_t([2.0, 4.0])), [-math.log(2.0), -math.inf])
    _close(D.Gamma(2.0, 1.0).log_prob(_t(1.0)), -1.0)
    _close(D.Gamma(1.0, 1.0).cdf(_t(1.0)), 1 - math.exp(-1.0))
    _close(D.Beta(2.0, 1.0).log_prob(_t(0.5)), 0.0)  # density 2x at x = 1/2
    _close(D.Bernoulli(0.25).log_prob(_t([0.0, 1.0])), [math.log(0.75), math.log(0.25)])
    _close(D.Poisson(2.0).log_prob(_t(3.0)), 3 * math.log(2.0) - 2.0 - math.log(6.0))
    _close(D.Binomial(4, _t(0.5)).log_prob(_t(2.0)), math.log(6 / 16))
    _close(D.Categorical(_t([1.0, 3.0])).probs, [0.25, 0.75])
    _close(D.Multinomial(2, _t([0.5, 0.5])).log_prob(_t([1.0, 1.0])), math.log(0.5))
    _close(D.Laplace(0.0, 1.0).cdf(_t(0.0)), 0.5)
    _close(D.Cauchy(0.0, 1.0).cdf(_t(1.0)), 0.75)
    _close(D.Dirichlet(_t([1.0, 1.0, 1.0])).log_prob(_t([0.2, 0.3, 0.5])), math.log(2.0))
    mvn = D.MultivariateNormal(_t([0.0, 0.0]), _t([[1.0, 0.0], [0.0, 4.0]]))
    _close(mvn.log_prob(_t([0.0, 0.0])), -math.log(2 * math.pi) - math.log(2.0))
    _close(D.Binomial(3, _t(0.5)).enumerate_support(), [0.0, 1.0, 2.0, 3.0])


def test_validation_errors():
    with pytest.raises(
        ValueError, match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of distribution Normal"
    ):
        D.Normal(_t([0.0, 0.0]), _t([1.0, -1.0]))
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan\\(lower_bound=0.0\\)"):
        D.Gamma(_t([1.0]), _t([0.0]))
    with pytest.raises(ValueError, match=r"to be within the support \(Boolean\(\)\)"):
        D.Bernoulli(_t([0.5])).log_prob(_t([0.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Categorical()
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.Dirichlet(_t([1.0, 1.0])).log_prob(_t([1.0]))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape\\+event_shape"):
        D.Normal(_t([0.0, 0.0]), 1.0).log_prob(_t([0.0, 0.0, 0.0]))
    with pytest.raises(
        ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"
    ):
        D.MultivariateNormal(_t([0.0]))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(_t(3), _t([0.5, 0.5]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_validation_can_be_switched_off():
    d = D.Normal(_t([0.0]), _t([-1.0]), validate_args=False)  # accepted unchecked
    assert math.isnan(d.log_prob(_t([0.0])).item())
    D.Distribution.set_default_validate_args(False)
    try:
        D.Bernoulli(_t([2.0]))
        D.Bernoulli(_t([0.5])).log_prob(_t([0.5]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Bernoulli(_t([2.0]))


RSAMPLE = {
    "normal": lambda p: D.Normal(p, 1.0),
    "laplace": lambda p: D.Laplace(p, 1.0),
    "cauchy": lambda p: D.Cauchy(p, 1.0),
    "exponential": lambda p: D.Exponential(p.exp()),
    "uniform": lambda p: D.Uniform(p, p + 1),
    "gamma": lambda p: D.Gamma(p.exp(), 1.0),
    "beta": lambda p: D.Beta(p.exp(), 2.0),
    "dirichlet": lambda p: D.Dirichlet(p.exp().unsqueeze(0).expand(3, 2)),
    "studentt": lambda p: D.StudentT(p.exp() + 2, p),
    "lognormal": lambda p: D.LogNormal(p, 1.0),
    "mvn": lambda p: D.MultivariateNormal(p, ember.eye(2)),
    "transformed": lambda p: D.TransformedDistribution(D.Normal(p, 1.0), [D.SigmoidTransform()]),
    "relaxed": lambda p: D.RelaxedBernoulli(_t(0.3), logits=p),
    "relaxed_onehot": lambda p: D.RelaxedOneHotCategorical(_t(0.3), logits=p),
    "halfnormal": lambda p: D.HalfNormal(p.exp()),
    "gumbel": lambda p: D.Gumbel(p, 1.0),
    "weibull": lambda p: D.Weibull(p.exp(), 2.0),
    "inverse_gamma": lambda p: D.InverseGamma(p.exp() + 1, 1.0),
    "kumaraswamy": lambda p: D.Kumaraswamy(p.exp(), 2.0),
    "continuous_bernoulli": lambda p: D.ContinuousBernoulli(logits=p),
    "fisher_snedecor": lambda p: D.FisherSnedecor(p.exp() + 2, 5.0),
    "logistic_normal": lambda p: D.LogisticNormal(p, 1.0),
    "lowrank_mvn": lambda p: D.LowRankMultivariateNormal(p, ember.ones(2, 1), ember.ones(2)),
}


@pytest.mark.parametrize("name", sorted(RSAMPLE))
def test_rsample_and_log_prob_carry_gradients(name):
    p = _t([0.3, -0.2], requires_grad=True)
    d = RSAMPLE[name](p)
    assert d.has_rsample
    x = d.rsample((8,))
    (g,) = ember.autograd.grad(x.sum(), [p], retain_graph=True)
    assert bool(ember.isfinite(g).all()) and bool((g != 0).any())
    (g2,) = ember.autograd.grad(d.log_prob(x.detach()).sum(), [p])
    assert bool(ember.isfinite(g2).all())


def test_no_rsample_for_discrete():
    with pytest.raises(NotImplementedError):
        D.Bernoulli(_t([0.5])).rsample()
    assert not D.Categorical(_t([0.5, 0.5])).has_rsample


def test_gamma_reparameterisation_at_large_and_small_shape():
    """d x / d alpha of Gamma(alpha, 1): mean 1 over draws (E x = alpha), finite at alpha = 0.05."""
    alpha = _t([0.05, 500.0], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    x = D.Gamma(alpha, 1.0).rsample((4000,))
    (g,) = ember.autograd.grad(x.mean(0).sum(), [alpha])
    assert bool(ember.isfinite(g).all())
    assert abs(g[1].item() - 1.0) < 0.05  # spread of dx/dalpha at alpha = 500 is about 0.02 / sqrt(4000)
    assert abs(g[0].item() - 1.0) < 0.3  # heavy spread at small alpha; 5 standard errors


def test_transforms_invert_and_cache():
    x = _t([-1.0, 0.0, 0.5])
    for t in (
        D.ExpTransform(),
        D.SigmoidTransform(),
        D.TanhTransform(),
        D.AffineTransform(1.0, -2.0),
        D.ComposeTransform([D.AffineTransform(0.5, 3.0), D.ExpTransform()]),
    ):
        y = t(x)
        _close(t.inv(y), x, tol=1e-5)
        _close(t.inv.log_abs_det_jacobian(y, x), -t.log_abs_det_jacobian(x, y))
    _close(D.AffineTransform(1.0, -2.0).log_abs_det_jacobian(x, x), [math.log(2.0)] * 3)
    _close(D.ExpTransform().log_abs_det_jacobian(x, x.exp()), x)
    cached = D.ExpTransform(cache_size=1)
    y = cached(x)
    assert cached.inv(y) is x
    assert D.ComposeTransform([D.AffineTransform(0.0, -1.0), D.ExpTransform()]).sign == -1
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform().inv == D.ExpTransform().inv
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


def test_transformed_distribution_change_of_variables():
    d = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.AffineTransform(1.0, 2.0)])
    _close(d.log_prob(_t(3.0)), D.Normal(1.0, 2.0).log_prob(_t(3.0)))
    _close(d.cdf(_t(2.0)), D.Normal(1.0, 2.0).cdf(_t(2.0)))
    flipped = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.AffineTransform(0.0, -1.0)])
    _close(flipped.cdf(_t(1.0)), D.Normal(0.0, 1.0).cdf(_t(1.0)))  # symmetric: 1 - F(-x) = F(x)
    lognormal = D.LogNormal(0.0, 1.0)
    _close(lognormal.log_prob(_t(1.0)), -0.5 * math.log(2 * math.pi))
    assert lognormal.support is constraints.positive


def test_constraints_check_and_repr():
    assert constraints.simplex.check(_t([[0.5, 0.5], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.integer_interval(0, 3).check(_t([0.0, 3.0, 3.5, 4.0])).tolist() == [
        True,
        True,
        False,
        False,
    ]
    assert constraints.real.check(_t([0.0, math.nan])).tolist() == [True, False]
    assert constraints.lower_cholesky.check(_t([[1.0, 0.0], [2.0, 1.0]])).item()
    assert not constraints.positive_definite.check(_t([[1.0, 2.0], [2.0, 1.0]])).item()
    assert repr(constraints.independent(constraints.real, 1)) == "IndependentConstraint(Real(), 1)"
    assert repr(constraints.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"
    assert constraints.is_dependent(D.Uniform.support)
    assert not constraints.is_dependent(D.Uniform(0.0, 1.0).support)
    assert sum_rightmost(ember.ones(2, 3, 4), 2).tolist() == [12.0, 12.0]


def test_kl_divergence_dispatch_and_registration():
    _close(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)), 0.0)
    _close(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0)), 0.5)
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)).item() == math.inf
    _close(D.kl_divergence(D.Chi2(_t(2.0)), D.Exponential(_t(0.5))), 0.0)  # Chi2(2) is Exponential(1/2)
    with pytest.raises(
        NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Cauchy"
    ):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Cauchy(0.0, 1.0))

    class Shifted(D.Normal):
        pass

    @D.register_kl(Shifted, D.Normal)
    def _kl(p, q):
        return ember.zeros(())

    assert D.kl_divergence(Shifted(0.0, 1.0), D.Normal(5.0, 1.0)).item() == 0.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), Shifted(1.0, 1.0)).item() == pytest.approx(0.5)
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_expand_keeps_parameters_and_validation():
    d = D.Gamma(_t([1.0, 2.0]), 1.0)
    e = d.expand((3, 2))
    assert tuple(e.concentration.shape) == (3, 2)
    assert e._validate_args == d._validate_args
    c = D.Categorical(logits=_t([0.0, 1.0])).expand((4,))
    assert tuple(c.logits.shape) == (4, 2) and tuple(c.sample().shape) == (4,)
    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):

        class Custom(D.Normal):
            def __init__(self):
                super().__init__(0.0, 1.0)

        Custom().expand((2,))


def test_tanh_squashed_policy_uses_the_cache():
    """SAC's pattern: log_prob of an action rsample just produced reads the cached pre-image,
    so a saturated action (tanh rounds to 1 in float32) keeps a finite log-density."""
    mu = _t([0.0, 12.0], requires_grad=True)
    d = D.TransformedDistribution(D.Normal(mu, 1.0), [D.TanhTransform(cache_size=1)])
    ember.manual_seed(0)
    a = d.rsample()
    assert a[1].item() == 1.0
    logp = d.log_prob(a)
    assert bool(ember.isfinite(logp).all())
    (g,) = ember.autograd.grad(logp.sum(), [mu])
    assert bool(ember.isfinite(g).all())
    uncached = D.TransformedDistribution(D.Normal(mu, 1.0), [D.TanhTransform()])
    assert math.isnan(uncached.log_prob(a.detach())[1].item())  # atanh(1) = inf: PyTorch gives nan too


def test_constraint_registries():
    x = _t([[-2.0, 0.0, 3.0]])
    for c in (constraints.positive, constraints.interval(-1.0, 2.0), constraints.simplex, constraints.real):
        y = D.biject_to(c)(x)
        assert bool(c.check(y).all())
        _close(D.biject_to(c).inv(y), x, tol=1e-4)
    assert isinstance(D.transform_to(constraints.simplex), D.SoftmaxTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(constraints.boolean)

    class Odd(constraints.Constraint):
        pass

    D.transform_to.register(Odd, lambda c: D.ExpTransform())
    assert isinstance(D.transform_to(Odd()), D.ExpTransform)
    with pytest.raises(TypeError):
        D.transform_to.register(int, lambda c: D.ExpTransform())
