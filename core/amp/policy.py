"""PyTorch's autocast policy per device type, keyed by the names ops are marked with
(``ember._autocast_hook.AUTOCAST_OPS``).

``LOWER`` ops run in the region's dtype, ``FLOAT32`` ops in float32, ``PROMOTE`` ops in the
widest floating dtype among their arguments. A marked op in none of the three runs as written with autocast
off inside (a native kernel in PyTorch), except the ``COMPOSITE`` ones, which PyTorch builds
from other ops: those see autocast. ``cpu`` has
PyTorch's CPU lists (which leave exp, softmax, sum, norms in the lower dtype); every other
device type has PyTorch's CUDA lists.
"""

from __future__ import annotations

__all__ = ["COMPOSITE", "FLOAT32", "LOWER", "PROMOTE", "policy_for"]

LOWER, FLOAT32, PROMOTE = "lower", "float32", "promote"

_CPU_LOWER = """
conv1d conv2d nn.functional.conv3d bmm mm linalg.vecdot baddbmm addmm addbmm
nn.functional.linear matmul conv_transpose1d conv_transpose2d nn.functional.prelu
nn.functional.scaled_dot_product_attention
mkldnn_rnn_layer _rnn_layer
"""

_CPU_FLOAT32 = """
nn.functional.avg_pool3d nn.functional.binary_cross_entropy nn.functional.grid_sample polar
prod quantile nanquantile cdist trace view_as_complex cholesky cholesky_inverse
cholesky_solve inverse lu_solve orgqr pinverse nn.functional.max_pool3d
nn.functional.max_unpool2d nn.functional.adaptive_avg_pool3d nn.functional.mse_loss
nn.functional.cosine_embedding_loss nn.functional.nll_loss nn.functional.hinge_embedding_loss
nn.functional.poisson_nll_loss nn.functional.smooth_l1_loss nn.functional.cross_entropy
nn.functional.l1_loss nn.functional.huber_loss nn.functional.margin_ranking_loss
nn.functional.soft_margin_loss nn.functional.triplet_margin_loss nn.functional.multi_margin_loss
nn.functional.ctc_loss nn.functional.kl_div
nn.functional.binary_cross_entropy_with_logits
fft.fft fft.ifft fft.fft2 fft.ifft2 fft.fftn fft.ifftn fft.rfft fft.irfft fft.rfft2 fft.irfft2
fft.rfftn fft.irfftn fft.hfft fft.ihfft
linalg.cond linalg.matrix_rank linalg.solve linalg.cholesky linalg.svdvals linalg.eigvals
linalg.eigvalsh linalg.tensorinv linalg.tensorsolve qr svd triangular_solve linalg.qr
linalg.cholesky_ex linalg.svd linalg.eig linalg.eigh linalg.lstsq linalg.inv_ex
"""

_CPU_PROMOTE = "stack cat index_copy"

_CUDA_LOWER = """
conv1d conv2d nn.functional.conv3d conv_transpose1d conv_transpose2d nn.functional.prelu
addmm addmv addr matmul mm mv linalg.vecdot nn.functional.linear addbmm baddbmm bmm
chain_matmul linalg.multi_dot nn.functional.scaled_dot_product_attention _rnn_layer
"""

_CUDA_FLOAT32 = """
acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow
nn.functional.softplus layer_norm group_norm frobenius_norm nuclear_norm cosine_similarity
nn.functional.poisson_nll_loss nn.functional.cosine_embedding_loss nn.functional.nll_loss
nn.functional.hinge_embedding_loss nn.functional.kl_div nn.functional.l1_loss
nn.functional.smooth_l1_loss nn.functional.huber_loss nn.functional.mse_loss
nn.functional.margin_ranking_loss nn.functional.soft_margin_loss
nn.functional.triplet_margin_loss nn.functional.multi_margin_loss
nn.functional.binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp
prod softmax log_softmax cumprod cumsum linalg.vector_norm linalg.matrix_norm sum norm
linalg.norm nn.functional.cross_entropy
nn.functional.ctc_loss
"""

_CUDA_PROMOTE = """
addcdiv addcmul atan2 nn.functional.bilinear cross dot vdot nn.functional.grid_sample index_put
scatter_add tensordot cat stack index_copy
"""

# mkldnn_rnn_layer: an LSTM layer (PyTorch's cpu LSTM kernel); _rnn_layer: ember's Elman RNN
# layer, whose steps PyTorch computes with linears (so in the lower dtype); a GRU layer is
# unmarked: PyTorch's cpu GRU gives float32.

# Unlisted ops PyTorch decomposes into listed ones (so linalg.multi_dot on cpu runs its mms in
# the lower dtype).
COMPOSITE = frozenset({"linalg.multi_dot", "chain_matmul", "tensordot", "linalg.pinv", "inner"})


def _table(lower: str, float32: str, promote: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for kind, names in ((LOWER, lower), (FLOAT32, float32), (PROMOTE, promote)):
        for n in names.split():
            out[n] = kind
    return out


_POLICIES = {
    "cpu": _table(_CPU_LOWER, _CPU_FLOAT32, _CPU_PROMOTE),
    "cuda": _table(_CUDA_LOWER, _CUDA_FLOAT32, _CUDA_PROMOTE),
}


def policy_for(device_type: str) -> dict[str, str]:
    """The op name -> kind table autocast applies on ``device_type``."""
    return _POLICIES["cpu" if device_type == "cpu" else "cuda"]
