"""Atomic file writes for checkpoints: all or nothing, and no temporary left behind.

``atomic_write(path, write)`` writes into ``.{name}.{pid}.{random}.tmp`` beside the target,
fsyncs it and ``os.replace``s it over the target, so a crash at any moment leaves the previous
file intact. The temporary is removed on any exception and on SIGTERM (a handler installed only
while writing, in the main thread, which removes it before the default action ends the process,
or calls the previous Python handler, whose exception then triggers the cleanup).
A SIGKILL cannot be caught: its temporary is removed by the next save to the same path, which
deletes temporaries whose writer process no longer exists (never a live writer's).

The new file's mode is what ``open(path, "wb")`` would give: ``0o666`` less the umask for a new
file, the existing mode for an overwrite. Saving to a symlink writes through it: the link's
target is replaced atomically and the link stays.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["atomic_write", "temp_name"]

_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{16}\.tmp$")


def temp_name(path: str) -> str:
    """The temporary for ``path``: named with this process's id, so others can tell it is ours."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there: treat every writer as alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(path: str) -> list[str]:
    """Delete temporaries of ``path`` left by writers that are dead (killed mid-save); return them."""
    folder, name = os.path.split(path)
    removed = []
    with contextlib.suppress(OSError):
        entries = os.listdir(folder or ".")
        for entry in entries:
            m = _TEMP.match(entry)
            if m is None or m["name"] != name or int(m["pid"]) == os.getpid() or _alive(int(m["pid"])):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, entry))
                removed.append(entry)
    return removed


@contextlib.contextmanager
def _removed_on_sigterm(tmp: str) -> Iterator[None]:
    """While writing, a SIGTERM that would end the process removes ``tmp`` first.

    With the default action, the handler removes the temporary and re-delivers the signal, so
    the process still dies of SIGTERM. A Python handler that was there before is called as it
    would have been: if it raises (``sys.exit``), the write's cleanup removes the temporary; if it
    returns (a "stop after this epoch" flag), the save goes on and completes. An ignored SIGTERM,
    a handler installed outside Python, or a thread other than the main one: nothing is installed.
    """
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or previous in (signal.SIG_IGN, None):
        yield
        return

    def on_term(signum: int, frame: Any) -> None:
        if callable(previous):
            previous(signum, frame)
            return
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is on_term:
            signal.signal(signal.SIGTERM, previous)


def _existing_mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def _fsync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: str, write: Callable[[Any], Any]) -> None:
    """Call ``write(file)`` on a temporary beside ``path``, then atomically put it in ``path``'s place."""
    target = os.path.realpath(path)  # through symlinks: the link stays, its target is replaced
    remove_stale_temporaries(target)
    mode = _existing_mode(target)
    tmp = temp_name(target)
    try:
        with _removed_on_sigterm(tmp):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
            with os.fdopen(fd, "wb") as f:
                if mode is not None:
                    os.chmod(tmp, mode)
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(os.path.dirname(target))
