"""One call per autocast-marked op, written once for both libraries: ``SAMPLES[name](T, A, I)``
where ``T`` is ``torch`` or ``ember``, ``A(*shape)`` a fixed floating tensor in the dtype under
test and ``I(values)`` an int64 tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Sample = Callable[[Any, Callable[..., Any], Callable[..., Any]], Any]


def _spd(T: Any, A: Callable[..., Any]) -> Any:
    a = A(3, 3)
    return a @ a.mT + T.eye(3, dtype=a.dtype)


def _nn(T: Any) -> Any:
    return T.nn.functional


SAMPLES: dict[str, Sample] = {
    # lower precision
    "matmul": lambda T, A, I: T.matmul(A(3, 4), A(4, 2)),
    "mm": lambda T, A, I: T.mm(A(3, 4), A(4, 2)),
    "bmm": lambda T, A, I: T.bmm(A(2, 3, 4), A(2, 4, 2)),
    "baddbmm": lambda T, A, I: T.baddbmm(A(2, 3, 2), A(2, 3, 4), A(2, 4, 2)),
    "addmm": lambda T, A, I: T.addmm(A(3, 2), A(3, 4), A(4, 2)),
    "addbmm": lambda T, A, I: T.addbmm(A(3, 2), A(2, 3, 4), A(2, 4, 2)),
    "addmv": lambda T, A, I: T.addmv(A(3), A(3, 4), A(4)),
    "addr": lambda T, A, I: T.addr(A(3, 4), A(3), A(4)),
    "dot": lambda T, A, I: T.dot(A(4), A(4)),
    "mv": lambda T, A, I: T.mv(A(3, 4), A(4)),
    "inner": lambda T, A, I: T.inner(A(3, 4), A(2, 4)),
    "vdot": lambda T, A, I: T.vdot(A(4), A(4)),
    "linalg.vecdot": lambda T, A, I: T.linalg.vecdot(A(3, 4), A(3, 4)),
    "chain_matmul": lambda T, A, I: T.chain_matmul(A(2, 3), A(3, 4), A(4, 2)),
    "linalg.multi_dot": lambda T, A, I: T.linalg.multi_dot([A(2, 3), A(3, 4), A(4, 2)]),
    "tensordot": lambda T, A, I: T.tensordot(A(3, 4), A(4, 2), dims=1),
    "nn.functional.linear": lambda T, A, I: _nn(T).linear(A(3, 4), A(2, 4), A(2)),
    "nn.functional.bilinear": lambda T, A, I: _nn(T).bilinear(A(3, 4), A(3, 2), A(5, 4, 2)),
    "conv1d": lambda T, A, I: T.conv1d(A(1, 2, 6), A(3, 2, 3)),
    "conv2d": lambda T, A, I: T.conv2d(A(1, 2, 5, 5), A(3, 2, 3, 3), A(3)),
    "nn.functional.conv3d": lambda T, A, I: _nn(T).conv3d(A(1, 2, 4, 4, 4), A(3, 2, 2, 2, 2)),
    "conv_transpose1d": lambda T, A, I: T.conv_transpose1d(A(1, 2, 5), A(2, 3, 3)),
    "conv_transpose2d": lambda T, A, I: T.conv_transpose2d(A(1, 2, 4, 4), A(2, 3, 3, 3)),
    "nn.functional.prelu": lambda T, A, I: _nn(T).prelu(A(2, 3), A(1)),
    "nn.functional.scaled_dot_product_attention": lambda T, A, I: _nn(T).scaled_dot_product_attention(
        A(1, 3, 4), A(1, 3, 4), A(1, 3, 4)
    ),
    # float32 on CUDA's list, lower on CPU's
    "exp": lambda T, A, I: T.exp(A(3)),
    "expm1": lambda T, A, I: T.expm1(A(3)),
    "log": lambda T, A, I: T.log(A(3) + 1),
    "log10": lambda T, A, I: T.log10(A(3) + 1),
    "log2": lambda T, A, I: T.log2(A(3) + 1),
    "log1p": lambda T, A, I: T.log1p(A(3)),
    "acos": lambda T, A, I: T.acos(A(3) * 0.5),
    "asin": lambda T, A, I: T.asin(A(3) * 0.5),
    "cosh": lambda T, A, I: T.cosh(A(3)),
    "sinh": lambda T, A, I: T.sinh(A(3)),
    "tan": lambda T, A, I: T.tan(A(3)),
    "erfinv": lambda T, A, I: T.erfinv(A(3) * 0.5),
    "reciprocal": lambda T, A, I: T.reciprocal(A(3) + 1),
    "rsqrt": lambda T, A, I: T.rsqrt(A(3) + 1),
    "pow": lambda T, A, I: T.pow(A(3), 2),
    "softmax": lambda T, A, I: T.softmax(A(2, 3), 1),
    "log_softmax": lambda T, A, I: T.log_softmax(A(2, 3), 1),
    "sum": lambda T, A, I: T.sum(A(2, 3)),
    "prod": lambda T, A, I: T.prod(A(2, 3)),
    "cumsum": lambda T, A, I: T.cumsum(A(2, 3), 1),
    "cumprod": lambda T, A, I: T.cumprod(A(2, 3), 1),
    "logsumexp": lambda T, A, I: T.logsumexp(A(2, 3), 1),
    "norm": lambda T, A, I: T.norm(A(2, 3)),
    "linalg.norm": lambda T, A, I: T.linalg.norm(A(2, 3)),
    "linalg.vector_norm": lambda T, A, I: T.linalg.vector_norm(A(2, 3)),
    "linalg.matrix_norm": lambda T, A, I: T.linalg.matrix_norm(A(2, 3)),
    "frobenius_norm": lambda T, A, I: T.frobenius_norm(A(2, 3), dim=(0, 1)),
    "nuclear_norm": lambda T, A, I: T.nuclear_norm(A(2, 3)),
    "dist": lambda T, A, I: T.dist(A(3), A(3) * 2),
    "cdist": lambda T, A, I: T.cdist(A(2, 3), A(4, 3)),
    "pdist": lambda T, A, I: T.pdist(A(3, 2)),
    "renorm": lambda T, A, I: T.renorm(A(2, 3), 2, 0, 1.0),
    "cosine_similarity": lambda T, A, I: T.cosine_similarity(A(2, 3), A(2, 3) + 1),
    "layer_norm": lambda T, A, I: T.layer_norm(A(2, 3), (3,)),
    "group_norm": lambda T, A, I: T.group_norm(A(2, 4, 3), 2),
    "nn.functional.softplus": lambda T, A, I: _nn(T).softplus(A(3)),
    "trace": lambda T, A, I: T.trace(A(3, 3)),
    "quantile": lambda T, A, I: T.quantile(A(5), 0.5),
    "nanquantile": lambda T, A, I: T.nanquantile(A(5), 0.5),
    "polar": lambda T, A, I: T.polar(A(3), A(3)),
    "view_as_complex": lambda T, A, I: T.view_as_complex(A(3, 2)),
    "inverse": lambda T, A, I: T.inverse(_spd(T, A)),
    "pinverse": lambda T, A, I: T.pinverse(A(3, 2)),
    "cholesky": lambda T, A, I: T.cholesky(_spd(T, A)),
    "cholesky_inverse": lambda T, A, I: T.cholesky_inverse(T.linalg.cholesky(_spd(T, A))),
    "cholesky_solve": lambda T, A, I: T.cholesky_solve(A(3, 2), T.linalg.cholesky(_spd(T, A))),
    "linalg.cholesky": lambda T, A, I: T.linalg.cholesky(_spd(T, A)),
    "linalg.inv_ex": lambda T, A, I: T.linalg.inv_ex(_spd(T, A)).inverse,
    "linalg.solve": lambda T, A, I: T.linalg.solve(_spd(T, A), A(3)),
    "linalg.det": lambda T, A, I: T.linalg.det(_spd(T, A)),
    "linalg.slogdet": lambda T, A, I: T.linalg.slogdet(_spd(T, A)).logabsdet,
    "linalg.eigh": lambda T, A, I: T.linalg.eigh(_spd(T, A)).eigenvalues,
    "linalg.eigvalsh": lambda T, A, I: T.linalg.eigvalsh(_spd(T, A)),
    "linalg.svdvals": lambda T, A, I: T.linalg.svdvals(A(3, 2)),
    "linalg.svd": lambda T, A, I: T.linalg.svd(A(3, 2)).S,
    "linalg.qr": lambda T, A, I: T.linalg.qr(A(3, 2)).R,
    "linalg.pinv": lambda T, A, I: T.linalg.pinv(A(3, 2)),
    "linalg.matrix_rank": lambda T, A, I: T.linalg.matrix_rank(A(3, 2)),
    "linalg.cond": lambda T, A, I: T.linalg.cond(_spd(T, A)),
    "linalg.lstsq": lambda T, A, I: T.linalg.lstsq(A(3, 2), A(3, 1)).solution,
    "linalg.cholesky_ex": lambda T, A, I: T.linalg.cholesky_ex(_spd(T, A)).L,
    "linalg.eigvals": lambda T, A, I: T.linalg.eigvals(_spd(T, A)),
    "linalg.eig": lambda T, A, I: T.linalg.eig(_spd(T, A)).eigenvalues,
    "linalg.lu_factor": lambda T, A, I: T.linalg.lu_factor(_spd(T, A)).LU,
    "linalg.lu_factor_ex": lambda T, A, I: T.linalg.lu_factor_ex(_spd(T, A)).LU,
    "lu_solve": lambda T, A, I: T.lu_solve(A(3, 1), *T.linalg.lu_factor(_spd(T, A))),
    "linalg.tensorinv": lambda T, A, I: T.linalg.tensorinv(_spd(T, A), ind=1),
    "linalg.tensorsolve": lambda T, A, I: T.linalg.tensorsolve(_spd(T, A), A(3)),
    "orgqr": lambda T, A, I: T.orgqr(A(3, 2), A(2)),
    "svd": lambda T, A, I: T.svd(A(3, 2)).S,
    "qr": lambda T, A, I: T.qr(A(3, 2)).R,
    "triangular_solve": lambda T, A, I: T.triangular_solve(A(3, 2), T.linalg.cholesky(_spd(T, A))).solution,
    # ffts (complex results; their dtype follows the input's)
    "fft.fft": lambda T, A, I: T.fft.fft(A(4)),
    "fft.rfft": lambda T, A, I: T.fft.rfft(A(4)),
    "fft.irfft": lambda T, A, I: T.fft.irfft(A(4)),
    "fft.hfft": lambda T, A, I: T.fft.hfft(A(4)),
    "fft.rfft2": lambda T, A, I: T.fft.rfft2(A(4, 4)),
    "fft.ifft": lambda T, A, I: T.fft.ifft(A(4)),
    "fft.fft2": lambda T, A, I: T.fft.fft2(A(4, 4)),
    "fft.ifft2": lambda T, A, I: T.fft.ifft2(A(4, 4)),
    "fft.fftn": lambda T, A, I: T.fft.fftn(A(4, 4)),
    "fft.ifftn": lambda T, A, I: T.fft.ifftn(A(4, 4)),
    "fft.rfftn": lambda T, A, I: T.fft.rfftn(A(4, 4)),
    "fft.irfft2": lambda T, A, I: T.fft.irfft2(A(4, 4)),
    "fft.irfftn": lambda T, A, I: T.fft.irfftn(A(4, 4)),
    "fft.ihfft": lambda T, A, I: T.fft.ihfft(A(4)),
    # losses
    "nn.functional.mse_loss": lambda T, A, I: _nn(T).mse_loss(A(3), A(3) * 2),
    "nn.functional.l1_loss": lambda T, A, I: _nn(T).l1_loss(A(3), A(3) * 2),
    "nn.functional.smooth_l1_loss": lambda T, A, I: _nn(T).smooth_l1_loss(A(3), A(3) * 2),
    "nn.functional.huber_loss": lambda T, A, I: _nn(T).huber_loss(A(3), A(3) * 2),
    "nn.functional.cross_entropy": lambda T, A, I: _nn(T).cross_entropy(A(2, 3), I([0, 2])),
    "nn.functional.nll_loss": lambda T, A, I: _nn(T).nll_loss(A(2, 3), I([0, 2])),
    "nn.functional.kl_div": lambda T, A, I: _nn(T).kl_div(A(3), A(3), reduction="sum"),
    "nn.functional.binary_cross_entropy": lambda T, A, I: _nn(T).binary_cross_entropy(
        A(3) * 0.5 + 0.25, A(3) * 0.5
    ),
    "nn.functional.binary_cross_entropy_with_logits": lambda T, A, I: _nn(T).binary_cross_entropy_with_logits(
        A(3), A(3) * 0.5
    ),
    "nn.functional.soft_margin_loss": lambda T, A, I: _nn(T).soft_margin_loss(A(3), A(3)),
    "nn.functional.margin_ranking_loss": lambda T, A, I: _nn(T).margin_ranking_loss(A(3), A(3) * 2, A(3)),
    "nn.functional.hinge_embedding_loss": lambda T, A, I: _nn(T).hinge_embedding_loss(
        A(3), T.tensor([1.0, -1.0, 1.0])
    ),
    "nn.functional.poisson_nll_loss": lambda T, A, I: _nn(T).poisson_nll_loss(A(3), A(3)),
    "nn.functional.cosine_embedding_loss": lambda T, A, I: _nn(T).cosine_embedding_loss(
        A(2, 3), A(2, 3) + 1, I([1, -1])
    ),
    "nn.functional.triplet_margin_loss": lambda T, A, I: _nn(T).triplet_margin_loss(
        A(2, 3), A(2, 3), A(2, 3) * 2
    ),
    "nn.functional.multi_margin_loss": lambda T, A, I: _nn(T).multi_margin_loss(A(2, 3), I([0, 2])),
    "nn.functional.multilabel_soft_margin_loss": lambda T, A, I: _nn(T).multilabel_soft_margin_loss(
        A(2, 3), A(2, 3)
    ),
    # pooling / sampling
    "nn.functional.avg_pool3d": lambda T, A, I: _nn(T).avg_pool3d(A(1, 1, 2, 2, 2), 2),
    "nn.functional.max_pool3d": lambda T, A, I: _nn(T).max_pool3d(A(1, 1, 2, 2, 2), 2),
    "nn.functional.adaptive_avg_pool3d": lambda T, A, I: _nn(T).adaptive_avg_pool3d(A(1, 1, 2, 2, 2), 1),
    "nn.functional.grid_sample": lambda T, A, I: _nn(T).grid_sample(
        A(1, 1, 3, 3), A(1, 2, 2, 2) - 0.5, align_corners=False
    ),
    "nn.functional.max_unpool2d": lambda T, A, I: _nn(T).max_unpool2d(
        A(1, 1, 2, 2), I([[[[0, 3], [8, 15]]]]), 2
    ),
    # promote
    "cat": lambda T, A, I: T.cat([A(2), A(2).to(T.float32)]),
    "stack": lambda T, A, I: T.stack([A(2), A(2).to(T.float32)]),
    "addcmul": lambda T, A, I: T.addcmul(A(3), A(3), A(3).to(T.float32)),
    "addcdiv": lambda T, A, I: T.addcdiv(A(3), A(3), A(3).to(T.float32) + 1),
    "atan2": lambda T, A, I: T.atan2(A(3), A(3).to(T.float32)),
    "cross": lambda T, A, I: T.cross(A(3), A(3) * 2, dim=0),
    "scatter_add": lambda T, A, I: T.scatter_add(A(2, 3), 0, I([[0, 1, 0]]), A(1, 3)),
    "index_put": lambda T, A, I: T.index_put(A(3), (I([0, 2]),), A(2)),
    "index_copy": lambda T, A, I: T.index_copy(A(3, 2).to(T.float32), 0, I([1]), A(1, 2)),
}
