"""A stand-in for ``cupy`` (host memory, one rank) so the NCCL engine's Python runs here: its
buffer staging, dtype table, grouped send/recv and event-polled completion. The NCCL calls are
memcpys between the pointers they get, which is what NCCL does at world size 1."""

from __future__ import annotations

import ctypes
import sys
import types
from typing import ClassVar

import numpy as np


class ndarray(np.ndarray):
    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)

    def get(self, stream=None, out=None):
        np.copyto(out, np.asarray(self))
        return out


_SIZES = {0: 1, 1: 1, 2: 4, 4: 8, 6: 2, 7: 4, 8: 8}  # NCCL's datatype codes -> bytes


class _Comm:
    calls: ClassVar[list[str]] = []

    def __init__(self, ndev, uid, rank):
        assert (ndev, rank) == (1, 0) and len(uid) == 128
        self.grouped: list | None = None
        self.destroyed = False

    def _copy(self, dst, src, n, t):
        if dst != src:
            ctypes.memmove(dst, src, n * _SIZES[t])

    def allReduce(self, s, r, n, t, op, stream):
        self.calls.append("allReduce")
        self._copy(r, s, n, t)

    def reduce(self, s, r, n, t, op, root, stream):
        self.calls.append("reduce")
        self._copy(r, s, n, t)

    def broadcast(self, s, r, n, t, root, stream):
        self.calls.append("broadcast")
        self._copy(r, s, n, t)

    def allGather(self, s, r, n, t, stream):
        self.calls.append("allGather")
        self._copy(r, s, n, t)

    def reduceScatter(self, s, r, n, t, op, stream):
        self.calls.append("reduceScatter")
        self._copy(r, s, n, t)

    def send(self, p, n, t, peer, stream):
        _group.append(("send", p, n, t))

    def recv(self, p, n, t, peer, stream):
        _group.append(("recv", p, n, t))

    def check_async_error(self):
        pass

    def destroy(self):
        self.destroyed = True


_group: list = []


def _group_end():
    sends = [g for g in _group if g[0] == "send"]
    recvs = [g for g in _group if g[0] == "recv"]
    for (_, s, n, t), (_, r, _, _) in zip(sends, recvs):
        ctypes.memmove(r, s, n * _SIZES[t])
    _group.clear()


class _Event:
    def __init__(self, disable_timing=False):
        self.done = False

    def record(self, stream=None):
        self.done = True  # everything here ran synchronously
        return self


class _Stream:
    ptr = 0

    def __init__(self, non_blocking=False):
        self.waited = 0

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def wait_event(self, event):
        self.waited += 1


def install(monkeypatch) -> types.ModuleType:
    """Put the fake ``cupy``, ``cupy.cuda`` and ``cupy.cuda.nccl`` in ``sys.modules``."""
    cupy = types.ModuleType("cupy")
    cuda = types.ModuleType("cupy.cuda")
    nccl = types.ModuleType("cupy.cuda.nccl")
    codes = {"INT8": 0, "UINT8": 1, "INT32": 2, "INT64": 4, "FLOAT16": 6, "FLOAT32": 7, "FLOAT64": 8}
    codes |= {"SUM": 0, "PROD": 1, "MAX": 2, "MIN": 3}
    for k, v in codes.items():
        setattr(nccl, f"NCCL_{k}", v)
    nccl.get_unique_id = lambda: tuple(range(128))
    nccl.NcclCommunicator = _Comm
    nccl.NcclError = RuntimeError
    nccl.groupStart = lambda: None
    nccl.groupEnd = _group_end
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1, CUDARuntimeError=RuntimeError)
    current = _Stream()
    cuda.runtime = runtime
    cuda.Device = lambda i: types.SimpleNamespace(use=lambda: None)
    cuda.Stream = _Stream
    cuda.Event = _Event
    cuda.get_current_stream = lambda: types.SimpleNamespace(record=lambda: _Event().record())
    cuda.nccl = nccl
    cupy.cuda = cuda
    cupy.ndarray = ndarray
    cupy.float32 = np.float32
    cupy.asarray = lambda a: np.array(a, copy=True).view(ndarray)
    cupy.zeros = lambda n, dtype: np.zeros(n, dtype).view(ndarray)
    cupy._current = current
    for name, mod in (("cupy", cupy), ("cupy.cuda", cuda), ("cupy.cuda.nccl", nccl)):
        monkeypatch.setitem(sys.modules, name, mod)
    _Comm.calls = []
    return cupy
