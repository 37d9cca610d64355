"""Checks of the suite's own coverage and of the backend's declared info (no kernels run)."""

from __future__ import annotations

import pytest
from ember.backends import ALL_DTYPES, ALL_OPS, COMPOSITES, PRIMITIVES, Backend, DType

from .catalog import CASES
from .dtypes import ALL
from .state import State, state_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "composite" in metafunc.fixturenames:
        state_of(metafunc.config)  # a usage error without --ember-backend
        metafunc.parametrize("composite", list(COMPOSITES), ids=list(COMPOSITES))


def test_every_op_has_a_case_record() -> None:
    """Adding an op to ember.backends.ops without a case record fails the suite."""
    missing = sorted(set(ALL_OPS) - set(CASES))
    assert not missing, f"ops without a conformance case record: {missing} (add them to ember_conformance)"
    stray = sorted(set(CASES) - set(ALL_OPS))
    assert not stray, f"case records for ops the contract does not have: {stray}"


def test_case_records_are_well_formed() -> None:
    for op, r in CASES.items():
        assert r.op == op
        assert r.dtypes and set(r.dtypes) <= set(ALL), f"{op}: bad dtypes {r.dtypes}"
        assert r.why, f"{op}: say why these dtypes"
        assert r.grad_order in (0, 1, 2), f"{op}: grad_order {r.grad_order} (0, 1 or 2)"


def test_grad_orders_have_a_frontend_call() -> None:
    """Every kernel with grad_order >= 1 names the frontend op that checks_grad differentiates."""
    from .checks_grad import GRAD_CALLS

    ordered = {op for op, r in CASES.items() if r.grad_order >= 1}
    assert ordered == set(GRAD_CALLS), (
        f"grad_order >= 1 vs checks_grad calls: {sorted(ordered ^ set(GRAD_CALLS))}"
    )


def test_backend_declares_the_protocol(ember_state: State) -> None:
    """The Backend object has the protocol's attributes with the right types."""
    be = ember_state.lb.backend
    assert isinstance(be, Backend), f"{type(be).__name__} lacks attributes of ember.backends.Backend"
    assert isinstance(be.dtypes, frozenset) and be.dtypes, "dtypes must be a non-empty frozenset of DType"
    assert all(isinstance(d, DType) and d in ALL_DTYPES for d in be.dtypes), "dtypes must hold ember DTypes"
    assert isinstance(be.contiguous_only, bool), "contiguous_only must be a bool"
    assert isinstance(be.array_type, type), "array_type must be a class"
    assert be.device_count() >= 1, "an available backend has at least one device"


def test_manifest_fallbacks_are_real(ember_state: State) -> None:
    """A fallback the manifest declares but the backend implements natively (or the frontend
    decomposes) is stale."""
    st = ember_state
    stale = sorted(set(st.manifest.fallbacks) & set(st.lb.native))
    assert not stale, (
        f"manifest {st.manifest.path} declares fallbacks {stale}, but the backend has kernels for them"
    )
    decomposed = sorted(set(st.manifest.fallbacks) & set(st.lb.decomposed_composites()))
    assert not decomposed, (
        f"manifest {st.manifest.path} declares fallbacks {decomposed}, but the frontend decomposes "
        "them into primitives: they run on the device"
    )
    must = sorted(op for op in st.lb.fallbacks() if not PRIMITIVES[op].may_fall_back)
    assert not must, (
        f"no kernel for {must}: view and in-place ops cannot fall back, the backend must implement them"
    )


def test_composite_runs_on_the_device(
    composite: str, ember_state: State, request: pytest.FixtureRequest
) -> None:
    """Each composite runs on the device: the backend's kernel or the frontend's decomposition.
    One with neither runs on the CPU and is copied back: a fallback, refused by certify and
    needing a manifest entry otherwise."""
    st, op = ember_state, composite
    if op not in st.lb.composite_fallbacks():
        how = "kernel" if op in st.lb.native else "decomposition"
        assert how == "kernel" or op in st.lb.decomposed_composites() or st.name == "cpu"
        return
    row = st.row(request.node.nodeid, request.node.name)
    row.update(kind="composite", op=op, status="fallback")
    if st.certify:
        pytest.fail(
            f"{op}: composite with no kernel and no decomposition into primitives (runs on the CPU); "
            "certify mode allows no fallbacks: register a kernel for it",
            pytrace=False,
        )
    if st.manifest.path and op not in st.manifest.fallbacks:
        pytest.fail(
            f"{op}: composite with no kernel and no decomposition (runs on the CPU), and the manifest "
            f"{st.manifest.path} does not declare it in 'fallbacks'; register a kernel or declare it",
            pytrace=False,
        )
