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
"""

from __future__ import annotations

from . import (
    _decomp_bessel,
    _decomp_eig,
    _decomp_elementary,
    _decomp_gamma,
    _decomp_jacobi,
    _decomp_linalg,
    _decomp_normal,
    _decomp_scatter,
)
from ._ops._composite import declare_inline

__all__ = ["INLINE"]

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
    "cumprod",  # _ops/reduction_scan.py: a doubling scan
    "cummax",  # _ops/reduction_scan.py
    "cummin",  # _ops/reduction_scan.py
)

declare_inline(*INLINE)
_MODULES = (
    _decomp_bessel,
    _decomp_eig,
    _decomp_elementary,
    _decomp_gamma,
    _decomp_jacobi,
    _decomp_linalg,
    _decomp_normal,
    _decomp_scatter,
)
