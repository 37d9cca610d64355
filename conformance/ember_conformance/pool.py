"""The pytest side of crash isolation: one worker process, reused until it dies.

``run(kind, group, dtypes)`` sends a group to the worker and collects a verdict per case.
When the worker dies (segfault, ``os._exit``, a hang past the timeout), the case it had
started is recorded as ``crash`` with the exit reason and the tail of its stderr, and a
fresh worker resumes the group after that case.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any

from .worker import PREFIX

__all__ = ["GROUP_CRASH", "WorkerPool"]

GROUP_CRASH = "*"  # result key when the worker died before starting any case of a group
_MAX_CRASHES = 50  # per group; past this the rest of the group is reported not run


def _describe(rc: int | None) -> str:
    if rc is None:
        return "killed after the timeout"
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


class _Worker:
    """One worker subprocess and a thread feeding its protocol lines into a queue."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(PREFIX):
                self.lines.put(json.loads(line[len(PREFIX) :]))
        self.lines.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def death(self, timed_out: bool) -> str:
        if timed_out:
            self.proc.kill()
        rc = self.proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read().decode(errors="replace").strip().splitlines()[-20:]
        self.stderr.close()
        reason = _describe(None if timed_out else rc)
        return f"the worker process died ({reason})" + (
            "; its stderr ends:\n" + "\n".join(tail) if tail else ""
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class WorkerPool:
    """Runs groups in a worker for backend ``name`` on device ``index``; caches results."""

    def __init__(self, name: str, index: int, plugin: str | None, timeout: float) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "ember_conformance.worker",
            "--backend",
            name,
            "--index",
            str(index),
        ]
        if plugin:
            self.argv += ["--plugin", plugin]
        # The worker must import what this process can (e.g. a --ember-plugin module).
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.timeout = timeout
        self.worker: _Worker | None = None
        self.cache: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.crashes = 0

    def run(self, kind: str, group: str, dtypes: list[str]) -> dict[str, dict[str, Any]]:
        key = (kind, group)
        if key not in self.cache:
            self.cache[key] = self._run(kind, group, dtypes)
        return self.cache[key]

    def _run(self, kind: str, group: str, dtypes: list[str]) -> dict[str, dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        for _ in range(_MAX_CRASHES):
            died = self._attempt(kind, group, dtypes, results)
            if died is None:
                return results
        return results

    def _attempt(
        self, kind: str, group: str, dtypes: list[str], results: dict[str, dict[str, Any]]
    ) -> str | None:
        """One pass over the group; returns None when done, else the id that crashed."""
        if self.worker is None:
            self.worker = _Worker(self.argv, self.env)
        w = self.worker
        try:
            w.send({"kind": kind, "group": group, "dtypes": dtypes, "skip": sorted(results)})
        except (BrokenPipeError, OSError):
            pass  # it died already; the reader reports the death below
        current = GROUP_CRASH
        while True:
            try:
                msg = w.lines.get(timeout=self.timeout)
            except queue.Empty:
                msg, timed_out = None, True
            else:
                timed_out = False
            if msg is None:
                self.worker = None
                self.crashes += 1
                results[current] = {"status": "crash", "message": w.death(timed_out)}
                if current == GROUP_CRASH:
                    return None  # it cannot even start: retrying would loop
                return current
            if "start" in msg:
                current = msg["start"]
            elif "result" in msg:
                results[msg.pop("result")] = msg
            elif msg.get("done"):
                return None

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None
