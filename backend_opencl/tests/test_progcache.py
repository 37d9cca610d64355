"""ember's on-disk cache of OpenCL programs: keys, atomic checksummed files, recovery from a
bad file, and the compile progress line (silent while programs come from the cache)."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from ember_opencl import progcache, runtime
from ember_opencl.progcache import ProgramCache, Progress

SOURCE = "__kernel void ember_cache_test(__global float* a, int n) {\n"
SOURCE += "    int i = get_global_id(0); if (i < n) a[i] = 2.0f * a[i] + 1.0f;\n}\n"
OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt"]


def _fake_device(driver: str = "3.1") -> SimpleNamespace:
    platform = SimpleNamespace(name="Portable Computing Language", version="OpenCL 3.0 PoCL 3.1")
    return SimpleNamespace(name="cpu-x", version="OpenCL 3.0", driver_version=driver, platform=platform)


def test_cache_root_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("EMBER_OPENCL_CACHE_DIR", raising=False)
    monkeypatch.delenv("EMBER_OPENCL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert progcache.cache_root() == os.path.join(str(tmp_path), "ember", "opencl")
    monkeypatch.setenv("EMBER_OPENCL_CACHE_DIR", str(tmp_path / "mine"))
    assert progcache.cache_root() == str(tmp_path / "mine")
    monkeypatch.setenv("EMBER_OPENCL_CACHE", "0")
    assert progcache.cache_root() is None


def test_keys_separate_drivers_sources_and_options() -> None:
    assert progcache.device_key(_fake_device("3.1")) == progcache.device_key(_fake_device("3.1"))
    assert progcache.device_key(_fake_device("3.1")) != progcache.device_key(_fake_device("3.2"))
    assert progcache.source_key(SOURCE, OPTIONS) != progcache.source_key(SOURCE + " ", OPTIONS)
    assert progcache.source_key(SOURCE, OPTIONS) != progcache.source_key(SOURCE, [])


def test_store_then_load_round_trips_and_leaves_no_temporary_file(tmp_path) -> None:
    cache = ProgramCache(str(tmp_path), _fake_device())
    assert cache.load(SOURCE, OPTIONS) is None
    cache.store(SOURCE, OPTIONS, b"\x00binary\xff" * 100)
    assert cache.load(SOURCE, OPTIONS) == b"\x00binary\xff" * 100
    assert os.listdir(cache.folder) == [progcache.source_key(SOURCE, OPTIONS) + ".bin"]
    assert ProgramCache(str(tmp_path), _fake_device("9")).load(SOURCE, OPTIONS) is None


@pytest.mark.parametrize("damage", ["truncate", "flip", "magic", "empty"])
def test_a_damaged_file_reads_as_missing(tmp_path, damage) -> None:
    cache = ProgramCache(str(tmp_path), _fake_device())
    cache.store(SOURCE, OPTIONS, bytes(range(256)) * 4)
    path = cache.path(SOURCE, OPTIONS)
    data = Path(path).read_bytes()
    bad = {
        "truncate": data[:-10],
        "flip": data[:-1] + bytes([data[-1] ^ 1]),
        "magic": b"X" + data[1:],
        "empty": b"",
    }[damage]
    Path(path).write_bytes(bad)
    assert cache.load(SOURCE, OPTIONS) is None


def test_an_unwritable_cache_is_skipped(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = ProgramCache(str(blocker), _fake_device())
    cache.store(SOURCE, OPTIONS, b"abc")  # no error
    assert cache.load(SOURCE, OPTIONS) is None


@pytest.fixture
def dev(monkeypatch, tmp_path):
    """The OpenCL device with its program cache in a fresh folder, and source compiles counted."""
    d = runtime.device(0)
    monkeypatch.setattr(d, "programs", ProgramCache(str(tmp_path), d.dev))
    counter = Progress(threshold_s=1e9, file=io.StringIO(), gap_s=1e9)
    monkeypatch.setattr(progcache, "progress", counter)
    return d


def _run(dev, prg) -> list[float]:
    import pyopencl as cl

    knl = prg.ember_cache_test
    knl.set_scalar_arg_dtypes([None, np.int32])
    host = np.arange(4, dtype=np.float32)
    buf = cl.Buffer(dev.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    knl(dev.queue, (4,), None, buf, 4)
    cl.enqueue_copy(dev.queue, host, buf, is_blocking=True)
    return host.tolist()


def test_the_second_compile_stores_the_binary_then_it_comes_from_disk(dev) -> None:
    assert _run(dev, runtime.build(dev, SOURCE, OPTIONS)) == [1.0, 3.0, 5.0, 7.0]
    assert progcache.progress.count == 1
    assert dev.programs.seen(SOURCE, OPTIONS) and dev.programs.load(SOURCE, OPTIONS) is None
    assert _run(dev, runtime.build(dev, SOURCE, OPTIONS)) == [1.0, 3.0, 5.0, 7.0]
    assert progcache.progress.count == 2
    assert os.path.exists(dev.programs.path(SOURCE, OPTIONS))
    assert _run(dev, runtime.build(dev, SOURCE, OPTIONS)) == [1.0, 3.0, 5.0, 7.0]
    assert progcache.progress.count == 2  # the third build read the binary


@pytest.mark.parametrize("bad", ["truncated", "refused"])
def test_a_bad_cache_file_is_rebuilt_from_source(dev, bad) -> None:
    runtime.build(dev, SOURCE, OPTIONS)
    runtime.build(dev, SOURCE, OPTIONS)  # stored now
    path = dev.programs.path(SOURCE, OPTIONS)
    if bad == "truncated":
        os.truncate(path, os.path.getsize(path) // 2)
    else:  # a well-formed file whose binary the driver cannot load
        dev.programs.store(SOURCE, OPTIONS, b"not a program binary")
    assert _run(dev, runtime.build(dev, SOURCE, OPTIONS)) == [1.0, 3.0, 5.0, 7.0]
    assert progcache.progress.count == 3
    assert dev.programs.load(SOURCE, OPTIONS) not in (None, b"not a program binary")  # rewritten


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _compile(progress: Progress, clock: _Clock, seconds: float) -> None:
    progress.begin()
    clock.now += seconds
    progress.end()


def test_progress_appears_when_compiling_takes_over_a_second() -> None:
    out, clock = _Tty(), _Clock()
    progress = Progress(threshold_s=1.0, clock=clock, file=out)
    _compile(progress, clock, 0.6)
    assert out.getvalue() == ""  # 0.6 s so far: still quiet
    _compile(progress, clock, 0.6)
    _compile(progress, clock, 0.6)
    clock.now += 10.0
    progress.idle()  # a cache hit after the burst closes the bar
    assert progress.bar is None
    text = out.getvalue()
    assert "compiling OpenCL kernels (cached for next time)" in text
    assert (
        text.rstrip()
        .splitlines()[-1]
        .split("\r")[-1]
        .startswith("compiling OpenCL kernels (cached for next time): 3 programs, 1.8 s")
    )


def test_progress_is_silent_for_quick_compiles_and_cache_hits() -> None:
    out, clock = _Tty(), _Clock()
    progress = Progress(threshold_s=1.0, clock=clock, file=out)
    for _ in range(5):  # 0.5 s in all
        _compile(progress, clock, 0.1)
    clock.now += 10.0
    _compile(progress, clock, 0.1)  # a new burst, also short
    progress.idle()
    assert out.getvalue() == "" and progress.bar is None


def test_progress_without_the_cache_does_not_promise_it() -> None:
    out, clock = _Tty(), _Clock()
    progress = Progress(threshold_s=1.0, clock=clock, file=out)
    progress.cached = False
    _compile(progress, clock, 2.0)
    progress.close()
    assert "compiling OpenCL kernels: 1 programs, 2.0 s" in out.getvalue()


@pytest.mark.parametrize("tty", [False, True])
def test_progress_off_when_not_a_terminal_or_tqdm_disabled(tty, monkeypatch) -> None:
    if tty:
        monkeypatch.setenv("TQDM_DISABLE", "1")
    out, clock = (_Tty() if tty else io.StringIO()), _Clock()
    progress = Progress(threshold_s=1.0, clock=clock, file=out)
    for _ in range(3):
        _compile(progress, clock, 0.6)
    clock.now += 10.0
    progress.idle()
    assert out.getvalue() == "" and progress.bar is None


def test_a_pause_between_compiles_keeps_one_bar() -> None:
    out, clock = _Tty(), _Clock()
    progress = Progress(threshold_s=1.0, clock=clock, file=out, gap_s=5.0)
    _compile(progress, clock, 1.5)  # shown from here
    clock.now += 3.0  # first launches, no compile
    progress.idle()
    _compile(progress, clock, 0.5)
    clock.now += 6.0
    progress.idle()
    assert out.getvalue().count("\n") == 1  # one bar, closed once
    assert (
        out.getvalue().rstrip().split("\r")[-1]
        == "compiling OpenCL kernels (cached for next time): 2 programs, 5.0 s"
    )


def test_without_tqdm_one_plain_line_and_compiles_go_on(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails as if not installed
    out, clock = _Tty(), _Clock()
    progress = Progress(threshold_s=1.0, clock=clock, file=out)
    for _ in range(4):
        _compile(progress, clock, 0.6)
    clock.now += 10.0
    progress.idle()
    assert out.getvalue() == "ember: compiling OpenCL kernels (cached for next time) ...\n"
    assert progress.count == 4 and progress.bar is None
