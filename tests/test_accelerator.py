"""``ember.accelerator``: which backend it is, device indices, streams, events, memory statistics.

The backends here are fakes registered in-process (the CPU backend under another name, with the
optional accelerator methods recording their calls), standing in for CUDA, whose real code
needs a GPU. The ``EMBER_ACCELERATOR`` tests run in subprocesses with the minimal example
backend (``examples/minimal_backend``) on the path, registered in-process where not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ember
import ember.accelerator as acc
import pytest
from ember.backends import hookimpl, registry
from ember_cpu.backend import CPUBackend
from ember_cpu.kernels import KERNELS

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "minimal_backend"


class FakeHandle:
    """A stream or event handle that logs what the frontend asks of it."""

    def __init__(self, log: list[Any], id: int, native: Any = None) -> None:
        self.log, self.id, self.native, self.done = log, id, native, True

    def query(self) -> bool:
        self.log.append(("query", self.id))
        return self.done

    def synchronize(self) -> None:
        self.log.append(("synchronize", self.id))

    def wait_event(self, event: FakeHandle) -> None:
        self.log.append(("wait_event", self.id, event.id))

    def record(self, stream: FakeHandle) -> None:
        self.log.append(("record", self.id, stream.id))

    def elapsed_time(self, end: FakeHandle) -> float:
        return 1.5 * (end.id - self.id)


class FakeBackend(CPUBackend):
    """The CPU backend as a two-device accelerator with streams and memory statistics, shaped
    as the CUDA backend's (``backend_cuda/ember_cuda/backend.py``)."""

    def __init__(self, name: str, **attrs: Any) -> None:
        self.name = name
        self.log: list[Any] = []
        self.ids = iter(range(100, 10**6))
        self.current = {0: FakeHandle(self.log, 0), 1: FakeHandle(self.log, 0)}
        self.stats = {
            0: {"allocated_bytes.all.current": 64, "allocated_bytes.all.peak": 96, "segment.all.current": 1}
        }
        for k, v in attrs.items():
            setattr(self, k, v)

    def device_count(self) -> int:
        return 2

    def synchronize(self, index: int) -> None:
        self.log.append(("device_synchronize", index))

    def new_stream(self, index: int, priority: int = 0) -> FakeHandle:
        self.log.append(("new_stream", index, priority))
        return FakeHandle(self.log, next(self.ids), native=("stream", index))

    def current_stream(self, index: int) -> FakeHandle:
        return self.current[index]

    def set_current_stream(self, index: int, stream: FakeHandle) -> None:
        self.log.append(("set_current_stream", index, stream.id))
        self.current[index] = stream

    def new_event(self, index: int, enable_timing: bool) -> FakeHandle:
        self.log.append(("new_event", index, enable_timing))
        return FakeHandle(self.log, next(self.ids))

    def memory_stats(self, index: int) -> dict[str, int]:
        return dict(self.stats.get(index, {}))

    def reset_peak_memory_stats(self, index: int) -> None:
        self.log.append(("reset_peak", index))

    def empty_cache(self, index: int) -> None:
        self.log.append(("empty_cache", index))

    def memory_info(self, index: int) -> tuple[int, int]:
        return 1000 - index, 4096


class PlainBackend(CPUBackend):
    """A third party's backend with none of the optional attributes or methods."""

    def __init__(self, name: str, reason: str | None = None) -> None:
        self.name, self.reason = name, reason

    def unavailable_reason(self) -> str | None:
        return self.reason


class Plugin:
    def __init__(self, backend: CPUBackend) -> None:
        self.backend = backend

    @hookimpl
    def ember_backend(self) -> CPUBackend:
        return self.backend

    @hookimpl
    def ember_register_kernels(self, backend: str, register: Callable[..., None]) -> None:
        if backend == self.backend.name:
            for op, fn in KERNELS.items():
                register(op, fn)


def install(backend: CPUBackend) -> CPUBackend:
    registry.unregister(backend.name)
    registry.register(backend.name, Plugin(backend))
    return backend


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBackend]:
    """``zfake``: the accelerator (its priority beats every backend installed here)."""
    monkeypatch.delenv("EMBER_ACCELERATOR", raising=False)
    be = install(FakeBackend("zfake", accelerator_priority=1000))
    acc.set_device_index(0)
    yield be
    acc.set_device_index(0)
    registry.unregister("zfake")


@pytest.fixture
def plain(monkeypatch: pytest.MonkeyPatch) -> Iterator[PlainBackend]:
    """``zplain``, chosen through ``EMBER_ACCELERATOR``."""
    be = install(PlainBackend("zplain"))
    monkeypatch.setenv("EMBER_ACCELERATOR", "zplain")
    yield be
    registry.unregister("zplain")


def test_priority_then_name_order_and_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    names = {"zp_low": -5, "zp_a": 7, "zp_b": 7}
    for name, prio in names.items():
        install(FakeBackend(name, accelerator_priority=prio))
    install(FakeBackend("zp_host", is_accelerator=False))
    install(PlainBackend("zp_plain"))
    install(PlainBackend("zp_gone", reason="no fake hardware"))
    try:
        mine = [row for row in registry.accelerators() if row[0].startswith("zp_")]
        assert mine == [
            ("zp_a", True),
            ("zp_b", True),
            ("zp_gone", False),
            ("zp_plain", True),
            ("zp_low", True),
        ]
        assert "cpu" not in dict(registry.accelerators())
    finally:
        for name in (*names, "zp_host", "zp_plain", "zp_gone"):
            registry.unregister(name)
    assert not [row for row in registry.accelerators() if row[0].startswith("zp_")]  # not cached


def test_current_accelerator(fake: FakeBackend) -> None:
    dev = acc.current_accelerator()
    assert dev == ember.device("zfake") and dev.index is None  # PyTorch's: no index
    assert repr(acc.current_accelerator(check_available=True)) == "device(type='zfake')"
    assert acc.is_available() and acc.device_count() == 2


def test_unavailable_or_absent_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBER_ACCELERATOR", raising=False)
    monkeypatch.setattr(registry, "accelerators", lambda: [("zgone", False)])
    assert acc.current_accelerator() == ember.device("zgone")  # as a CUDA build without GPU
    assert acc.current_accelerator(check_available=True) is None
    assert not acc.is_available() and acc.device_count() == 0
    monkeypatch.setattr(registry, "accelerators", list)
    assert acc.current_accelerator() is None and acc.device_count() == 0
    for call in (acc.current_device_index, acc.synchronize, acc.current_stream, acc.memory_allocated):
        with pytest.raises(RuntimeError, match="^Cannot access accelerator device when none is available.$"):
            call()
    with pytest.raises(RuntimeError, match="^Accelerator expected$"):
        acc.synchronize("zgone:0")
    acc.set_device_index(-1)  # a negative index is a no-op, even here (as PyTorch)


def test_device_index(fake: FakeBackend) -> None:
    assert acc.current_device_index() == 0
    acc.set_device_index(1)
    assert acc.current_device_index() == 1
    acc.set_device_index("zfake:0")
    assert acc.current_device_index() == 0
    acc.set_device_index(ember.device("zfake", 1))
    acc.set_device_index(-1)
    assert acc.current_device_index() == 1
    with pytest.raises(
        RuntimeError, match=r"^device is out of range, device is 2, total number of device is 2\.$"
    ):
        acc.set_device_index(2)
    with pytest.raises(ValueError, match=r"^cpu doesn't match the current accelerator zfake\.$"):
        acc.set_device_index("cpu")
    with pytest.raises(
        ValueError, match="^Expected an ember.device with a specified index or an integer, but got:zfake$"
    ):
        acc.set_device_index("zfake")
    with pytest.warns(FutureWarning, match="Use `current_device_index` instead."):
        assert acc.current_device_idx() == 1
    with pytest.warns(FutureWarning, match="Use `set_device_index` instead."):
        acc.set_device_idx(0)
    assert acc.current_device_index() == 0


def test_device_index_is_per_thread(fake: FakeBackend) -> None:
    acc.set_device_index(1)
    seen: list[int] = []
    worker = threading.Thread(target=lambda: seen.append(acc.current_device_index()))
    worker.start()
    worker.join()
    assert seen == [0] and acc.current_device_index() == 1


def test_device_index_context(fake: FakeBackend) -> None:
    with acc.device_index(1):
        assert acc.current_device_index() == 1
        with acc.device_index(None):
            assert acc.current_device_index() == 1
        with acc.device_index(0):
            assert acc.current_device_index() == 0
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    with pytest.raises(TypeError), acc.device_index("x"):  # type: ignore[arg-type]
        pass


def test_synchronize(fake: FakeBackend) -> None:
    acc.set_device_index(1)
    acc.synchronize()
    acc.synchronize(0)
    acc.synchronize("zfake:1")
    acc.synchronize("zfake")  # no index: the current device
    assert fake.log == [("device_synchronize", i) for i in (1, 0, 1, 1)]


def test_streams(fake: FakeBackend) -> None:
    default = acc.current_stream()
    assert default.stream_id == 0 and default == acc.current_stream(0)
    s = acc.Stream(priority=-1)
    assert fake.log[-1] == ("new_stream", 0, -1)
    assert (s.device_type, s.device_index, s.stream_id) == ("zfake", 0, 100) and s != default
    assert s.device == ember.device("zfake", 0) and s.native_handle == ("stream", 0)
    assert repr(s) == "ember.Stream device_type=zfake, device_index=0, stream_id=100"
    on1 = acc.Stream("zfake:1")
    acc.set_stream(on1)  # its device becomes current too
    assert acc.current_device_index() == 1 and fake.log[-1] == ("set_current_stream", 1, on1.stream_id)
    assert acc.current_stream() == on1
    acc.set_stream(default)
    with s:
        assert acc.current_stream() == s and acc.current_device_index() == 0
    assert acc.current_stream() == default and fake.log[-1] == ("set_current_stream", 0, 0)
    assert s.query() and fake.log[-1] == ("query", 100)
    s.synchronize()
    assert fake.log[-1] == ("synchronize", 100)
    with pytest.raises(RuntimeError, match="^cpu doesn't match the current accelerator zfake.$"):
        acc.set_stream(acc.Stream("cpu"))


def test_events(fake: FakeBackend) -> None:
    s = acc.Stream()
    start, end = acc.Event(enable_timing=True), acc.Event(enable_timing=True)
    assert fake.log[-1] == ("new_event", 0, True)
    start.record(s)
    end.record()  # the current stream
    assert fake.log[-2:] == [("record", start.event_id, s.stream_id), ("record", end.event_id, 0)]
    assert start.elapsed_time(end) == 1.5 * (end.event_id - start.event_id)
    assert (
        repr(start)
        == f"ember.Event device_type=zfake, device_index=0, event_flag=1, event_id={start.event_id}"
    )
    e = s.record_event()
    assert fake.log[-1] == ("record", e.event_id, s.stream_id) and e.query()
    other = acc.Stream()
    other.wait_event(e)
    assert fake.log[-1] == ("wait_event", other.stream_id, e.event_id)
    other.wait_stream(s)  # records an event on s, then waits for it
    assert fake.log[-2][0] == "record" and fake.log[-1][:2] == ("wait_event", other.stream_id)
    e.wait()  # the current stream waits
    assert fake.log[-1] == ("wait_event", 0, e.event_id)
    with pytest.raises(
        ValueError, match=r"^Both events must be created with argument 'enable_timing=True'\.$"
    ):
        e.elapsed_time(end)
    with pytest.raises(ValueError, match=r"^Both events must be recorded before calculating elapsed time\.$"):
        start.elapsed_time(acc.Event(enable_timing=True))
    with pytest.raises(RuntimeError, match="does not match recording stream's device"):
        acc.Event("zfake:1").record(s)


def test_memory_statistics(fake: FakeBackend) -> None:
    stats = acc.memory_stats()
    assert isinstance(stats, OrderedDict) and list(stats) == sorted(stats)
    assert acc.memory.memory_allocated() == 64 and acc.max_memory_allocated("zfake:0") == 96
    assert acc.memory_stats(1) == OrderedDict() and acc.memory_allocated(1) == 0  # not used yet
    assert acc.memory_reserved() == 0 and acc.get_memory_info(1) == (999, 4096)
    acc.set_device_index(1)
    acc.reset_peak_memory_stats()
    acc.empty_cache()  # every device
    assert fake.log == [("reset_peak", 1), ("empty_cache", 0), ("empty_cache", 1)]
    assert acc.get_device_capability()["supported_dtypes"] == set(fake.dtypes)


def test_backend_without_optional_methods(plain: PlainBackend) -> None:
    assert acc.current_accelerator() == ember.device("zplain") and acc.device_count() == 2  # cpu's
    s = acc.Stream()
    assert s.stream_id == 0 and s.query() and s == acc.current_stream()  # always in order
    acc.set_stream(s)
    with pytest.raises(RuntimeError, match="^zplain backend doesn't support events.$"):
        s.record_event()
    with pytest.raises(RuntimeError, match="^Backend doesn't support getting stream native handle.$"):
        _ = s.native_handle
    ev = acc.Event()
    assert ev.query() and ev.event_id == 0
    s.wait_event(ev)  # nothing recorded, nothing to wait for
    with pytest.raises(RuntimeError, match="^backend 'zplain' does not report memory statistics"):
        acc.memory_allocated()
    acc.empty_cache()
    acc.reset_peak_memory_stats()


def test_env_names_an_installed_non_accelerator(plain: PlainBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBER_ACCELERATOR", "cpu")
    with pytest.raises(
        RuntimeError,
        match=r"^EMBER_ACCELERATOR='cpu': backend 'cpu' is not an accelerator \(installed backends: cpu, .*zplain",
    ):
        acc.current_accelerator()


# --- EMBER_ACCELERATOR in a fresh process, with the minimal example backend --------------------

_PRELUDE = """
import sys
sys.path[:0] = [{tests!r}, {minimal!r}]
import ember
from importlib.metadata import entry_points
from ember.backends import registry
if not any(ep.name == "minimal" for ep in entry_points(group="ember.backends")):
    import ember_minimal.plugin
    registry.register("minimal", ember_minimal.plugin)
from test_accelerator import PlainBackend, install
install(PlainBackend("zdevice"))
install(PlainBackend("zgone", reason="no fake hardware"))
import ember.accelerator as acc
"""


_SCRIPT = """
import os
def show(env):
    if env is None:
        os.environ.pop("EMBER_ACCELERATOR", None)
    else:
        os.environ["EMBER_ACCELERATOR"] = env
    try:
        print(acc.current_accelerator(), acc.device_count(), acc.current_stream())
    except RuntimeError as e:
        print("RuntimeError:", e)
show(os.environ["EMBER_ACCELERATOR"])  # as the process was started
print(ember.ones(2, device="minimal").sum().item())  # ember itself works whatever the variable says
show("nosuch")
show("zgone")
show(None)
print([n for n, ok in registry.accelerators()])
"""


def test_env_override_and_priorities() -> None:
    environ = dict(os.environ, EMBER_ACCELERATOR="minimal")
    prelude = _PRELUDE.format(tests=str(ROOT / "tests"), minimal=str(MINIMAL))
    out = subprocess.run(
        [sys.executable, "-c", prelude + _SCRIPT],
        check=False,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    chosen, total, nosuch, gone, default, order = out.stdout.splitlines()
    assert chosen == "minimal 1 ember.Stream device_type=minimal, device_index=0, stream_id=0"
    assert total == "2.0"
    assert nosuch.startswith(
        "RuntimeError: EMBER_ACCELERATOR='nosuch': no installed backend has this name (installed backends: cpu, "
    )
    assert "minimal" in nosuch and "zdevice" in nosuch and "; available accelerators: " in nosuch
    assert gone.startswith(
        "RuntimeError: EMBER_ACCELERATOR='zgone': backend 'zgone' is installed but unavailable: no fake hardware "
        "(installed backends: "
    )
    # Without the variable, the minimal example (priority -100) comes after every device,
    # available or not, and a real device is chosen over it.
    assert order.endswith("'minimal']") and "'zdevice'" in order
    assert not default.startswith("minimal ") and default.split()[0] in order
