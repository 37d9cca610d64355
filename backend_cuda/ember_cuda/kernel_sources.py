"""ALL_KERNEL_SOURCES: every kernel of the backend as the full CUDA source NVRTC compiles.

One entry per kernel and dtype it is used with, keyed ``name[dtype,...]``: raw kernels
contribute their exact source; CuPy ElementwiseKernels are rendered by CuPy's own code
generator (nvrtc_check.render_elementwise). tests/test_compile.py compiles every entry for
Hopper, so a kernel that does not compile fails CI on machines without a GPU. A new
module-level kernel must be added here; test_compile checks that none is missing.
"""

from __future__ import annotations

from typing import Any

from . import attention, elementwise, fused, indexing, optim, pool, random, rnn
from .dtypes import FLOATS
from .nvrtc_check import render_elementwise

__all__ = ["ALL_KERNEL_SOURCES", "ELEMENTWISE", "RAW", "all_kernel_sources"]

# Elementwise kernels: name -> (kernel, dtype tuples, parameters passed as scalars).
ELEMENTWISE: dict[str, tuple[Any, list[tuple[str, ...]], frozenset[str]]] = {
    name: (k, dts, frozenset()) for name, (k, dts) in elementwise.ELEMENTWISE_KERNELS.items()
}
_SGD_SCALARS = {"lr", "momentum", "damp1", "weight_decay", "nesterov", "first", "maximize"}
_ADAM_SCALARS = {
    "wd",
    "decay",
    "w",
    "w1",
    "omb2",
    "beta2",
    "bc2s",
    "neg_step",
    "eps",
    "decoupled",
    "lerp_low",
    "maximize",
}
ELEMENTWISE["ember_add_scaled"] = (
    elementwise.EMBER_ADD_SCALED,
    [("float32",), ("float64",)],
    frozenset({"s"}),
)
for _k in (optim.EMBER_SGD, optim.EMBER_SGD_MOMENTUM):
    ELEMENTWISE[_k.name] = (_k, [(d.name,) for d in FLOATS], frozenset(_SGD_SCALARS))
for _k in (optim.EMBER_ADAM, optim.EMBER_ADAM_AMSGRAD):
    ELEMENTWISE[_k.name] = (_k, [(d.name,) for d in FLOATS], frozenset(_ADAM_SCALARS))

# Raw kernels and modules: name -> {dtype or "": kernel object holding .code}.
RAW: dict[str, dict[str, Any]] = {
    "ember_philox": {"": random.EMBER_PHILOX},
    "ember_scatter_add_atomic": indexing.EMBER_SCATTER_ADD_ATOMIC,
    "ember_scatter_segments": indexing.EMBER_SCATTER_SEGMENTS,
    "ember_softmax": fused.EMBER_SOFTMAX,
    "ember_pool2d": pool.EMBER_POOL2D,
    "ember_rnn": rnn.EMBER_RNN,
    "ember_sdpa": attention.EMBER_SDPA,
}


def all_kernel_sources() -> dict[str, str]:
    """Render every kernel for every dtype it is used with (no device needed)."""
    out: dict[str, str] = {}
    for name, per_dtype in RAW.items():
        for dt, k in per_dtype.items():
            out[f"{name}[{dt}]" if dt else name] = k.code
    for name, (k, dtype_sets, scalars) in ELEMENTWISE.items():
        for dts in dtype_sets:
            out[f"{name}[{','.join(dts)}]"] = render_elementwise(k, dts, scalars)
    return out


ALL_KERNEL_SOURCES: dict[str, str] = all_kernel_sources()
