"""Every composite's decomposition into primitives, declared to the registry on import.

Two kinds: composites whose frontend function decomposes them itself when the backend has no
kernel (``k[op] is None``; listed below with where that code lives), and composites with a
standalone decomposition registered by ``@decomposition`` in the ``_decomp_*`` modules (which
``run_composite`` uses and the conformance suite tests like a kernel). (The backwards of
conv2d and the pooling ops register theirs with ``@decomposition`` beside their frontend
functions in ``nn/_functional/conv.py`` and ``pooling.py``.) A composite in neither
runs on the CPU and is reported as a fallback (``ember info``, the conformance suite).
``tests/test_composite_decompositions.py`` runs each declared one on a primitives-only backend with the
fallback policy ``error``, so this list cannot claim a decomposition that is not there.

The standalone ones are declared here by name (``MODULES``) and their modules imported only when
a backend without the composite's kernel loads (``registry.declare_decomposition(module=)``):
the CPU backend has every kernel, and the series and iterations cost about a tenth of
``import ember``. ``tests/test_import_cost.py`` checks this table against what each module
registers.
"""

from __future__ import annotations

from ember.backends import registry

from ._ops._composite import declare_inline, decomposed_kernel

__all__ = ["INLINE", "MODULES"]

INLINE = (
    "clone",  # _ops/convert.py: empty + assign
    "ceil",  # _ops/pointwise_unary.py: -floor(-x)
    "trunc",  # _ops/pointwise_unary.py
    "round",  # _ops/pointwise_unary.py
    "sign",  # _ops/pointwise_unary.py
    "sigmoid",  # _ops/pointwise_unary.py
    "log1p",  # _ops/pointwise_unary.py
    "expm1",  # _ops/pointwise_unary.py
    "remainder",  # _ops/pointwise_binary.py: a - floordiv(a, b) * b
    "amin",  # _ops/reduction.py: -amax(-x)
    "argmin",  # _ops/reduction.py
    "softmax",  # nn/_functional/softmax.py
    "log_softmax",  # nn/_functional/softmax.py
    "index",  # _ops/indexing.py: gather on the flattened view
    "index_put",  # _ops/indexing.py: scatter on the flattened view
    "nonzero",  # _ops/indexing.py
    "conv2d",  # nn/_functional/conv.py: unfold + matmul
    "max_pool2d",  # nn/_functional/pooling.py
    "avg_pool2d",  # nn/_functional/pooling.py
    "sgd_update",  # optim/optimizer.py: the optimizer's per-op formula
    "adam_update",  # optim/optimizer.py
    "sgd_update_foreach",  # optim/optimizer.py: the per-tensor update for each parameter
    "adam_update_foreach",  # optim/optimizer.py
    "norm_foreach",  # nn/utils/clip_grad.py: one norm per tensor
    "mul_foreach",  # nn/utils/clip_grad.py: one mul_ per tensor
    "add_scaled",  # _ops/pointwise_binary.py: float32 through float64, else mul then add
    "cumprod",  # _ops/reduction_scan.py: a doubling scan
    "cummax",  # _ops/reduction_scan.py
    "cummin",  # _ops/reduction_scan.py
)

declare_inline(*INLINE)
# module -> the composites whose decompositions its import registers (with ``@decomposition``)
MODULES: dict[str, tuple[str, ...]] = {
    "ember._decomp_bessel": ("i0", "i0e", "i1", "i1e", "bessel_j0", "bessel_j1"),
    "ember._decomp_eig": ("linalg_eig",),
    "ember._decomp_elementary": ("atan", "asin", "acos", "atan2", "real", "imag", "complex"),
    "ember._decomp_gamma": ("lgamma", "digamma", "zeta", "polygamma"),
    "ember._decomp_jacobi": ("linalg_eigh", "linalg_svd", "linalg_lstsq"),
    "ember._decomp_linalg": (
        "linalg_det",
        "linalg_slogdet",
        "linalg_solve",
        "linalg_inv",
        "linalg_cholesky",
        "linalg_householder_product",
        "linalg_qr",
        "linalg_matrix_exp",
    ),
    "ember._decomp_normal": ("erfc", "erfcx", "log_ndtr", "erfinv", "ndtri"),
    "ember._decomp_scatter": ("scatter_reduce",),
    "ember._ops.pointwise_unary": ("relu_backward",),
    "ember.nn._functional.attention": ("sdpa", "sdpa_backward"),
    "ember.nn._functional.conv": ("conv2d_input_grad", "conv2d_weight_grad"),
    "ember.nn._functional.norm": ("layer_norm", "layer_norm_backward"),
    "ember.nn._functional.pooling": ("max_pool2d_backward", "avg_pool2d_backward"),
    "ember.nn._functional.recurrent": (
        "lstm_layer",
        "lstm_layer_backward",
        "gru_layer",
        "gru_layer_backward",
        "rnn_layer",
        "rnn_layer_backward",
    ),
    "ember.nn._functional.softmax": ("softmax_backward", "log_softmax_backward"),
}


def _declare(module: str, op: str) -> None:
    if op in registry.decomposed():  # its module is imported: its own declaration stands
        return
    registry.declare_decomposition(op, lambda lb: decomposed_kernel(lb, op), module=module)


for _module, _ops in MODULES.items():
    for _op in _ops:
        _declare(_module, _op)
