"""Reductions, scans, sorting and statistics (inputs without ties)."""

from __future__ import annotations

import ember

from .table_spec import E, Entry, P, U, idx


def _values(out: object) -> object:
    """The differentiable part of a (values, indices) result."""
    return out[0]  # type: ignore[index]


_SIMPLE = [
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "logsumexp",
    "nansum",
    "nanmean",
    "std",
    "var",
    "norm",
    "median",
    "nanmedian",
]


ENTRIES: list[Entry] = [
    *(E(n) for n in _SIMPLE if n not in {"logsumexp"}),
    *(
        E(n, U(2, 3), 1, case="dim")
        for n in ("sum", "mean", "prod", "amax", "amin", "nansum", "nanmean", "std", "var", "logsumexp")
    ),
    E("sum", U(2, 3, 2), (0, 2), case="dims", keepdim=True),
    E("max", U(2, 3), fn=lambda x: ember.max(x, 1).values, case="dim"),
    E("min", U(2, 3), fn=lambda x: ember.min(x, 1).values, case="dim"),
    E("max", U(2, 3), U(2, 3), case="binary"),
    E("min", U(2, 3), U(2, 3), case="binary"),
    E("median", U(2, 3), fn=lambda x: ember.median(x, 1).values, case="dim"),
    E("nanmedian", U(2, 3), fn=lambda x: ember.nanmedian(x, 1).values, case="dim"),
    E("mode", U(2, 3), fn=lambda x: ember.mode(x, 1).values),
    E("kthvalue", U(2, 3), fn=lambda x: ember.kthvalue(x, 2, 1).values),
    E("aminmax", U(2, 3), fn=lambda x: ember.aminmax(x, dim=1)),
    E("std_mean", U(2, 3), 1),
    E("var_mean", U(2, 3), 1),
    E(
        "prod",
        U(2, 3),
        fn=lambda x: ember.prod(x * ember.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]], dtype=ember.float64)),
        case="one_zero",
    ),
    E("norm", U(2, 3), 1, case="p1"),
    E("frobenius_norm", U(2, 3), (0, 1)),
    E("nuclear_norm", U(2, 3)),
    E("dist", U(2, 3), U(2, 3)),
    E("renorm", U(2, 3), 2, 0, 0.5),
    E("quantile", U(2, 3), 0.3, dim=1),
    E("nanquantile", U(2, 3), 0.3, dim=1),
    E("cumsum", U(2, 3), 1),
    E("cumprod", U(2, 3), 1),
    E("cummax", U(2, 3), fn=lambda x: ember.cummax(x, 1).values),
    E("cummin", U(2, 3), fn=lambda x: ember.cummin(x, 1).values),
    E("logcumsumexp", U(2, 3), 1),
    E("sort", U(2, 3), fn=lambda x: ember.sort(x, 1).values),
    E("msort", U(3, 2)),
    E("topk", U(2, 4), fn=lambda x: ember.topk(x, 2).values),
    E("diff", U(2, 4)),
    E("diff", U(2, 4), U(2, 1), case="prepend", fn=lambda x, p: ember.diff(x, n=2, prepend=p)),
    E("gradient", U(2, 4), dim=1),
    E("trapezoid", U(2, 4)),
    E("trapz", U(2, 4)),
    E("trapezoid", U(2, 4), U(4), case="x", fn=lambda y, x: ember.trapezoid(y, ember.cumsum(x.abs(), 0))),
    E("cumulative_trapezoid", U(2, 4)),
    E("cov", U(2, 4)),
    E("corrcoef", U(2, 4)),
    E("softmax", U(2, 3), 1),
    E("log_softmax", U(2, 3), 1),
    E("special.softmax", U(2, 3), 1),
    E("special.log_softmax", U(2, 3), 1),
    E("cosine_similarity", U(2, 3), U(2, 3)),
    E("pairwise_distance", U(2, 3), U(2, 3)),
    E("cdist", U(2, 3), U(4, 3)),
    E("pdist", U(3, 2)),
    E("frexp", U(2, 3), fn=lambda x: ember.frexp(x)[0]),
    E("take", U(2, 3), idx([0, 5, 2])),
    E("masked_select", U(2, 3), ember.tensor([[True, False, True], [False, True, True]])),
]

_ = P  # positive inputs are not needed here
