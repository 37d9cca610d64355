"""Probability distributions with PyTorch's API (``torch.distributions``), on every backend.

Built from ember's public ops; draws use ember's generator, so ``ember.manual_seed`` makes them
reproducible. See ``docs/distributions.md``.
"""

from __future__ import annotations

from . import constraints, transforms
from .continuous import Cauchy, Exponential, ExponentialFamily, Laplace, Normal, Uniform
from .counts import Binomial, Multinomial, Poisson
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .transformed import (
    Independent,
    LogitRelaxedBernoulli,
    LogNormal,
    RelaxedBernoulli,
    TransformedDistribution,
)
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)

__all__ = [
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Independent",
    "Laplace",
    "LogNormal",
    "LogitRelaxedBernoulli",
    "Multinomial",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "PowerTransform",
    "RelaxedBernoulli",
    "SigmoidTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "kl_divergence",
    "register_kl",
    "transforms",
]
