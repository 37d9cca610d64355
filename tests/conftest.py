"""Shared fixtures: in-process backends that exercise the frontend's own code paths.

``cpu_prims`` reuses the CPU backend but registers only the primitive kernels, so every
composite (``index``, ``index_put``, ``nonzero``, ``amin``, ``round``, ...) runs through
the frontend's decomposition instead of the CPU backend's NumPy shortcut.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ember
import pytest
from ember.backends import PRIMITIVES, hookimpl
from ember_cpu.backend import CPUBackend
from ember_cpu.kernels import KERNELS


class _NamedCPU(CPUBackend):
    def __init__(self, name: str) -> None:
        self.name = name


class KernelSubsetPlugin:
    """A plugin offering the CPU backend under ``name`` with only ``ops`` as kernels."""

    def __init__(self, name: str, ops: dict[str, Callable[..., Any]]) -> None:
        self.name = name
        self.ops = ops

    @hookimpl
    def ember_backend(self) -> CPUBackend:
        return _NamedCPU(self.name)

    @hookimpl
    def ember_register_kernels(self, backend: str, register: Callable[..., None]) -> None:
        if backend != self.name:
            return
        for op, fn in self.ops.items():
            register(op, fn)


def _register(name: str, ops: dict[str, Callable[..., Any]]) -> str:
    ember.backends.unregister(name)
    ember.backends.register(name, KernelSubsetPlugin(name, ops))
    return name


@pytest.fixture(scope="session")
def cpu_prims() -> str:
    """Device name of a CPU backend with primitive kernels only (composites decompose)."""
    return _register("cpu_prims", {op: fn for op, fn in KERNELS.items() if op in PRIMITIVES})


@pytest.fixture
def backend_without() -> Callable[[str], str]:
    """Factory: a CPU-like backend lacking one primitive; unregistered after the test."""
    names: list[str] = []

    def make(op: str) -> str:
        name = f"cpu_no_{op}"
        names.append(name)
        return _register(name, {k: fn for k, fn in KERNELS.items() if k in PRIMITIVES and k != op})

    yield make
    for name in names:
        ember.backends.unregister(name)


@pytest.fixture
def fallback_policy() -> Callable[[str], None]:
    """Set the fallback policy for one test, restoring the previous one afterwards."""
    old = ember.backends.get_fallback_policy()
    yield ember.backends.set_fallback_policy
    ember.backends.set_fallback_policy(old)


@pytest.fixture(autouse=True)
def _restore_global_state() -> None:
    dtype = ember.get_default_dtype()
    with warnings.catch_warnings():
        yield
    ember.set_default_dtype(dtype)
