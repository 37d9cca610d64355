"""Saving: atomic, no temporary left behind (exceptions, SIGTERM, SIGKILL), modes, symlinks.

The kill tests run a real child process that pauses in the middle of writing a 16 MB storage
(a hook on ``zipfile.ZipFile.writestr`` prints "writing" and waits on stdin), so the signal
always lands mid-save: no sleeps, no races.
"""

from __future__ import annotations

import glob
import os
import signal
import stat
import subprocess
import sys
import threading

import ember
import pytest
from ember import serialization as S

CHILD = r"""
import os, signal, sys, zipfile
import ember

path, handler = sys.argv[1], sys.argv[2]
if handler == "previous":
    def previous(signum, frame):
        os.write(1, b"previous handler ran\n")  # print could re-enter stdout's buffer
        sys.exit(3)
    signal.signal(signal.SIGTERM, previous)
elif handler == "flag":  # the graceful-shutdown pattern: note the signal, finish the step, then stop
    def note(signum, frame):
        os.write(1, b"stop requested\n")
    signal.signal(signal.SIGTERM, note)
elif handler == "ignore":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
write = zipfile.ZipFile.writestr

def paused(self, name, data, *args, **kwargs):
    write(self, name, data, *args, **kwargs)
    if name.endswith("/data/0"):
        print("writing", flush=True)
        sys.stdin.readline()  # the parent signals us here, mid-save, then sends a line to go on

zipfile.ZipFile.writestr = paused
ember.save({"w": ember.ones(2**22)}, path)
print("saved", flush=True)
"""


def _temporaries(path) -> list[str]:
    return glob.glob(os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.*.tmp"))


def _kill_mid_save(tmp_path, path, sig: int, handler: str = "default") -> subprocess.CompletedProcess:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script), str(path), handler],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline() == "writing\n"
    temps = _temporaries(path)
    assert len(temps) == 1 and f".{child.pid}." in temps[0] and os.path.getsize(temps[0]) > 2**24
    child.send_signal(sig)
    out, _ = child.communicate("go on\n", timeout=60)
    return subprocess.CompletedProcess(child.args, child.returncode, out)


def _old_checkpoint(path) -> bytes:
    ember.save({"w": ember.tensor([1.0, 2.0])}, path)
    return path.read_bytes()


def test_sigterm_mid_save_removes_the_temporary_and_keeps_the_old_file(tmp_path) -> None:
    path = tmp_path / "ckpt.pt"
    before = _old_checkpoint(path)
    done = _kill_mid_save(tmp_path, path, signal.SIGTERM)
    assert done.returncode == -signal.SIGTERM  # the signal was re-delivered to the default action
    assert _temporaries(path) == [] and path.read_bytes() == before


def test_sigterm_goes_on_to_the_previous_handler(tmp_path) -> None:
    path = tmp_path / "ckpt.pt"
    before = _old_checkpoint(path)
    done = _kill_mid_save(tmp_path, path, signal.SIGTERM, handler="previous")
    assert done.returncode == 3 and "previous handler ran" in done.stdout
    assert _temporaries(path) == [] and path.read_bytes() == before


@pytest.mark.parametrize("handler", ["flag", "ignore"])
def test_sigterm_that_does_not_end_the_process_lets_the_save_complete(tmp_path, handler: str) -> None:
    path = tmp_path / "ckpt.pt"
    _old_checkpoint(path)
    done = _kill_mid_save(tmp_path, path, signal.SIGTERM, handler=handler)
    assert done.returncode == 0 and done.stdout.endswith("saved\n")
    assert ("stop requested" in done.stdout) == (handler == "flag")
    assert _temporaries(path) == [] and ember.load(path)["w"].shape == (2**22,)


def test_temporaries_of_killed_saves_are_removed_by_the_next_save(tmp_path) -> None:
    path = tmp_path / "ckpt.pt"
    before = _old_checkpoint(path)
    for _ in range(2):  # each killed save's own start removed the temporary of the one before
        assert _kill_mid_save(tmp_path, path, signal.SIGKILL).returncode == -signal.SIGKILL
    assert len(_temporaries(path)) == 1 and path.read_bytes() == before  # SIGKILL cannot be caught
    ember.save({"w": ember.tensor([3.0])}, path)
    assert _temporaries(path) == [] and ember.load(path)["w"].tolist() == [3.0]


def test_a_live_writers_temporary_is_left_alone(tmp_path) -> None:
    path = tmp_path / "ckpt.pt"
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        theirs = tmp_path / f".ckpt.pt.{live.pid}.0123456789abcdef.tmp"
        theirs.write_bytes(b"another process is writing this")
        other_name = tmp_path / ".other.pt.999999999.0123456789abcdef.tmp"
        other_name.write_bytes(b"a temporary of another file")
        ember.save({"w": ember.ones(1)}, path)
        assert theirs.exists() and other_name.exists()
    finally:
        live.communicate(b"")
    ember.save({"w": ember.ones(1)}, path)
    assert not theirs.exists() and other_name.exists()


def test_an_exception_removes_the_temporary_and_restores_the_signal_handler(tmp_path, monkeypatch) -> None:
    path = tmp_path / "ckpt.pt"
    before_handler = signal.getsignal(signal.SIGTERM)

    class Unpicklable:
        def __reduce__(self):
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        ember.save({"w": Unpicklable()}, path)
    assert os.listdir(tmp_path) == [] and signal.getsignal(signal.SIGTERM) is before_handler


def test_saving_from_a_thread_installs_no_handler(tmp_path) -> None:
    path = tmp_path / "ckpt.pt"
    errors = []
    worker = threading.Thread(target=lambda: _save_or_record(path, errors))
    worker.start()
    worker.join()
    assert errors == [] and ember.load(path)["w"].tolist() == [1.0]


def _save_or_record(path, errors: list) -> None:
    try:
        ember.save({"w": ember.ones(1)}, path)
    except Exception as e:  # noqa: BLE001 (the test reports whatever the thread raised)
        errors.append(e)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask_like_open(tmp_path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        ember.save({"w": ember.ones(1)}, tmp_path / "a.pt")
        S.save_safetensors({"w": ember.ones(1)}, tmp_path / "a.safetensors")
        with open(tmp_path / "plain", "wb"):
            pass
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "plain").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "a.pt").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "a.safetensors").st_mode) == mode


def test_an_overwrite_keeps_the_existing_mode(tmp_path) -> None:
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(1)}, path)
    os.chmod(path, 0o640)
    ember.save({"w": ember.zeros(1)}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 and ember.load(path)["w"].tolist() == [0.0]


def test_saving_to_a_symlink_writes_its_target(tmp_path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.pt"
    link = tmp_path / "latest.pt"
    ember.save({"w": ember.ones(1)}, target)
    link.symlink_to(target)
    ember.save({"w": ember.tensor([5.0])}, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert ember.load(target)["w"].tolist() == [5.0] and ember.load(link)["w"].tolist() == [5.0]
    assert sorted(os.listdir(tmp_path / "real")) == ["model.pt"] and sorted(os.listdir(tmp_path)) == [
        "latest.pt",
        "real",
    ]
