"""Autocast and GradScaler on the backend's device (``checks_autocast.py``), through the
frontend in the pytest process. A backend declaring a lower dtype runs every check in it
(bfloat16 first); for each lower dtype it does not declare, autocast must warn and disable."""

from __future__ import annotations

import importlib

import pytest

from .checks_autocast import CHECKS, check_unsupported_disables, low_dtype
from .state import State, state_of
from .test_frontend import _dev, _ember


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "autocast_case" not in metafunc.fixturenames:
        return
    st = state_of(metafunc.config)
    declared = {d.name for d in st.lb.backend.dtypes}
    cases = sorted(CHECKS) if low_dtype([d for d in st.dtypes if d in declared]) else []
    cases += [f"disables-{d}" for d in ("bfloat16", "float16") if d not in declared]
    metafunc.parametrize("autocast_case", cases)


def test_autocast(ember_state: State, autocast_case: str) -> None:
    ember = _ember("tensor")
    importlib.import_module("ember.amp")  # the checks reach it as ember.amp

    dev = _dev(ember_state)
    if autocast_case.startswith("disables-"):
        check_unsupported_disables(ember, dev, autocast_case.removeprefix("disables-"))
    else:
        CHECKS[autocast_case](ember, dev, low_dtype(ember_state.dtypes))
