"""Records for the linear-algebra composites (batched over leading dims).

Factorisations are not unique (eigenvector phases, QR and SVD signs), so those records
carry a ``canon`` function that maps outputs to a unique form (reconstructions, sorted
eigenvalues, |R|) which is compared instead, on the result and on the reference alike.
"""

from __future__ import annotations

import numpy as np

from .records import OpCase, Sample
from .samples import contig, transposed, values

__all__ = ["RECORDS"]

_DT = ("float32", "float64", "complex64", "complex128")
_COMPLEX_OF = {
    "float32": "complex64",
    "float64": "complex128",
    "complex64": "complex64",
    "complex128": "complex128",
}
_REAL_OF = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}


def _well(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A well-conditioned matrix: random entries plus n on the diagonal."""
    a = values(rng, shape, dtype, "unit").astype(np.complex128 if "complex" in dtype else np.float64)
    a = a + shape[-1] * np.eye(shape[-1])
    return a.astype(dtype)


def _spd(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A Hermitian positive definite matrix."""
    b = values(rng, shape, dtype, "unit").astype(np.complex128)
    h = b @ np.conj(np.swapaxes(b, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return (h if "complex" in dtype else h.real).astype(dtype)


def _square(make, *params: object):  # type: ignore[no-untyped-def]
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        return [
            Sample("3x3", (contig(make(rng, dtype, (3, 3))), *params)),
            Sample("batched", (contig(make(rng, dtype, (2, 4, 4))), *params)),
            Sample("transposed", (transposed(make(rng, dtype, (4, 4))), *params)),
            Sample("empty-batch", (contig(make(rng, dtype, (0, 2, 2))), *params)),
        ]

    return samples


def _solve_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample("3x3", (contig(_well(rng, dtype, (3, 3))), contig(values(rng, (3, 2), dtype)))),
        Sample("batched", (contig(_well(rng, dtype, (2, 4, 4))), contig(values(rng, (2, 4, 1), dtype)))),
    ]


def _lstsq_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    a = _well(rng, dtype, (5, 5))[:, :3].copy()
    return [Sample("tall", (contig(a), contig(values(rng, (5, 2), dtype))))]


def _householder_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample("4x3", (contig(values(rng, (4, 3), dtype, "unit")), contig(values(rng, (3,), dtype, "unit")))),
        Sample(
            "batched",
            (contig(values(rng, (2, 3, 2), dtype, "unit")), contig(values(rng, (2, 2), dtype, "unit"))),
        ),
    ]


def _h(a: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(a, -1, -2))


def _householder(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2:]
    q = np.broadcast_to(np.eye(m, dtype=np.result_type(a, tau)), a.shape[:-2] + (m, m)).copy()
    for i in range(tau.shape[-1]):
        v = np.zeros(a.shape[:-2] + (m, 1), q.dtype)
        v[..., i, 0] = 1
        v[..., i + 1 :, 0] = a[..., i + 1 :, i]
        q = q - (q @ v) * tau[..., i, None, None] @ _h(v)
    return q[..., :, :n]


def _matrix_exp(a: np.ndarray) -> np.ndarray:
    import scipy.linalg as sl

    flat = a.reshape((-1,) + a.shape[-2:])
    return np.stack([sl.expm(m) for m in flat]).reshape(a.shape) if flat.shape[0] else a.copy()


def _qr(a: np.ndarray, mode: str):  # type: ignore[no-untyped-def]
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r")
    return tuple(np.linalg.qr(a, mode=mode))


def _qr_canon(q: np.ndarray, r: np.ndarray):  # type: ignore[no-untyped-def]
    if q.size == 0:
        return (np.abs(r),)
    return q @ r, _h(q) @ q, np.abs(r)


def _eig_canon(w: np.ndarray, v: np.ndarray):  # type: ignore[no-untyped-def]
    rebuilt = v @ (w[..., :, None] * np.linalg.inv(v)) if w.size else v
    return np.sort_complex(w), rebuilt


def _eigh_canon(w: np.ndarray, v: np.ndarray):  # type: ignore[no-untyped-def]
    return w, (v * w[..., None, :]) @ _h(v), _h(v) @ v


def _svd_canon(u: np.ndarray, s: np.ndarray, vh: np.ndarray):  # type: ignore[no-untyped-def]
    k = s.shape[-1]
    return s, (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], _h(u) @ u, vh @ _h(vh)


def _lin(op: str, samples, ref, **kw) -> OpCase:  # type: ignore[no-untyped-def]
    return OpCase(op, samples, ref, _DT, "float32/64 and complex64/128", tol_scale=20.0, **kw)


RECORDS = [
    _lin("linalg_det", _square(_well), np.linalg.det),
    _lin(
        "linalg_slogdet",
        _square(_well),
        lambda a: tuple(np.linalg.slogdet(a)),
        out_dtype=lambda d: (d, _REAL_OF[d]),
    ),
    _lin("linalg_inv", _square(_well), np.linalg.inv),
    _lin("linalg_solve", _solve_samples, np.linalg.solve),
    _lin("linalg_lstsq", _lstsq_samples, lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0]),
    _lin(
        "linalg_cholesky",
        _square(_spd, False),
        lambda a, up: _h(np.linalg.cholesky(a)) if up else np.linalg.cholesky(a),
    ),
    _lin(
        "linalg_qr",
        lambda d, r: [s for mode in ("reduced", "complete", "r") for s in _qr_samples(d, r, mode)],
        _qr,
        out_dtype=lambda d: (d, d),
        canon=_qr_canon,
    ),
    _lin(
        "linalg_eig",
        _square(_well),
        lambda a: tuple(np.linalg.eig(a)),
        out_dtype=lambda d: (_COMPLEX_OF[d], _COMPLEX_OF[d]),
        canon=_eig_canon,
    ),
    _lin(
        "linalg_eigh",
        _square(_spd, False),
        lambda a, up: tuple(np.linalg.eigh(a, UPLO="U" if up else "L")),
        out_dtype=lambda d: (_REAL_OF[d], d),
        canon=_eigh_canon,
    ),
    _lin(
        "linalg_svd",
        lambda d, r: _svd_samples(d, r),
        lambda a, full: tuple(np.linalg.svd(a, full_matrices=full)),
        out_dtype=lambda d: (d, _REAL_OF[d], d),
        canon=_svd_canon,
    ),
    _lin("linalg_matrix_exp", _square(lambda r, d, s: values(r, s, d, "unit")), _matrix_exp),
    _lin("linalg_householder_product", _householder_samples, _householder),
]


def _qr_samples(dtype: str, rng: np.random.Generator, mode: str) -> list[Sample]:
    return [
        Sample(f"{mode}-tall", (contig(_well(rng, dtype, (5, 5))[:, :3].copy()), mode)),
        Sample(f"{mode}-batched", (contig(_well(rng, dtype, (2, 3, 3))), mode)),
    ]


def _svd_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    a = values(rng, (4, 3), dtype, "unit")
    return [
        Sample("reduced", (contig(a), False)),
        Sample("full", (contig(a), True)),
        Sample("batched", (contig(values(rng, (2, 3, 3), dtype, "unit")), False)),
    ]
