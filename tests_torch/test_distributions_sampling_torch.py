"""ember.distributions against torch.distributions: draws and reparameterised gradients.

Draws come from different generators, so they are compared by statistics at a fixed seed:
sample means within 5 standard errors of PyTorch's mean (a 5-sigma band fails by chance
with probability below 1e-6 per check); for continuous laws a Kolmogorov-Smirnov test
against PyTorch's CDF, for counts a chi-square test against its pmf, both at p > 1e-4.
"""

from __future__ import annotations

import math

import ember
import ember.distributions as ED
import numpy as np
import pytest
from _distribution_cases import CASES, _call, _et, _np, _pair

torch = pytest.importorskip("torch")
TD = torch.distributions
scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize(("case", "build"), CASES, ids=[c[0] for c in CASES])
def test_sample_shapes_and_means(case, build):
    e, t = _pair(build)
    n = 10000
    s = e.sample((n,))
    assert tuple(s.shape) == (n, *t.batch_shape, *t.event_shape)
    assert s.dtype == ember.float64 or case.startswith("categorical")
    assert bool(t.support.check(torch.tensor(_np(s))).all())
    if case == "von_mises":
        return  # a circular mean, not the mean of the wrapped draws: the KS test below covers them
    if _call(t, "mean") is NotImplementedError:
        assert _call(e, "mean") is NotImplementedError
        return  # a transformed law has no closed-form mean: the KS test below covers its draws
    mean, var = _np(t.mean), _np(t.variance)
    if not np.all(np.isfinite(var)):
        return  # Cauchy, StudentT(df <= 2): no finite moments to compare; KS below covers them
    x = _np(s)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * np.sqrt(var / n) + 1e-12)
    if case in HEAVY_TAILS:
        return
    # The sample variance's standard error is sqrt((m4 - var**2) / n), m4 the 4th central moment.
    centred = x - x.mean(0)
    m4 = (centred**4).mean(0)
    se = np.sqrt(np.maximum(m4 - var**2, 0) / n)
    np.testing.assert_array_less(np.abs(centred.var(0) - var), 6 * se + 1e-9)
    if case.startswith("mvn"):  # off-diagonal covariances too
        cov = np.einsum("ni,nj->ij", centred.reshape(n, -1)[:, :2], centred.reshape(n, -1)[:, :2]) / n
        want = _np(t.covariance_matrix).reshape(-1, 2, 2)[0] if t.event_shape[0] == 2 else None
        if want is not None:
            se = np.sqrt((np.outer(np.diag(want), np.diag(want)) + want**2) / n)
            np.testing.assert_array_less(np.abs(cov - want), 6 * se)


# No finite fourth moment (or one too large to estimate from 10000 draws): variance not compared.
HEAVY_TAILS = {
    "von_mises",
    "studentt",
    "pareto",
    "inverse_gamma",
    "lognormal",
    "negative_binomial",
    "fisher_snedecor",
}


CONTINUOUS = [
    c
    for c in CASES
    if c[0]
    in {
        "normal",
        "uniform",
        "exponential",
        "laplace",
        "cauchy",
        "gamma",
        "chi2",
        "beta",
        "studentt",
        "lognormal",
        "transformed_tanh",
        "transformed_exp_affine",
        "transformed_sigmoid",
        "relaxed_bernoulli",
        "halfnormal",
        "halfcauchy",
        "gumbel",
        "mixture",
        "pareto",
        "weibull",
        "inverse_gamma",
        "kumaraswamy",
        "fisher_snedecor",
        "continuous_bernoulli",
        "von_mises",
    }
]


@pytest.mark.parametrize(("case", "build"), CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_samples_follow_the_cdf(case, build):
    """Each batch element's 4000 draws against PyTorch's CDF (KS, p > 1e-4 at this seed)."""
    e, t = _pair(build)
    for d in (t, getattr(t, "base_dist", t)):
        d._validate_args = False  # each column's CDF is evaluated at the other columns' draws too
    s = _np(e.sample((4000,)))
    for j in range(s.shape[1]):
        col = s[:, j]

        def cdf(x, j=j):
            v = torch.tensor(np.asarray(x, dtype=np.float64)).unsqueeze(-1).expand(-1, s.shape[1])
            return (
                t.cdf(v)[:, j].numpy()
                if case
                not in {"chi2", "beta", "studentt", "relaxed_bernoulli", "fisher_snedecor", "von_mises"}
                else _scipy_cdf(case, t, j, x)
            )

        assert scipy_stats.kstest(col, cdf).pvalue > 1e-4, (case, j)


def _scipy_cdf(case, t, j, x):
    """PyTorch has no cdf for these: scipy's, on PyTorch's parameters."""
    if case == "chi2":
        return scipy_stats.chi2.cdf(x, float(t.df[j]))
    if case == "relaxed_bernoulli":  # sigmoid of a logistic(logit(p) / T, 1 / T) variable
        x = np.clip(np.asarray(x), 1e-300, 1 - 1e-16)
        z = (np.log(x) - np.log1p(-x)) * float(t.temperature) - float(t.logits[j])
        return 1 / (1 + np.exp(-z))
    if case == "von_mises":  # draws lie in [-pi, pi); scipy's CDF (cumulative past one period) from -pi
        k, loc = float(t.concentration[j]), float(t.loc[j])
        return scipy_stats.vonmises.cdf(x, k, loc=loc) - scipy_stats.vonmises.cdf(-np.pi, k, loc=loc)
    if case == "fisher_snedecor":
        return scipy_stats.f.cdf(x, float(t.df1[j]), float(t.df2[j]))
    if case == "beta":
        return scipy_stats.beta.cdf(x, float(t.concentration1[j]), float(t.concentration0[j]))
    return scipy_stats.t.cdf(x, float(t.df[j]), float(t.loc[j]), float(t.scale[j]))


@pytest.mark.parametrize(
    ("case", "build"),
    [
        c
        for c in CASES
        if c[0]
        in {"poisson", "binomial", "binomial_logits", "geometric", "geometric_logits", "negative_binomial"}
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_count_draws_match_the_pmf(case, build):
    """Chi-square goodness of fit of 10000 draws per element against PyTorch's pmf (p > 1e-4)."""
    e, t = _pair(build)
    s = _np(e.sample((10000,)))
    for j in range(s.shape[1]):
        k = np.arange(0, int(s[:, j].max()) + 1)
        kt = torch.tensor(k, dtype=torch.float64).unsqueeze(-1).expand(-1, s.shape[1])
        t._validate_args = False  # k beyond another column's total_count is only read for its own column
        pmf = t.log_prob(kt)[:, j].exp().numpy()
        observed = np.bincount(s[:, j].astype(int), minlength=len(k))
        expected = pmf * len(s)
        keep = expected >= 5
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], len(s) - expected[keep].sum())
        if exp[-1] < 5:
            obs, exp = obs[:-1], exp[:-1] * obs[:-1].sum() / exp[:-1].sum()
        assert scipy_stats.chisquare(obs, exp).pvalue > 1e-4, (case, j)


REPARAM = [
    ("normal", lambda D, p: D.Normal(p[0], p[1]), [[0.5, -1.0], [1.0, 2.0]]),
    ("laplace", lambda D, p: D.Laplace(p[0], p[1]), [[0.5, -1.0], [1.0, 2.0]]),
    ("uniform", lambda D, p: D.Uniform(p[0], p[1]), [[0.0, -1.0], [1.0, 3.0]]),
    ("exponential", lambda D, p: D.Exponential(p[0]), [[0.5, 2.0]]),
    ("gamma", lambda D, p: D.Gamma(p[0], p[1]), [[0.4, 3.0], [1.0, 2.0]]),
    ("beta", lambda D, p: D.Beta(p[0], p[1]), [[0.5, 2.0], [1.5, 3.0]]),
    ("lognormal", lambda D, p: D.LogNormal(p[0], p[1]), [[0.0, 0.5], [0.3, 0.5]]),
    ("dirichlet", lambda D, p: D.Dirichlet(p[0]), [[[0.5, 2.0, 4.0]]]),
    (
        "mvn",
        lambda D, p: D.MultivariateNormal(p[0], scale_tril=p[1]),
        [[0.5, -1.0], [[1.0, 0.0], [0.5, 2.0]]],
    ),
    ("studentt", lambda D, p: D.StudentT(p[0], p[1], p[2]), [[5.0, 8.0], [0.0, 1.0], [1.0, 2.0]]),
    ("weibull", lambda D, p: D.Weibull(p[0], p[1]), [[1.0, 2.0], [1.5, 3.0]]),
    ("inverse_gamma", lambda D, p: D.InverseGamma(p[0], p[1]), [[6.0, 8.0], [2.0, 1.0]]),
    ("pareto", lambda D, p: D.Pareto(p[0], p[1]), [[1.0, 2.0], [5.0, 7.0]]),
    ("gumbel", lambda D, p: D.Gumbel(p[0], p[1]), [[0.0, 1.0], [1.0, 2.0]]),
    ("halfnormal", lambda D, p: D.HalfNormal(p[0]), [[0.5, 2.0]]),
    ("kumaraswamy", lambda D, p: D.Kumaraswamy(p[0], p[1]), [[0.5, 2.0], [1.5, 3.0]]),
    ("fisher_snedecor", lambda D, p: D.FisherSnedecor(p[0], p[1]), [[3.0, 8.0], [30.0, 40.0]]),
    ("continuous_bernoulli", lambda D, p: D.ContinuousBernoulli(p[0]), [[0.2, 0.8]]),
]


@pytest.mark.parametrize(("case", "build", "params"), REPARAM, ids=[c[0] for c in REPARAM])
def test_rsample_gradients_of_moments(case, build, params):
    """d/dparams of mean(f(rsample)) for f = x and x**2 against PyTorch's analytic derivative of E f.

    The estimate is the mean of 20 independent group estimates (500 draws each); their spread
    gives its standard error, and the check allows 6 of them (Student t with 19 degrees of
    freedom: a chance failure below 1e-4, and the seed is fixed).
    """
    groups, per_group = 20, 500
    for power in (1, 2):
        pt = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
        dt = build(TD, pt)
        moment = dt.mean if power == 1 else dt.variance + dt.mean**2
        want = torch.autograd.grad(moment.sum(), pt, allow_unused=True)
        estimates = []
        for _ in range(groups):
            pe = [ember.tensor(p, dtype=ember.float64, requires_grad=True) for p in params]
            x = build(ED, pe).rsample((per_group,))
            grads = ember.autograd.grad((x**power).mean(0).sum(), pe, allow_unused=True)
            estimates.append([np.zeros(np.shape(p)) if g is None else _np(g) for g, p in zip(grads, params)])
        for i, w in enumerate(want):
            w = np.zeros(np.shape(params[i])) if w is None else w.numpy()
            est = np.array([e[i] for e in estimates])
            se = est.std(axis=0, ddof=1) / math.sqrt(groups)
            np.testing.assert_array_less(np.abs(est.mean(0) - w), 6 * se + 1e-9, err_msg=f"{case} param {i}")


def test_gamma_implicit_gradient_matches_torch_per_draw():
    """The gradient of one Gamma draw w.r.t. its shape, at the same (alpha, x): PyTorch's is a
    fitted approximation (relative error about 1e-3); ember's is the exact series."""
    from ember.distributions._gamma_sampling import standard_gamma_grad

    alpha = torch.tensor([0.1, 0.3, 1.0, 2.5, 10.0, 200.0, 0.5, 0.5, 1.0, 3.0], dtype=torch.float64)
    x = torch.tensor([0.01, 0.2, 1.0, 4.0, 12.0, 230.0, 1e-6, 3.0, 15.0, 20.0], dtype=torch.float64)
    want = torch._standard_gamma_grad(alpha, x)
    got = standard_gamma_grad(_et(alpha.tolist()), _et(x.tolist()))
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=2e-3)


FINITE = [
    c
    for c in CASES
    if c[0] in {"bernoulli_probs", "bernoulli_logits", "categorical", "categorical_logits", "onehot"}
]


@pytest.mark.parametrize(("case", "build"), FINITE, ids=[c[0] for c in FINITE])
def test_category_frequencies_match_the_probabilities(case, build):
    """Chi-square of 10000 draws per batch element against PyTorch's probabilities (p > 1e-4)."""
    e, t = _pair(build)
    s = _np(e.sample((10000,)))
    if case == "onehot":
        s = s.argmax(-1)
    probs = _np(t.probs)
    if case.startswith("bernoulli"):
        probs = np.stack([1 - probs, probs], -1)
    s = s.reshape(len(s), -1)
    probs = probs.reshape(-1, probs.shape[-1])
    for j in range(s.shape[1]):
        observed = np.bincount(s[:, j].astype(int), minlength=probs.shape[1])
        assert scipy_stats.chisquare(observed, probs[j] * len(s)).pvalue > 1e-4, (case, j)
