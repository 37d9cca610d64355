"""Every kernel of the CUDA backend compiles with NVRTC for Hopper, without a GPU.

Sources come from ``ember_cuda.kernel_sources.ALL_KERNEL_SOURCES`` (raw kernels verbatim,
ElementwiseKernels rendered by CuPy's own code generator, one entry per dtype a kernel is
used with). NVRTC comes from the ``nvidia-cuda-nvrtc-cu12`` wheel; if it cannot be loaded
the tests fail rather than skip, since proving compilation is this file's whole job.
"""

from __future__ import annotations

import types

import cupy
import ember_cuda
import pytest
from ember_cuda import (
    attention,
    elementwise,
    fused,
    indexing,
    optim,
    pool,
    random,
    reduce,
    rnn,
    sort,
    special,
    views,
)
from ember_cuda.kernel_sources import ALL_KERNEL_SOURCES, ELEMENTWISE, RAW
from ember_cuda.nvrtc_check import CUPY_HEADER, compile_source, render_elementwise

KERNEL_MODULES = (
    attention,
    elementwise,
    fused,
    indexing,
    optim,
    pool,
    random,
    reduce,
    rnn,
    sort,
    special,
    views,
)
_KERNEL_TYPES = (cupy.RawKernel, cupy.RawModule, cupy.ElementwiseKernel, cupy.ReductionKernel)


@pytest.mark.parametrize("name", sorted(ALL_KERNEL_SOURCES))
def test_kernel_compiles_for_hopper(name: str) -> None:
    err = compile_source(ALL_KERNEL_SOURCES[name], name)
    assert err is None, f"{name} does not compile:\n{err}"


def test_nvrtc_reports_a_broken_kernel() -> None:
    broken = 'extern "C" __global__ void ember_broken(float *x) { x[0] = undefined_name; }'
    err = compile_source(broken, "ember_broken")
    assert err is not None and "undefined_name" in err


def test_nvrtc_reports_a_broken_elementwise_kernel() -> None:
    k = cupy.ElementwiseKernel("T x", "T y", "y = x +* 1", "ember_broken_ew")
    err = compile_source(render_elementwise(k, ("float32",)), "ember_broken_ew")
    assert err is not None and "error" in err


def test_rendering_binds_dtypes_like_cupy() -> None:
    src = render_elementwise(elementwise.EMBER_CAST_TRUNC, ("float16", "uint8"))
    assert src.startswith(CUPY_HEADER)
    assert "typedef float16 T;" in src and "typedef unsigned char O;" in src
    assert "ember_cast_trunc" in src and "y = (O)(long long)x" in src


def _module_kernels(mod: types.ModuleType) -> set[int]:
    found: set[int] = set()
    for value in vars(mod).values():
        values = value.values() if isinstance(value, dict) else [value]
        found.update(id(v) for v in values if isinstance(v, _KERNEL_TYPES))
    return found


def test_every_module_level_kernel_is_registered() -> None:
    registered = {id(k) for per in RAW.values() for k in per.values()}
    registered |= {id(k) for k, _, _ in ELEMENTWISE.values()}
    for mod in KERNEL_MODULES:
        missing = _module_kernels(mod) - registered
        assert not missing, f"{mod.__name__} has kernels missing from kernel_sources.py"
    assert ember_cuda.__name__ == "ember_cuda"


def test_every_raw_kernel_is_compiled_per_declared_dtype() -> None:
    assert set(RAW["ember_softmax"]) == {"float16", "bfloat16", "float32", "float64"}
    assert set(RAW["ember_rnn"]) == set(RAW["ember_sdpa"]) == {"float32", "float64"}
    assert set(RAW["ember_scatter_segments"]) == {d.name for d in ember_cuda.CUDABackend.dtypes}
    assert len(ALL_KERNEL_SOURCES) >= 80
