"""Probability distributions with PyTorch's API (``torch.distributions``), on every backend.

Built from ember's public ops; draws use ember's generator, so ``ember.manual_seed`` makes them
reproducible. See ``docs/distributions.md``.
"""

from __future__ import annotations

from . import (
    _kl_cb,  # noqa: F401 - registers the ContinuousBernoulli KL pairs
    _kl_extra,  # noqa: F401 - registers the Geometric/Gumbel/HalfNormal KL pairs
    _kl_lowrank,  # noqa: F401 - registers the low-rank normal KL pairs
    _kl_pareto,  # noqa: F401 - registers the Pareto KL pairs
    constraints,
    transforms,
)
from .bounded import Kumaraswamy, LogisticNormal
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, ExponentialFamily, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .folded import Gumbel, HalfCauchy, HalfNormal
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .positive import InverseGamma, Pareto, Weibull
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .transformed import (
    Independent,
    LogitRelaxedBernoulli,
    LogNormal,
    RelaxedBernoulli,
    TransformedDistribution,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from .von_mises import VonMises

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "ExpRelaxedCategorical",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "biject_to",
    "constraints",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
]
