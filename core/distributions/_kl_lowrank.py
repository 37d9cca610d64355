"""KL closed forms between (low-rank) multivariate normals (registered on import by the package)."""

from __future__ import annotations

from typing import Any

from . import _ember as ember
from .kl import register_kl
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    batch_lowrank_logdet,
    batch_lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, batch_mahalanobis

__all__: list[str] = []


def _trace_xxt(m: Any) -> Any:
    """``trace(M M^T)`` over batch dims: the sum of squares of each matrix."""
    return m.pow(2).sum((-2, -1))


def _check_events(p: Any, q: Any, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two {what} with                          different event shapes cannot be computed"
        )


def _q_terms(p: Any, q: Any) -> tuple[Any, Any]:
    """``q``'s log-determinant and Mahalanobis term of ``q.loc - p.loc``, and ``L_c^-1 W^T D^-1``."""
    w, d, cap = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    term3 = batch_lowrank_mahalanobis(w, d, q.loc - p.loc, cap)
    a = ember.linalg.solve_triangular(cap, w.mT / d.unsqueeze(-2), upper=False)
    return term3, a


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _lowrank_lowrank(p: Any, q: Any) -> Any:
    _check_events(p, q, "Low Rank Multivariate Normals")
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    qd = q._unbroadcasted_cov_diag
    term1 = batch_lowrank_logdet(q._unbroadcasted_cov_factor, qd, q._capacitance_tril) - batch_lowrank_logdet(
        pw, pd, p._capacitance_tril
    )
    term3, a = _q_terms(p, q)
    term2 = (
        (pd / qd).sum(-1)
        + _trace_xxt(pw * qd.rsqrt().unsqueeze(-1))
        - _trace_xxt(a * pd.sqrt().unsqueeze(-2))
        - _trace_xxt(ember.matmul(a, pw))
    )
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _mvn_lowrank(p: Any, q: Any) -> Any:
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    lp = p._unbroadcasted_scale_tril
    qd = q._unbroadcasted_cov_diag
    term1 = batch_lowrank_logdet(q._unbroadcasted_cov_factor, qd, q._capacitance_tril) - 2 * lp.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    term3, a = _q_terms(p, q)
    term2 = _trace_xxt(lp * qd.rsqrt().unsqueeze(-1)) - _trace_xxt(ember.matmul(a, lp))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _lowrank_mvn(p: Any, q: Any) -> Any:
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    lq = q._unbroadcasted_scale_tril
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = 2 * lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - batch_lowrank_logdet(
        pw, pd, p._capacitance_tril
    )
    term3 = batch_mahalanobis(lq, q.loc - p.loc)
    batch = tuple(ember.broadcast_shapes(tuple(lq.shape[:-2]), tuple(pw.shape[:-2])))
    n = p.event_shape[0]
    lq_b = lq.expand(*batch, n, n)
    term21 = _trace_xxt(ember.linalg.solve_triangular(lq_b, pw.expand(*batch, n, pw.shape[-1]), upper=False))
    diag = ember.diag_embed(pd.sqrt()).expand(*batch, n, n)
    term22 = _trace_xxt(ember.linalg.solve_triangular(lq_b, diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
