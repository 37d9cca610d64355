"""The distributions the differential tests build in both libraries, from the same numbers.

Each case is ``(id, build)``; ``build(D, T)`` makes the distribution from a distributions
module ``D`` (``torch.distributions`` or ``ember.distributions``) and a float64 tensor maker ``T``.
"""

from __future__ import annotations

from typing import Any

import ember
import ember.distributions as ED
import numpy as np
import torch

# Helpers both differential test files use: float64 tensors of either library, values as
# NumPy, equality to float64 rounding, a case built in both, an attribute or its exception.
TD = torch.distributions


def _tt(v):
    return torch.tensor(v, dtype=torch.float64)


def _et(v):
    return ember.tensor(v, dtype=ember.float64)


def _np(t):
    return np.asarray(t.detach().tolist() if hasattr(t, "detach") else t, dtype=np.float64)


def _same(e, t, rtol=1e-9, atol=1e-10):
    got, want = _np(e), _np(t)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _pair(build):
    return build(ED, _et), build(TD, _tt)


def _call(obj, name, *args):
    """An attribute or method's value, or the exception type it raised."""
    try:
        attr = getattr(obj, name)
        return attr(*args) if callable(attr) else attr
    except NotImplementedError:
        return NotImplementedError


def _transformed(D: Any, T: Any) -> Any:
    base = D.Normal(T([0.0, 0.5]), T([1.0, 0.7]))
    return D.TransformedDistribution(base, [D.AffineTransform(T(1.0), T(-2.0)), D.TanhTransform()])


def _sigmoid_exp(D: Any, T: Any) -> Any:
    base = D.Laplace(T([0.0, -1.0]), T([0.5, 1.0]))
    return D.TransformedDistribution(
        base, D.ComposeTransform([D.ExpTransform(), D.AffineTransform(T(2.0), T(3.0))])
    )


def _sigmoid(D: Any, T: Any) -> Any:
    return D.TransformedDistribution(D.Normal(T([0.3, -1.0]), T([1.0, 2.0])), [D.SigmoidTransform()])


CASES: list[tuple[str, Any]] = [
    ("normal", lambda D, T: D.Normal(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0]))),
    ("uniform", lambda D, T: D.Uniform(T([0.0, -1.0]), T([1.0, 3.0]))),
    ("exponential", lambda D, T: D.Exponential(T([0.5, 2.0]))),
    ("laplace", lambda D, T: D.Laplace(T([0.0, 1.0]), T([1.0, 2.0]))),
    ("cauchy", lambda D, T: D.Cauchy(T([0.0, 1.0]), T([1.0, 0.5]))),
    ("gamma", lambda D, T: D.Gamma(T([0.5, 2.0, 7.0]), T([1.0, 0.5, 3.0]))),
    ("chi2", lambda D, T: D.Chi2(T([1.0, 4.5]))),
    ("beta", lambda D, T: D.Beta(T([0.5, 2.0, 5.0]), T([0.7, 3.0, 1.0]))),
    ("dirichlet", lambda D, T: D.Dirichlet(T([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]]))),
    ("studentt", lambda D, T: D.StudentT(T([1.5, 3.0, 10.0]), T([0.0, 1.0, -1.0]), T([1.0, 2.0, 0.5]))),
    ("lognormal", lambda D, T: D.LogNormal(T([0.0, 0.5]), T([0.5, 1.0]))),
    ("bernoulli_probs", lambda D, T: D.Bernoulli(probs=T([0.1, 0.5, 0.9]))),
    ("bernoulli_logits", lambda D, T: D.Bernoulli(logits=T([-1.0, 0.0, 2.0]))),
    ("categorical", lambda D, T: D.Categorical(probs=T([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]))),
    ("categorical_logits", lambda D, T: D.Categorical(logits=T([[1.0, -2.0, 0.5, 0.0]]))),
    ("onehot", lambda D, T: D.OneHotCategorical(probs=T([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))),
    ("poisson", lambda D, T: D.Poisson(T([0.5, 4.0, 30.0]))),
    ("binomial", lambda D, T: D.Binomial(T([5.0, 20.0, 60.0]), probs=T([0.3, 0.8, 0.5]))),
    ("binomial_logits", lambda D, T: D.Binomial(10, logits=T([-1.0, 0.5]))),
    ("multinomial", lambda D, T: D.Multinomial(6, probs=T([0.2, 0.3, 0.5]))),
    (
        "mvn_cov",
        lambda D, T: D.MultivariateNormal(T([0.0, 1.0]), covariance_matrix=T([[2.0, 0.5], [0.5, 1.0]])),
    ),
    (
        "mvn_tril_batched",
        lambda D, T: D.MultivariateNormal(
            T([[0.0, 1.0, 2.0], [1.0, -1.0, 0.0]]),
            scale_tril=T([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.1, 0.7]]),
        ),
    ),
    (
        "mvn_precision",
        lambda D, T: D.MultivariateNormal(T([0.5, -0.5]), precision_matrix=T([[1.5, -0.4], [-0.4, 0.8]])),
    ),
    ("independent", lambda D, T: D.Independent(D.Normal(T([[0.0, 1.0], [2.0, 3.0]]), T([1.0, 2.0])), 1)),
    ("transformed_tanh", _transformed),
    ("transformed_exp_affine", _sigmoid_exp),
    ("transformed_sigmoid", _sigmoid),
    ("relaxed_bernoulli", lambda D, T: D.RelaxedBernoulli(T(0.5), probs=T([0.3, 0.8]))),
    ("halfnormal", lambda D, T: D.HalfNormal(T([0.5, 2.0]))),
    ("halfcauchy", lambda D, T: D.HalfCauchy(T([0.5, 2.0]))),
    ("gumbel", lambda D, T: D.Gumbel(T([0.0, 1.0]), T([1.0, 0.5]))),
    ("geometric", lambda D, T: D.Geometric(T([0.2, 0.7]))),
    ("geometric_logits", lambda D, T: D.Geometric(logits=T([-1.0, 0.5]))),
    (
        "relaxed_onehot",
        lambda D, T: D.RelaxedOneHotCategorical(T(0.7), probs=T([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
    ),
    (
        "mixture",
        lambda D, T: D.MixtureSameFamily(
            D.Categorical(T([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
            D.Normal(T([[-2.0, 0.0, 3.0], [1.0, 1.5, -1.0]]), T([1.0, 0.5, 2.0])),
        ),
    ),
    ("negative_binomial", lambda D, T: D.NegativeBinomial(T([3.0, 10.0, 0.5]), probs=T([0.4, 0.8, 0.2]))),
    ("negative_binomial_logits", lambda D, T: D.NegativeBinomial(T([2.0]), logits=T([0.3]))),
    ("pareto", lambda D, T: D.Pareto(T([1.0, 2.0, 0.5]), T([3.0, 1.5, 2.5]))),
    ("weibull", lambda D, T: D.Weibull(T([1.0, 2.0]), T([0.5, 3.0]))),
    ("inverse_gamma", lambda D, T: D.InverseGamma(T([3.0, 1.5, 4.0]), T([2.0, 1.0, 0.5]))),
    ("fisher_snedecor", lambda D, T: D.FisherSnedecor(T([3.0, 10.0, 1.5]), T([5.0, 12.0, 9.0]))),
    ("kumaraswamy", lambda D, T: D.Kumaraswamy(T([0.5, 2.0, 5.0]), T([0.7, 3.0, 1.5]))),
    ("logistic_normal", lambda D, T: D.LogisticNormal(T([[0.0, 1.0], [-1.0, 0.5]]), T([1.0, 0.5]))),
    (
        "lowrank_mvn",
        lambda D, T: D.LowRankMultivariateNormal(
            T([[0.0, 1.0, 2.0], [1.0, -1.0, 0.0]]),
            T([[1.0, 0.5], [0.3, -0.2], [0.0, 2.0]]),
            T([0.5, 1.0, 2.0]),
        ),
    ),
    ("continuous_bernoulli", lambda D, T: D.ContinuousBernoulli(T([0.1, 0.4995, 0.8, 0.5]))),
    ("continuous_bernoulli_logits", lambda D, T: D.ContinuousBernoulli(logits=T([-2.0, 0.0, 1.5]))),
    ("von_mises", lambda D, T: D.VonMises(T([0.0, 1.0, -2.0, 0.5]), T([0.5, 2.0, 10.0, 1e-6]))),
    (
        "mixture_mvn",
        lambda D, T: D.MixtureSameFamily(
            D.Categorical(T([0.3, 0.7])),
            D.Independent(D.Normal(T([[0.0, 1.0], [2.0, -1.0]]), T([1.0, 0.5])), 1),
        ),
    ),
]

# (id, p, q): the registered KL pairs checked against PyTorch's values.
KL_PAIRS: list[tuple[str, Any, Any]] = [
    (
        "normal",
        lambda D, T: D.Normal(T([0.0, 1.0]), T([1.0, 2.0])),
        lambda D, T: D.Normal(T([0.5, -1.0]), T([2.0, 0.5])),
    ),
    ("bernoulli", lambda D, T: D.Bernoulli(T([0.2, 0.0, 1.0])), lambda D, T: D.Bernoulli(T([0.6, 0.5, 0.3]))),
    (
        "beta",
        lambda D, T: D.Beta(T([0.5, 2.0]), T([1.5, 3.0])),
        lambda D, T: D.Beta(T([1.0, 4.0]), T([2.0, 0.5])),
    ),
    ("binomial", lambda D, T: D.Binomial(10, T([0.2, 0.7])), lambda D, T: D.Binomial(10, T([0.5, 0.4]))),
    (
        "categorical",
        lambda D, T: D.Categorical(T([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])),
        lambda D, T: D.Categorical(T([[0.4, 0.4, 0.2], [0.1, 0.1, 0.8]])),
    ),
    ("dirichlet", lambda D, T: D.Dirichlet(T([1.0, 2.0, 3.0])), lambda D, T: D.Dirichlet(T([0.5, 0.5, 4.0]))),
    ("exponential", lambda D, T: D.Exponential(T([1.0, 3.0])), lambda D, T: D.Exponential(T([2.0, 0.5]))),
    (
        "gamma",
        lambda D, T: D.Gamma(T([1.0, 3.0]), T([2.0, 1.0])),
        lambda D, T: D.Gamma(T([2.0, 0.5]), T([1.0, 4.0])),
    ),
    (
        "laplace",
        lambda D, T: D.Laplace(T([0.0, 1.0]), T([1.0, 2.0])),
        lambda D, T: D.Laplace(T([1.0, 0.0]), T([0.5, 1.0])),
    ),
    (
        "mvn",
        lambda D, T: D.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.5], [0.5, 1.0]])),
        lambda D, T: D.MultivariateNormal(
            T([[1.0, 0.0], [0.0, 0.0]]), scale_tril=T([[1.0, 0.0], [0.3, 0.5]])
        ),
    ),
    (
        "onehot",
        lambda D, T: D.OneHotCategorical(T([0.2, 0.3, 0.5])),
        lambda D, T: D.OneHotCategorical(T([0.1, 0.6, 0.3])),
    ),
    ("poisson", lambda D, T: D.Poisson(T([1.0, 5.0])), lambda D, T: D.Poisson(T([2.0, 4.0]))),
    (
        "uniform",
        lambda D, T: D.Uniform(T([0.0, 0.0]), T([1.0, 2.0])),
        lambda D, T: D.Uniform(T([-1.0, 0.5]), T([2.0, 3.0])),
    ),
    (
        "cauchy",
        lambda D, T: D.Cauchy(T([0.0, 1.0]), T([1.0, 2.0])),
        lambda D, T: D.Cauchy(T([1.0, -1.0]), T([0.5, 1.0])),
    ),
    (
        "independent",
        lambda D, T: D.Independent(D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), 1),
        lambda D, T: D.Independent(D.Normal(T([1.0, 1.0]), T([1.0, 1.0])), 1),
    ),
    (
        "lognormal",
        lambda D, T: D.LogNormal(T([0.0, 1.0]), T([1.0, 2.0])),
        lambda D, T: D.LogNormal(T([0.5, -1.0]), T([2.0, 0.5])),
    ),
    ("chi2_gamma", lambda D, T: D.Chi2(T([3.0])), lambda D, T: D.Gamma(T([2.0]), T([1.0]))),
    ("bernoulli_poisson", lambda D, T: D.Bernoulli(T([0.3])), lambda D, T: D.Poisson(T([0.5]))),
    ("beta_exponential", lambda D, T: D.Beta(T([2.0]), T([3.0])), lambda D, T: D.Exponential(T([1.5]))),
    ("beta_gamma", lambda D, T: D.Beta(T([2.0]), T([3.0])), lambda D, T: D.Gamma(T([2.0]), T([1.5]))),
    ("beta_normal", lambda D, T: D.Beta(T([2.0]), T([3.0])), lambda D, T: D.Normal(T([0.5]), T([2.0]))),
    (
        "beta_uniform",
        lambda D, T: D.Beta(T([2.0, 1.0]), T([3.0, 1.0])),
        lambda D, T: D.Uniform(T([-0.5, 0.2]), T([1.0, 1.0])),
    ),
    ("exponential_gamma", lambda D, T: D.Exponential(T([1.5])), lambda D, T: D.Gamma(T([2.0]), T([0.5]))),
    ("exponential_normal", lambda D, T: D.Exponential(T([1.5])), lambda D, T: D.Normal(T([1.0]), T([2.0]))),
    ("exponential_uniform", lambda D, T: D.Exponential(T([1.5])), lambda D, T: D.Uniform(T([0.0]), T([2.0]))),
    ("gamma_exponential", lambda D, T: D.Gamma(T([2.0]), T([3.0])), lambda D, T: D.Exponential(T([1.5]))),
    ("gamma_normal", lambda D, T: D.Gamma(T([2.0]), T([3.0])), lambda D, T: D.Normal(T([1.0]), T([0.5]))),
    ("laplace_normal", lambda D, T: D.Laplace(T([0.5]), T([2.0])), lambda D, T: D.Normal(T([1.0]), T([0.5]))),
    ("laplace_gamma", lambda D, T: D.Laplace(T([0.5]), T([2.0])), lambda D, T: D.Gamma(T([1.0]), T([0.5]))),
    (
        "normal_laplace",
        lambda D, T: D.Normal(T([0.5, -1.0]), T([2.0, 1.0])),
        lambda D, T: D.Laplace(T([1.0, 0.0]), T([0.5, 3.0])),
    ),
    ("normal_uniform", lambda D, T: D.Normal(T([0.5]), T([2.0])), lambda D, T: D.Uniform(T([0.0]), T([1.0]))),
    ("poisson_binomial", lambda D, T: D.Poisson(T([0.5])), lambda D, T: D.Binomial(4, T([0.5]))),
    (
        "uniform_beta",
        lambda D, T: D.Uniform(T([0.2, -0.1]), T([0.7, 0.5])),
        lambda D, T: D.Beta(T([2.0, 2.0]), T([3.0, 3.0])),
    ),
    (
        "uniform_exponential",
        lambda D, T: D.Uniform(T([0.2, -0.1]), T([0.7, 0.5])),
        lambda D, T: D.Exponential(T([2.0, 2.0])),
    ),
    (
        "uniform_gamma",
        lambda D, T: D.Uniform(T([0.2, -0.1]), T([0.7, 0.5])),
        lambda D, T: D.Gamma(T([2.0, 2.0]), T([3.0, 3.0])),
    ),
    (
        "uniform_normal",
        lambda D, T: D.Uniform(T([0.2, -0.1]), T([0.7, 0.5])),
        lambda D, T: D.Normal(T([0.0, 1.0]), T([3.0, 0.5])),
    ),
    ("geometric", lambda D, T: D.Geometric(T([0.2, 0.7])), lambda D, T: D.Geometric(T([0.5, 0.1]))),
    (
        "gumbel",
        lambda D, T: D.Gumbel(T([0.0, 1.0]), T([1.0, 2.0])),
        lambda D, T: D.Gumbel(T([1.0, 0.0]), T([0.5, 1.0])),
    ),
    ("halfnormal", lambda D, T: D.HalfNormal(T([1.0, 2.0])), lambda D, T: D.HalfNormal(T([0.5, 3.0]))),
    ("exponential_gumbel", lambda D, T: D.Exponential(T([1.5])), lambda D, T: D.Gumbel(T([0.5]), T([2.0]))),
    ("gamma_gumbel", lambda D, T: D.Gamma(T([2.0]), T([1.5])), lambda D, T: D.Gumbel(T([0.5]), T([2.0]))),
    ("gumbel_normal", lambda D, T: D.Gumbel(T([0.5]), T([2.0])), lambda D, T: D.Normal(T([1.0]), T([1.5]))),
    ("normal_gumbel", lambda D, T: D.Normal(T([1.0]), T([1.5])), lambda D, T: D.Gumbel(T([0.5]), T([2.0]))),
    ("uniform_gumbel", lambda D, T: D.Uniform(T([0.0]), T([2.0])), lambda D, T: D.Gumbel(T([0.5]), T([2.0]))),
    ("gumbel_uniform", lambda D, T: D.Gumbel(T([0.5]), T([2.0])), lambda D, T: D.Uniform(T([0.0]), T([2.0]))),
    (
        "pareto",
        lambda D, T: D.Pareto(T([1.0, 2.0]), T([3.0, 1.5])),
        lambda D, T: D.Pareto(T([0.5, 3.0]), T([2.0, 1.0])),
    ),
    (
        "pareto_exponential",
        lambda D, T: D.Pareto(T([1.0, 2.0]), T([3.0, 0.5])),
        lambda D, T: D.Exponential(T([2.0, 1.0])),
    ),
    (
        "pareto_gamma",
        lambda D, T: D.Pareto(T([1.0, 2.0]), T([3.0, 0.5])),
        lambda D, T: D.Gamma(T([2.0, 1.0]), T([1.0, 2.0])),
    ),
    (
        "pareto_normal",
        lambda D, T: D.Pareto(T([1.0, 2.0]), T([3.0, 1.5])),
        lambda D, T: D.Normal(T([2.0, 1.0]), T([1.0, 2.0])),
    ),
    (
        "uniform_pareto",
        lambda D, T: D.Uniform(T([1.5, 0.5]), T([3.0, 2.0])),
        lambda D, T: D.Pareto(T([1.0, 1.0]), T([2.0, 2.0])),
    ),
    ("normal_pareto", lambda D, T: D.Normal(T([1.5]), T([3.0])), lambda D, T: D.Pareto(T([1.0]), T([2.0]))),
    ("pareto_uniform", lambda D, T: D.Pareto(T([1.5]), T([3.0])), lambda D, T: D.Uniform(T([1.0]), T([2.0]))),
    (
        "inverse_gamma",
        lambda D, T: D.InverseGamma(T([3.0]), T([2.0])),
        lambda D, T: D.InverseGamma(T([1.0]), T([0.5])),
    ),
    ("weibull", lambda D, T: D.Weibull(T([1.0]), T([2.0])), lambda D, T: D.Weibull(T([1.0]), T([2.0]))),
    (
        "lowrank_lowrank",
        lambda D, T: D.LowRankMultivariateNormal(T([0.0, 1.0]), T([[1.0], [0.5]]), T([0.5, 1.0])),
        lambda D, T: D.LowRankMultivariateNormal(
            T([[1.0, 0.0], [0.0, 0.0]]), T([[0.3, 0.2], [-0.1, 1.0]]), T([1.0, 2.0])
        ),
    ),
    (
        "mvn_lowrank",
        lambda D, T: D.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.5], [0.5, 1.0]])),
        lambda D, T: D.LowRankMultivariateNormal(T([1.0, 0.0]), T([[0.3], [-0.1]]), T([1.0, 2.0])),
    ),
    (
        "lowrank_mvn",
        lambda D, T: D.LowRankMultivariateNormal(
            T([[1.0, 0.0], [0.5, 0.5]]), T([[0.3], [-0.1]]), T([1.0, 2.0])
        ),
        lambda D, T: D.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.5], [0.5, 1.0]])),
    ),
    (
        "cb",
        lambda D, T: D.ContinuousBernoulli(T([0.2, 0.7])),
        lambda D, T: D.ContinuousBernoulli(T([0.6, 0.4999])),
    ),
    ("beta_cb", lambda D, T: D.Beta(T([2.0]), T([3.0])), lambda D, T: D.ContinuousBernoulli(T([0.3]))),
    (
        "uniform_cb",
        lambda D, T: D.Uniform(T([0.2, -0.1]), T([0.7, 0.5])),
        lambda D, T: D.ContinuousBernoulli(T([0.3, 0.3])),
    ),
    ("cb_exponential", lambda D, T: D.ContinuousBernoulli(T([0.3])), lambda D, T: D.Exponential(T([2.0]))),
    ("cb_normal", lambda D, T: D.ContinuousBernoulli(T([0.3])), lambda D, T: D.Normal(T([0.5]), T([2.0]))),
    (
        "cb_uniform",
        lambda D, T: D.ContinuousBernoulli(T([0.3, 0.3])),
        lambda D, T: D.Uniform(T([-0.5, 0.0]), T([2.0, 1.0])),
    ),
    ("normal_cb", lambda D, T: D.Normal(T([0.5]), T([2.0])), lambda D, T: D.ContinuousBernoulli(T([0.3]))),
    (
        "transformed",
        lambda D, T: D.TransformedDistribution(D.Normal(T([0.0]), T([1.0])), [D.ExpTransform()]),
        lambda D, T: D.TransformedDistribution(D.Normal(T([1.0]), T([2.0])), [D.ExpTransform()]),
    ),
]
