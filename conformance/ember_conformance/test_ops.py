"""One test per (op, dtype) cell: every case record's samples, run in the worker."""

from __future__ import annotations

import pytest

from .outcome import check_op
from .state import State, state_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "op_dtype" in metafunc.fixturenames:
        params = state_of(metafunc.config).op_params()
        metafunc.parametrize("op_dtype", params, ids=[f"{op}-{d}" for op, d in params])


def test_op(op_dtype: tuple[str, str], ember_state: State, request: pytest.FixtureRequest) -> None:
    op, dtype = op_dtype
    check_op(ember_state, request.node.nodeid, request.node.name, op, dtype)
