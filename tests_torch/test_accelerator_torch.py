"""``ember.accelerator`` against ``torch.accelerator`` on a machine without an accelerator.

PyTorch's CPU build has none; ember is made to see none (``registry.accelerators`` returns
nothing), so every call must return what PyTorch returns or raise its exception type with its
words ("torch" read as "ember"). The API's shape is compared too: names and signatures.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import ember
import ember.accelerator as eacc
import pytest
from ember.backends import registry

torch = pytest.importorskip("torch")
tacc = torch.accelerator

# In torch.accelerator and not (yet) in ember: CUDA-graph capture.
MISSING = {"Graph"}
# Calls made in both worlds: ``a`` is the accelerator module, ``m`` the top-level module.
CASES = [
    "a.current_accelerator()",
    "a.current_accelerator(True)",
    "a.current_accelerator(check_available=True)",
    "a.device_count()",
    "a.is_available()",
    "a.current_device_index()",
    "a.current_device_idx()",
    "a.set_device_index(0)",
    "a.set_device_index(-1)",
    "a.set_device_index('cpu')",
    "a.set_device_index('cpu:0')",
    "a.set_device_index(None)",
    "a.set_device_index(1.5)",
    "a.set_device_idx(0)",
    "a.synchronize()",
    "a.synchronize(0)",
    "a.synchronize('cpu')",
    "a.current_stream()",
    "a.current_stream(0)",
    "a.current_stream('cpu')",
    "a.set_stream(a.current_stream())",
    "a.get_device_capability()",
    "a.get_device_capability('cpu')",
    "a.memory_stats()",
    "a.memory_allocated()",
    "a.memory_allocated('cpu')",
    "a.memory_allocated(0)",
    "a.max_memory_allocated()",
    "a.memory_reserved()",
    "a.max_memory_reserved()",
    "a.reset_peak_memory_stats()",
    "a.reset_accumulated_memory_stats()",
    "a.empty_cache()",
    "a.empty_host_cache()",
    "a.get_memory_info()",
    "a.memory.memory_allocated()",
    "a.device_index(None).__enter__()",
    "a.device_index(0).__enter__()",
    "a.device_index(-1).__enter__()",
    "repr(S())",
    "repr(S('cpu'))",
    "repr(S(priority=-1))",
    # (device_type: PyTorch's is its C++ enum's int, ember's the backend's name; see below)
    "(S().query(), S().synchronize(), S().stream_id, S().device_index, str(S().device))",
    "S() == S()",
    "S().is_capturing()",
    "S().native_handle",
    "S().record_event()",
    "S().wait_stream(S())",
    "S().wait_event(E())",
    "a.set_stream(S())",
    "repr(E())",
    "repr(E(enable_timing=True))",
    "(E().query(), E().synchronize(), E().wait(), E().event_id, str(E().device))",
    "E().record()",
    "E().record(S())",
    "E().elapsed_time(E())",
    "E(enable_timing=True).elapsed_time(E(enable_timing=True))",
]


def _outcome(case: str, a: Any, s: Any, e: Any) -> tuple[str, Any, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            value = eval(case, {"a": a, "S": s, "E": e})
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return type(exc).__name__, str(exc), [str(w.message) for w in seen]
    return "ok", value, [f"{w.category.__name__}: {w.message}" for w in seen]


def _as_ember(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(_as_ember(v) for v in x)
    if isinstance(x, str):
        return x.replace("a torch.device", "an ember.device").replace("torch.", "ember.")
    if isinstance(x, torch.device):
        return ember.device(x.type, x.index)
    return x


@pytest.fixture
def no_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBER_ACCELERATOR", raising=False)
    monkeypatch.setattr(registry, "accelerators", list)


@pytest.mark.usefixtures("no_accelerator")
@pytest.mark.parametrize("case", CASES)
def test_same_outcome_without_accelerator(case: str) -> None:
    assert tacc.current_accelerator() is None, "this differential run needs PyTorch's CPU build"
    kind, value, warned = _outcome(case, tacc, torch.Stream, torch.Event)
    ours = _outcome(case, eacc, eacc.Stream, eacc.Event)
    if kind == "TypeError":  # pybind's wording names its C++ signature: the type is the contract
        assert ours[0] == "TypeError"
        return
    assert ours == (kind, _as_ember(value), warned)


@pytest.mark.usefixtures("no_accelerator")
def test_stream_device_type_is_a_name() -> None:
    """A known difference: ember's device types are names (no C++ enum behind them)."""
    assert torch.Stream().device_type == 0 and eacc.Stream().device_type == "cpu"


@pytest.mark.usefixtures("no_accelerator")
def test_device_index_context_rejects_a_non_int() -> None:
    with pytest.raises(TypeError), tacc.device_index("x"):  # type: ignore[arg-type]
        pass
    with pytest.raises(TypeError), eacc.device_index("x"):  # type: ignore[arg-type]
        pass


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_names_and_signatures() -> None:
    assert set(tacc.__all__) - MISSING <= set(eacc.__all__)
    assert set(tacc.memory.__all__) == set(eacc.memory.__all__)
    for name in sorted(set(tacc.__all__) - MISSING):
        theirs, ours = getattr(tacc, name), getattr(eacc, name)
        assert _params(ours) == _params(theirs), name
    for name in tacc.memory.__all__:
        assert _params(getattr(eacc.memory, name)) == _params(getattr(tacc.memory, name)), name
    for cls in ("Stream", "Event"):
        theirs = {n for n in dir(getattr(torch, cls)) if not n.startswith("_")}
        ours = {n for n in dir(getattr(eacc, cls)) if not n.startswith("_")}
        # interprocess events (ipc_handle, from_ipc_handle) are CUDA-only and not in ember
        assert theirs - ours <= {"ipc_handle", "from_ipc_handle"}, cls
