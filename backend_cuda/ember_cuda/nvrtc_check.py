"""Render CuPy-generated kernels to their full CUDA source and compile sources with NVRTC.

Works without a GPU: ElementwiseKernel source comes from CuPy's own code generator
(``cupy._core._kernel._get_elementwise_kernel_code``, private, so this module pins the
CuPy major version it was written for and fails loudly on another), and NVRTC is called
through ``cupy.cuda.nvrtc`` with CuPy's include paths and the options CuPy adds itself.
Only ``arch`` differs: we target Hopper (``compute_90``) without asking a device.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np
from cupy._core import _carray, _kernel, core
from cupy.cuda import nvrtc

__all__ = ["CUPY_HEADER", "compile_source", "compiler_options", "render_elementwise"]

# CuPy prepends these to the kernels it generates (compile_with_cache(prepend_cupy_headers)).
CUPY_HEADER = "".join(f"#include <{h}>\n" for h in core._cupy_header_list)
# _ArgInfo kinds in CuPy 14's _kernel.pyx.
_NDARRAY, _INDEXER, _SCALAR = 1, 2, 3


def compiler_options(arch: str = "compute_90") -> tuple[str, ...]:
    """CuPy's options for a RawKernel/ElementwiseKernel compile, with an explicit arch."""
    own = (f"-arch={arch}", "-ftz=true", "--device-as-default-execution-space")
    return tuple(core.assemble_cupy_compiler_options(own))


def compile_source(source: str, name: str = "kernel.cu", arch: str = "compute_90") -> str | None:
    """Compile ``source`` to PTX with NVRTC; None on success, else NVRTC's error log."""
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(compiler_options(arch)))
        except nvrtc.NVRTCError as e:
            return f"{e}\n{nvrtc.getProgramLog(prog)}"
        nvrtc.getPTX(prog)
        return None
    finally:
        nvrtc.destroyProgram(prog)


def render_elementwise(kernel: Any, dtypes: tuple[str, ...], scalars: frozenset[str] = frozenset()) -> str:
    """The full source CuPy compiles for ``kernel`` with its type letters bound to ``dtypes``.

    Type letters bind in order of first appearance among the parameters; parameters named
    in ``scalars`` are passed as scalars, the rest as 1-d contiguous arrays.
    """
    if cupy.__version__.split(".")[0] != "14":
        raise RuntimeError(f"render_elementwise was written for CuPy 14, found {cupy.__version__}")
    letters: dict[str, np.dtype] = {}
    for p in kernel.in_params + kernel.out_params:
        if p.dtype is None and p.ctype not in letters:
            letters[p.ctype] = np.dtype(_np_name(dtypes[len(letters)]))

    def dt(p: Any) -> np.dtype:
        return p.dtype if p.dtype is not None else letters[p.ctype]

    ins = tuple(dt(p) for p in kernel.in_params)
    outs = tuple(dt(p) for p in kernel.out_params)
    _, _, type_map = _kernel._decide_params_type(kernel.in_params, kernel.out_params, ins, outs)
    infos = []
    for p in kernel.params:
        if p.name == "_ind":
            infos.append(_kernel._ArgInfo(_INDEXER, _carray.Indexer, None, 1, True, True))
        elif p.name in scalars:
            infos.append(_kernel._ArgInfo(_SCALAR, dt(p).type, dt(p), 0, True, True))
        else:
            infos.append(_kernel._ArgInfo(_NDARRAY, cupy.ndarray, dt(p), 1, True, True))
    code = _kernel._get_elementwise_kernel_code(
        tuple(infos), type_map, kernel.params, kernel.operation, kernel.name, kernel.preamble
    )
    return CUPY_HEADER + code


def _np_name(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return "bool" if name == "bool" else name
