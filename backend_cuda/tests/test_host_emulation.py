"""The raw kernels' logic, compiled for the host with g++, against the CPU backend.

NVRTC proves the kernels compile; this proves what they compute, without a GPU: each
CUDA source is built as C++ with a small shim (``blockIdx``/``threadIdx`` as globals,
``__umulhi``, ``__int_as_float``) and a driver loop that runs every thread in turn, then
compared with the CPU backend (Philox words bit for bit, pooling against the conformance
suite's loop references, softmax and the deterministic scatter against NumPy). Block-wide
cooperation (softmax's shared-memory tree) runs with one thread per block here, so only
test_gpu.py covers it.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ember_cpu.philox import philox as cpu_philox
from ember_cuda.dtypes import CUDA_HEADERS
from ember_cuda.fused import EMBER_SOFTMAX_SRC
from ember_cuda.indexing import EMBER_SCATTER_SEGMENTS_SRC, HEADERS
from ember_cuda.pool import EMBER_POOL2D_SRC, _out_size
from ember_cuda.random import EMBER_PHILOX_SRC

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no host C++ compiler (g++)")

SHIM = r"""
#include <cmath>
#include <cstring>
#include <algorithm>
using std::min; using std::max; using std::exp; using std::log;
struct ember_dim3 { unsigned int x, y, z; };
static ember_dim3 blockIdx, blockDim, threadIdx;
#define __global__
#define __device__
#define __shared__ static
static inline void __syncthreads() {}
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
static inline float __int_as_float(unsigned int i) { float f; std::memcpy(&f, &i, 4); return f; }
#define EMBER_EACH_THREAD(n, call) \
    blockDim.x = 1; for (long long _t = 0; _t < (n); _t++) { blockIdx.x = (unsigned)_t; threadIdx.x = 0; call; }
"""


_BUILT: dict[str, ctypes.CDLL] = {}


def _build(tmp_path: Path, name: str, source: str) -> ctypes.CDLL:
    if source in _BUILT:  # one build per source per session
        return _BUILT[source]
    src = tmp_path / f"{name}.cpp"
    src.write_text(SHIM + source.replace(HEADERS, "").replace(CUDA_HEADERS, ""))
    lib = tmp_path / f"lib{name}.so"
    proc = subprocess.run(
        ["g++", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    _BUILT[source] = ctypes.CDLL(str(lib))
    return _BUILT[source]


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


PHILOX_DRIVER = r"""
extern "C" void run(long long *out, long long n, long long nb, unsigned k0, unsigned k1,
                    unsigned long long lo, unsigned long long hi) {
    EMBER_EACH_THREAD(nb, ember_philox(out, n, nb, k0, k1, lo, hi))
}
"""


@pytest.mark.parametrize(
    ("n", "key", "counter"),
    [
        (4, (0, 0), (0, 0, 0, 0)),
        (4, (0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF,) * 4),
        (1001, (12345, 678), (0xFFFFFFF0, 0xFFFFFFFF, 7, 0)),  # carries into the high 64 bits
    ],
)
def test_philox_words_match_the_cpu_backend(tmp_path: Path, n: int, key: tuple, counter: tuple) -> None:
    lib = _build(tmp_path, "philox", EMBER_PHILOX_SRC + PHILOX_DRIVER)
    out = np.empty(n, np.int64)
    nb = (n + 3) // 4
    lo = counter[0] | (counter[1] << 32)
    hi = counter[2] | (counter[3] << 32)
    args = [ctypes.c_longlong(n), ctypes.c_longlong(nb), ctypes.c_uint(key[0]), ctypes.c_uint(key[1])]
    lib.run(_ptr(out), *args, ctypes.c_ulonglong(lo), ctypes.c_ulonglong(hi))
    np.testing.assert_array_equal(out, cpu_philox(n, key, counter, 0))
    if key == (0, 0) and counter == (0, 0, 0, 0):  # Random123's known answer
        assert [hex(int(w)) for w in out] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]


POOL_DRIVER = r"""
extern "C" void run_max(const T *x, T *y, long long *idx, long long total, int H, int W, int OH, int OW,
                        int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw) {
    EMBER_EACH_THREAD(total, ember_max_pool2d(x, y, idx, total, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw))
}
extern "C" void run_avg(const T *x, T *y, long long total, int H, int W, int OH, int OW,
                        int kh, int kw, int sh, int sw, int ph, int pw, int cip) {
    EMBER_EACH_THREAD(total, ember_avg_pool2d(x, y, total, H, W, OH, OW, kh, kw, sh, sw, ph, pw, cip))
}
"""

POOL_CASES = [
    ((2, 3, 4, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 5, 5), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 1, 5, 7), (2, 3), (2, 2), (0, 1), (1, 1), True),
    ((1, 2, 7, 7), (2, 2), (1, 2), (1, 0), (2, 2), False),
]


def _pool_ref():  # type: ignore[no-untyped-def]
    from ember_conformance import cases_nn

    return cases_nn._max_pool2d, cases_nn._avg_pool2d


@pytest.mark.parametrize("case", POOL_CASES)
def test_pooling_matches_the_conformance_reference(tmp_path: Path, case: tuple) -> None:
    pytest.importorskip("ember_conformance")
    ref_max, ref_avg = _pool_ref()
    shape, k, s, p, d, ceil = case
    lib = _build(tmp_path, "pool", EMBER_POOL2D_SRC.substitute(T="double", A="double") + POOL_DRIVER)
    x = np.random.default_rng(0).standard_normal(shape)
    x.reshape(-1)[3] = np.nan
    oh = _out_size(shape[2], k[0], s[0], p[0], d[0], ceil)
    ow = _out_size(shape[3], k[1], s[1], p[1], d[1], ceil)
    y = np.empty(shape[:2] + (oh, ow))
    idx = np.empty(y.shape, np.int64)
    ints = [ctypes.c_int(v) for v in (shape[2], shape[3], oh, ow, *k, *s, *p)]
    lib.run_max(
        _ptr(x), _ptr(y), _ptr(idx), ctypes.c_longlong(y.size), *ints, ctypes.c_int(d[0]), ctypes.c_int(d[1])
    )
    rv, ri = ref_max(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(y, rv)
    np.testing.assert_array_equal(idx, ri)
    if d == (1, 1):
        for cip in (False, True):
            lib.run_avg(_ptr(x), _ptr(y), ctypes.c_longlong(y.size), *ints, ctypes.c_int(cip))
            np.testing.assert_allclose(y, ref_avg(x, k, s, p, ceil, cip), rtol=1e-12, equal_nan=True)


SOFTMAX_DRIVER = r"""
extern "C" void run(const T *x, T *y, long long rows, long long n, int log_out) {
    EMBER_EACH_THREAD(rows, ember_softmax(x, y, n, log_out))
}
"""


@pytest.mark.parametrize("log_out", [False, True])
def test_softmax_rows_match_numpy(tmp_path: Path, log_out: bool) -> None:
    lib = _build(tmp_path, "softmax", EMBER_SOFTMAX_SRC.substitute(T="float", A="float") + SOFTMAX_DRIVER)
    x = (np.random.default_rng(1).standard_normal((5, 33)) * 10).astype(np.float32)
    x[2, 4] = np.nan
    x[3] = -np.inf
    y = np.empty_like(x)
    lib.run(_ptr(x), _ptr(y), ctypes.c_longlong(5), ctypes.c_longlong(33), ctypes.c_int(log_out))
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        z = xd - xd.max(axis=1, keepdims=True)
        ref = (
            z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            if log_out
            else np.exp(z) / np.exp(z).sum(1)[:, None]
        )
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-6, equal_nan=True)


SEGMENTS_DRIVER = r"""
typedef float T;
extern "C" void run(T *out, const long long *lin, const T *val, const long long *starts, long long nseg,
                    long long n, int add) {
    EMBER_EACH_THREAD(nseg, ember_scatter_segments(out, lin, val, starts, nseg, n, add))
}
"""


@pytest.mark.parametrize("add", [False, True])
def test_deterministic_scatter_matches_numpy(tmp_path: Path, add: bool) -> None:
    lib = _build(tmp_path, "segments", EMBER_SCATTER_SEGMENTS_SRC.substitute(T="float") + SEGMENTS_DRIVER)
    rng = np.random.default_rng(2)
    out = rng.standard_normal(7).astype(np.float32)
    lin = rng.integers(0, 7, 50).astype(np.int64)
    val = rng.standard_normal(50).astype(np.float32)
    ref = out.copy()
    if add:
        np.add.at(ref, lin, val)
    else:
        ref[lin] = val  # NumPy: the last write wins, as in the kernel
    order = np.argsort(lin, kind="stable")
    slin, sval = lin[order].copy(), val[order].copy()
    starts = np.flatnonzero(np.r_[True, slin[1:] != slin[:-1]]).astype(np.int64)
    args = [ctypes.c_longlong(starts.size), ctypes.c_longlong(50), ctypes.c_int(add)]
    lib.run(_ptr(out), _ptr(slin), _ptr(sval), _ptr(starts), *args)
    np.testing.assert_array_equal(out, ref)
