"""Fixtures for the OpenCL backend's oracle tests: the CPU backend's kernels are the oracle."""

from __future__ import annotations

import ember.backends as eb
import pytest


def _backend(name: str) -> eb.LoadedBackend:
    try:
        return eb.get(name)
    except eb.BackendError as e:
        pytest.fail(f"backend {name} unavailable: {e}", pytrace=False)


@pytest.fixture(scope="session")
def ocl() -> eb.LoadedBackend:
    return _backend("opencl")


@pytest.fixture(scope="session")
def cpu() -> eb.LoadedBackend:
    return _backend("cpu")
