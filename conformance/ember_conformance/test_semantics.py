"""Semantics beyond values: aliasing, strided writes, host round trips, Philox, errors,
determinism. Each test is one check of ``checks.py``/``checks_errors.py``, run in the worker."""

from __future__ import annotations

import pytest

from .outcome import check_semantic
from .state import State, state_of

# test function argument -> check group
_GROUPS = {
    "view_case": "views",
    "assign_case": "assign_strided",
    "roundtrip_case": "roundtrip",
    "philox_case": "philox",
    "index_error_case": "index_errors",
    "undeclared_case": "undeclared_dtypes",
    "determinism_case": "determinism",
    "out_case": "writes_out",
    "grad_case": "grad",
    "contiguous_case": "contiguous_inputs",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for arg, group in _GROUPS.items():
        if arg in metafunc.fixturenames:
            ids = state_of(metafunc.config).check_params(group)
            metafunc.parametrize(arg, ids, ids=ids)


def _run(request: pytest.FixtureRequest, st: State, group: str, cid: str) -> None:
    check_semantic(st, request.node.nodeid, request.node.name, group, cid)


def test_view_aliasing(view_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Writes through a view reach the base and writes to the base show in the view."""
    _run(request, ember_state, "views", view_case)


def test_assign_strided(assign_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """``assign`` into transposed, step-sliced and row views writes exactly those elements."""
    _run(request, ember_state, "assign_strided", assign_case)


def test_host_roundtrip(roundtrip_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Host -> device -> host keeps every bit; ``empty`` is C-contiguous on the right device."""
    _run(request, ember_state, "roundtrip", roundtrip_case)


def test_philox(philox_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Random123 known answers and a long stream equal to the CPU backend's."""
    _run(request, ember_state, "philox", philox_case)


def test_index_error(index_error_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Out-of-range and negative gather/scatter indices raise IndexError, never crash."""
    _run(request, ember_state, "index_errors", index_error_case)


def test_undeclared_dtype(undeclared_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """``empty``/``full``/``from_numpy`` raise UnsupportedDTypeError for undeclared dtypes."""
    _run(request, ember_state, "undeclared_dtypes", undeclared_case)


def test_determinism(determinism_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Ops the backend declares nondeterministic raise under set_deterministic(True)."""
    _run(request, ember_state, "determinism", determinism_case)


def test_writes_out(out_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Kernels marked ``writes_out`` fill ``out`` (fresh, aliasing the first operand, strided)
    exactly as they compute without it; a read-only out raises ValueError."""
    _run(request, ember_state, "writes_out", out_case)


def test_gradcheck(grad_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """The frontend op over each kernel with grad_order >= 1 passes gradcheck on the device
    (gradgradcheck too for order 2)."""
    _run(request, ember_state, "grad", grad_case)


def test_contiguous_inputs(contiguous_case: str, ember_state: State, request: pytest.FixtureRequest) -> None:
    """Frontend ops on transposed, step-sliced and expanded tensors match ``cpu``; on a
    ``contiguous_only`` backend no kernel but the views and ``assign`` gets a strided array."""
    _run(request, ember_state, "contiguous_inputs", contiguous_case)
