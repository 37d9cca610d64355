"""Batched matmul (..., n, k) @ (..., k, m) as a tiled local-memory kernel.

A work group of 8x8 work items computes a 64x64 output tile: it stages a 64x16 tile of
``a`` (transposed) and a 16x64 tile of ``b`` in local memory, then each work item
accumulates an 8-row x 8-column block with 8-wide vector multiply-adds (one vector of
``b`` times a broadcast element of ``a``), the shape CPU devices (PoCL) and GPUs both run
well. Inputs may be any strided views; integers accumulate in wrapping unsigned vectors
(the low bits, hence the result, equal NumPy's), bool as a count tested against zero.
CPU devices run the packed one-work-item kernel instead (``EMBER_MATMUL_PACKED_SRC``).
Every path adds each output's products in k order (floats: one ``fma`` each), so
a product's bits do not depend on its operands' layouts (tests/test_kernel_paths.py).
"""

from __future__ import annotations

from string import Template

from ember.backends import DType

from . import runtime
from .clarray import CLArray, contiguous_strides, empty
from .dtypes import ctype, kind
from .elementwise import store_expr
from .strided import collapse, index_code, index_type, np_index_type, shape_params

__all__ = ["matmul"]

EMBER_MATMUL_SRC = Template("""
#define BM 64
#define BN 64
#define BK 16
#define RM 8

__kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void ember_matmul(__global ${OT} *p_out, ${IT} off_out, ${ost}
                  __global const ${T} *p_a, ${IT} off_a, ${IT} sa_n, ${IT} sa_k, ${ast}
                  __global const ${T} *p_b, ${IT} off_b, ${IT} sb_k, ${IT} sb_m, ${bst}
                  ${bsh}${IT} n, ${IT} k, ${IT} m)
{
    __local ${ACC} As[BK][BM];
    __local ${ACC} Bs[BK][BN];
    int tx = get_local_id(0), ty = get_local_id(1), lid = ty * 8 + tx;
    ${IT} col0 = (${IT})get_group_id(0) * BN, row0 = (${IT})get_group_id(1) * BM;
    ${IT} gid = (${IT})get_global_id(2);
${batch}    ${ACC}8 acc[RM];
    for (int r = 0; r < RM; r++) acc[r] = (${ACC}8)(0);
    for (${IT} k0 = 0; k0 < k; k0 += BK) {
        for (int e = lid; e < BM * BK; e += 64) {
            int r = e / BK, kk = e % BK;
            ${IT} gr = row0 + r, gk = k0 + kk;
            As[kk][r] = (gr < n && gk < k) ? (${ACC})p_a[i_a + gr * sa_n + gk * sa_k] : (${ACC})0;
        }
        for (int e = lid; e < BK * BN; e += 64) {
            int kk = e / BN, c = e % BN;
            ${IT} gk = k0 + kk, gc = col0 + c;
            Bs[kk][c] = (gk < k && gc < m) ? (${ACC})p_b[i_b + gk * sb_k + gc * sb_m] : (${ACC})0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < BK; kk++) {
            ${ACC}8 bv = vload8(0, &Bs[kk][tx * 8]);
            for (int r = 0; r < RM; r++) acc[r] = ${MAD};
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int r = 0; r < RM; r++) {
        ${IT} gr = row0 + ty * RM + r;
        if (gr >= n) break;
        ${ACC} vals[8];
        vstore8(acc[r], 0, vals);
        for (int c = 0; c < 8; c++) {
            ${IT} gc = col0 + tx * 8 + c;
            if (gc < m) p_out[i_out + gr * m + gc] = ${store};
        }
    }
}
""")

# CPU devices: one work item per group computes a 64x64 tile like a BLAS micro-kernel:
# it packs a 64x128 panel of ``a`` and a 128x64 panel of ``b`` into local memory (only
# the rows, columns and k that exist) and keeps an RM x (2 VW) block of the tile in vector
# registers over the whole panel (``_block``); the last panel's full blocks are stored
# straight to the output. On PoCL this is ~8x faster than the 8x8 work-group kernel, whose
# per-work-item state must be spilled at every barrier.
EMBER_MATMUL_PACKED_SRC = Template("""
#define BM 64
#define BN 64
#define BK 128
#define RM ${RM}

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void ember_matmul(__global ${OT} *p_out, ${IT} off_out, ${ost}
                  __global const ${T} *p_a, ${IT} off_a, ${IT} sa_n, ${IT} sa_k, ${ast}
                  __global const ${T} *p_b, ${IT} off_b, ${IT} sb_k, ${IT} sb_m, ${bst}
                  ${bsh}${IT} n, ${IT} k, ${IT} m)
{
    __local ${ACC} As[BK * BM];
    __local ${ACC} Bs[BK][BN];
    __local ${ACC} Cs[BM][BN];
    ${IT} col0 = (${IT})get_group_id(0) * BN, row0 = (${IT})get_group_id(1) * BM;
    ${IT} gid = (${IT})get_global_id(2);
${batch}    int nr = (int)min((${IT})BM, n - row0), nc = (int)min((${IT})BN, m - col0);
    /* only the rows and columns of the tile that exist, rounded up to the register block */
    int nrr = (nr + RM - 1) / RM * RM, ncc = (nc + 2 * ${VW} - 1) / (2 * ${VW}) * (2 * ${VW});
    /* a's panel is kept row by row when its rows are contiguous, else column by column, so
       packing it is a plain copy either way (a transposing copy cost more than the products) */
    int a_rows = sa_k == 1 && sa_n != 1;
    int ask = a_rows ? 1 : BM, asr = a_rows ? BK : 1;
    /* the last panel's full rows go straight to the output when it holds the accumulator type */
    __global ${OT} *po = p_out + i_out + row0 * m + col0;
    if (k == 0)
        for (int r = 0; r < nr; r++)
            for (int c = 0; c < nc; c++) Cs[r][c] = 0;
    for (${IT} k0 = 0; k0 < k; k0 += BK) {
        int kc = (int)min((${IT})BK, k - k0), first = k0 == 0, direct = ${DIRECT} && k0 + kc == k;
        __global const ${T} *pa = p_a + i_a + row0 * sa_n + k0 * sa_k;
        __global const ${T} *pb = p_b + i_b + k0 * sb_k + col0 * sb_m;
        if (a_rows) {
            for (int r = 0; r < nr; r++)
                for (int kk = 0; kk < kc; kk++) As[r * BK + kk] = (${ACC})pa[r * sa_n + kk];
            for (int r = nr; r < nrr; r++)
                for (int kk = 0; kk < kc; kk++) As[r * BK + kk] = 0;
        } else {
            for (int kk = 0; kk < kc; kk++) {
                for (int r = 0; r < nr; r++) As[kk * BM + r] = (${ACC})pa[r * sa_n + kk * sa_k];
                for (int r = nr; r < nrr; r++) As[kk * BM + r] = 0;
            }
        }
        if (sb_k == 1 && sb_m != 1) {  /* a transposed b: read along its columns */
            for (int c = 0; c < nc; c++)
                for (int kk = 0; kk < kc; kk++) Bs[kk][c] = (${ACC})pb[kk + c * sb_m];
        } else {
            for (int kk = 0; kk < kc; kk++)
                for (int c = 0; c < nc; c++) Bs[kk][c] = (${ACC})pb[kk * sb_k + c * sb_m];
        }
        for (int kk = 0; kk < kc; kk++)
            for (int c = nc; c < ncc; c++) Bs[kk][c] = 0;
        for (int rb = 0; rb < nrr; rb += RM) {
            for (int cb = 0; cb < ncc; cb += 2 * ${VW}) {
                ${ACC}${VW} acc0[RM], acc1[RM];
                #pragma unroll
                for (int r = 0; r < RM; r++) {
                    acc0[r] = first ? (${ACC}${VW})(0) : vload${VW}(0, &Cs[rb + r][cb]);
                    acc1[r] = first ? (${ACC}${VW})(0) : vload${VW}(1, &Cs[rb + r][cb]);
                }
                for (int kk = 0; kk < kc; kk++) {
                    ${ACC}${VW} b0 = vload${VW}(0, &Bs[kk][cb]), b1 = vload${VW}(1, &Bs[kk][cb]);
                    #pragma unroll
                    for (int r = 0; r < RM; r++) {
                        ${ACC}${VW} av = (${ACC}${VW})(As[kk * ask + (rb + r) * asr]);
                        acc0[r] = ${MAD0};
                        acc1[r] = ${MAD1};
                    }
                }
                if (direct && cb + 2 * ${VW} <= nc) {
                    for (int r = 0; r < RM && rb + r < nr; r++) {
                        vstore${VW}(acc0[r], 0, po + (rb + r) * m + cb);
                        vstore${VW}(acc1[r], 1, po + (rb + r) * m + cb);
                    }
                } else {
                    #pragma unroll
                    for (int r = 0; r < RM; r++) {
                        vstore${VW}(acc0[r], 0, &Cs[rb + r][cb]);
                        vstore${VW}(acc1[r], 1, &Cs[rb + r][cb]);
                    }
                }
            }
        }
    }
    /* what did not go straight out: all of it, or the last panel's partial column blocks */
    int c0 = ${DIRECT} && k > 0 ? nc / (2 * ${VW}) * (2 * ${VW}) : 0;
    for (int r = 0; r < nr; r++)
        for (int c = c0; c < nc; c++) po[r * m + c] = ${store};
}
""")

_TILE = 64


def _mad(dt: DType, acc: str, b: str, a: str) -> str:
    return f"fma({a}, {b}, {acc})" if kind(dt) == "f" else f"{acc} + {a} * {b}"


def _acc(dt: DType) -> str:
    if kind(dt) == "f":
        return ctype(dt)
    return "ulong" if dt.itemsize == 8 else "uint"


def _block(dev: runtime.Device, dt: DType) -> tuple[int, int]:
    """(rows RM, vector width VW) of the packed kernel's register block: 8 x 32 in 16-wide
    vectors (16 of AVX-512's 32 registers) where the CPU has them for 4-byte accumulators,
    about twice the 4 x 16 block's speed on the CNN step's matmuls (PoCL, Xeon); else 4 x 16
    in 8-wide vectors (AVX2 has 16 registers)."""
    wide = _acc(dt) not in ("ulong", "double") and dev.vector_width >= 16
    return (8, 16) if wide else (4, 8)


def _packed(dev: runtime.Device, dt: DType) -> bool:
    """Whether the one-work-item packed kernel suits ``dev`` (a CPU with room for it)."""
    need = (128 * 64 * 2 + 64 * 64) * (8 if _acc(dt) in ("ulong", "double") else 4)
    return dev.is_cpu and dev.local_mem >= need


def matmul(a: CLArray, b: CLArray) -> CLArray:
    n, kd, m = a.shape[-2], a.shape[-1], b.shape[-1]
    bshape = a.shape[:-2]
    out = empty(a.dev, bshape + (n, m), a.dtype)
    if out.size == 0:
        return out
    batch = out.size // (n * m)
    ost = contiguous_strides(out.shape)[:-2]
    shape, (sa, sb, so) = collapse(bshape, [a.strides[:-2], b.strides[:-2], ost])
    rank, it = len(shape), index_type(out.size + _TILE * max(n, m, kd), [a, b, out])
    packed = _packed(a.dev, a.dtype)
    block = _block(a.dev, a.dtype) if packed else (4, 8)
    key = ("matmul", a.dtype.name, rank, it, packed, block)
    knl = runtime.kernel(a.dev, key, lambda: _source(a.dtype, rank, it, packed, block))
    args = [out.buf, 0, *so, a.buf, a.offset, a.strides[-2], a.strides[-1], *sa]
    args += [b.buf, b.offset, b.strides[-2], b.strides[-1], *sb, *shape, n, kd, m]
    groups = (-(-m // _TILE), -(-n // _TILE), batch)
    local = (1, 1, 1) if packed else (8, 8, 1)
    runtime.launch_nd(a.dev, knl, tuple(g * w for g, w in zip(groups, local)), local, args)
    return out


def _source(
    dt: DType, rank: int, it: str, packed: bool, block: tuple[int, int] = (4, 8)
) -> runtime.KernelSpec:
    def strides(v: str) -> str:
        return "".join(f"{it} st_{v}_{d}, " for d in range(rank))

    acc = _acc(dt)
    template = EMBER_MATMUL_PACKED_SRC if packed else EMBER_MATMUL_SRC
    src = template.substitute(
        OT=ctype(dt),
        T=ctype(dt),
        IT=it,
        ACC=acc,
        RM=block[0],
        DIRECT=int(packed and acc == ctype(dt)),
        VW=block[1],
        MAD=_mad(dt, "acc[r]", "bv", f"(({acc}8)(As[kk][ty * RM + r]))"),
        MAD0=_mad(dt, "acc0[r]", "b0", "av"),
        MAD1=_mad(dt, "acc1[r]", "b1", "av"),
        ost=strides("out"),
        ast=strides("a"),
        bst=strides("b"),
        bsh=shape_params(rank, it),
        batch=index_code(["a", "b", "out"], rank, False, it),
        store=store_expr(dt, "Cs[r][c]" if packed else "vals[c]"),
    )
    t = np_index_type(it)
    dtypes = [None, t] + [t] * rank + [None, t, t, t] + [t] * rank + [None, t, t, t] + [t] * rank
    dtypes += [t] * (rank + 3)
    return src, "ember_matmul", dtypes
