"""Index arithmetic shared by every generated kernel that walks strided arrays.

Kernels are compiled per rank, not per shape: shapes and strides are kernel arguments.
Before launching, dimensions of size 1 are dropped and neighbouring dimensions that are
contiguous for every operand are merged, so a contiguous (or uniformly strided) operation
runs as rank 1 and pays no div/mod per element; ``contig`` rank-1 kernels drop even the
stride multiply so the device compiler can vectorise the loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "array_args",
    "array_dtypes",
    "array_params",
    "collapse",
    "index_code",
    "index_type",
    "np_index_type",
    "shape_params",
    "stride_params",
]

_INT_MAX = 2**31 - 1


def collapse(shape: tuple[int, ...], strides: list[tuple[int, ...]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge dims that are contiguous in every stride tuple."""
    keep = [d for d, s in enumerate(shape) if s != 1]
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for d in keep:
        mergeable = bool(out_shape) and all(o[-1] == st[d] * shape[d] for o, st in zip(out_strides, strides))
        if mergeable:
            out_shape[-1] *= shape[d]
            for o, st in zip(out_strides, strides):
                o[-1] = st[d]
        else:
            out_shape.append(shape[d])
            for o, st in zip(out_strides, strides):
                o.append(st[d])
    return out_shape, out_strides


def index_type(n: int, arrays: list[Any]) -> str:
    """'int' when every index fits in 32 bits (much cheaper div/mod on CPUs), else 'long'."""
    big = n > _INT_MAX or any(a.nelem > _INT_MAX for a in arrays)
    return "long" if big else "int"


def index_code(names: list[str], rank: int, contig: bool, it: str, lin: str = "gid", tag: str = "") -> str:
    """C statements computing ``i<tag>_<name>`` (element index into p_<name>) from ``lin``.

    Shapes are the arguments ``sh<tag>_<d>``, strides ``st<tag>_<name>_<d>``; a nonempty
    ``tag`` indexes a second group of dims (the reduced dims of a reduction) from zero.
    """
    base = (lambda v: f"off_{v}") if not tag else (lambda v: "0")
    if rank == 0:
        return "".join(f"    {it} i{tag}_{v} = {base(v)};\n" for v in names)
    if rank == 1:
        step = lin if contig else lin + " * st{tag}_{v}_0"
        return "".join(f"    {it} i{tag}_{v} = {base(v)} + {step.format(v=v, tag=tag)};\n" for v in names)
    r, c = f"ix_r{tag}", f"ix_c{tag}"
    lines = [f"    {it} {r} = {lin}, {c};\n"]
    lines += [f"    {it} i{tag}_{v} = {base(v)};\n" for v in names]
    for d in range(rank - 1, 0, -1):
        lines.append(f"    {c} = {r} % sh{tag}_{d}; {r} /= sh{tag}_{d};\n")
        lines += [f"    i{tag}_{v} += {c} * st{tag}_{v}_{d};\n" for v in names]
    lines += [f"    i{tag}_{v} += {r} * st{tag}_{v}_0;\n" for v in names]
    return "".join(lines)


def array_params(name: str, ctype: str, rank: int, it: str, const: bool = True) -> str:
    q = "const " if const else ""
    st = "".join(f", {it} st_{name}_{d}" for d in range(rank))
    return f"__global {q}{ctype} *p_{name}, {it} off_{name}{st}"


def stride_params(name: str, rank: int, it: str, tag: str) -> str:
    return "".join(f"{it} st{tag}_{name}_{d}, " for d in range(rank))


def shape_params(rank: int, it: str, tag: str = "") -> str:
    return "".join(f"{it} sh{tag}_{d}, " for d in range(rank))


def array_args(arr: Any, strides: list[int]) -> list[Any]:
    """Kernel arguments (buffer, offset, strides) for one operand; see ``array_dtypes``."""
    return [arr.buf, arr.offset, *strides]


def array_dtypes(rank: int, it: str) -> list[Any]:
    """Scalar argument dtypes matching ``array_args`` (None marks the buffer)."""
    np_it = np_index_type(it)
    return [None, np_it] + [np_it] * rank


def np_index_type(it: str) -> Any:
    return np.int32 if it == "int" else np.int64
