"""ember's on-disk cache of compiled OpenCL programs, and the progress line shown while
programs compile.

Why a cache of our own: PoCL (and pyopencl, which defers to it there) keys its cache on the
preprocessed source, so even a hit runs clang's preprocessor, about 0.1 s a program: the
demo's first training step still took 4 to 7 s with a warm PoCL cache. A program rebuilt
from its binary takes milliseconds. Files live under
``$XDG_CACHE_HOME/ember/opencl/<device hash>/<source hash>.bin`` (``EMBER_OPENCL_CACHE_DIR``
overrides the folder, ``EMBER_OPENCL_CACHE=0`` turns the cache off). The device hash covers
the device's name and version, the driver's version and the platform's name and version; the
source hash the exact source and build options. A file is written atomically (a temporary
file, then ``os.replace``) and carries a checksum: a truncated or corrupt file, or a binary
the driver refuses, is ignored and rebuilt from source, never an error.

A binary is stored the second time a program is compiled from source, not the first: on
PoCL, asking a freshly compiled program for its binary compiles every kernel once more (0.3
to 0.5 s a program here, which made the first run half again slower), while after a PoCL
cache hit it is free. The first compile leaves an empty ``<source hash>.seen`` file instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ProgramCache", "Progress", "cache_root", "device_key", "progress", "source_key"]

_MAGIC = b"EMBERCL1"
_DIGEST = 32  # sha256 of the payload, after the magic


def cache_root() -> str | None:
    """The cache's folder, or None when ``EMBER_OPENCL_CACHE=0``."""
    if os.environ.get("EMBER_OPENCL_CACHE", "1").strip() == "0":
        return None
    folder = os.environ.get("EMBER_OPENCL_CACHE_DIR")
    if folder:
        return folder
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember", "opencl")


def device_key(dev: Any) -> str:
    """A folder name per device and driver: a binary is only valid for the build that made it."""
    parts = [dev.name, dev.version, dev.driver_version, dev.platform.name, dev.platform.version]
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:24]


def source_key(source: str, options: list[str]) -> str:
    return hashlib.sha256((source + "\0" + "\0".join(options)).encode()).hexdigest()


class ProgramCache:
    """The binaries of one device's programs, one file per (source, options)."""

    def __init__(self, root: str, dev: Any) -> None:
        self.folder = os.path.join(root, device_key(dev))

    def path(self, source: str, options: list[str]) -> str:
        return os.path.join(self.folder, source_key(source, options) + ".bin")

    def seen(self, source: str, options: list[str]) -> bool:
        """Whether an earlier process compiled this program (and marked it)."""
        return os.path.exists(self.path(source, options)[: -len(".bin")] + ".seen")

    def mark_seen(self, source: str, options: list[str]) -> None:
        with contextlib.suppress(OSError):
            os.makedirs(self.folder, exist_ok=True)
            with open(self.path(source, options)[: -len(".bin")] + ".seen", "wb"):
                pass

    def load(self, source: str, options: list[str]) -> bytes | None:
        """The stored binary, or None when missing, unreadable, truncated or corrupt."""
        try:
            with open(self.path(source, options), "rb") as f:
                data = f.read()
        except OSError:
            return None
        head = len(_MAGIC) + _DIGEST
        if len(data) <= head or not data.startswith(_MAGIC):
            return None
        payload = data[head:]
        if hashlib.sha256(payload).digest() != data[len(_MAGIC) : head]:
            return None
        return payload

    def store(self, source: str, options: list[str], binary: bytes) -> None:
        """Write atomically; a cache that cannot be written (read-only home) is skipped."""
        if not binary:
            return
        tmp = None
        try:
            os.makedirs(self.folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".bin")
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + hashlib.sha256(binary).digest() + binary)
            os.replace(tmp, self.path(source, options))
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


class Progress:
    """A counter of programs compiled from source, shown on stderr (tqdm's bar, off when
    stderr is not a terminal or ``TQDM_DISABLE=1``) once a burst of compiles has lasted
    ``threshold_s``; nothing at all while programs come from the cache. A burst ends after
    ``gap_s`` without a compile (a training step's first launches pause it for a while)."""

    def __init__(
        self,
        threshold_s: float = 1.0,
        clock: Callable[[], float] = time.perf_counter,
        file: Any = None,
        gap_s: float = 5.0,
    ) -> None:
        self.threshold_s = threshold_s
        self.gap_s = gap_s
        self.clock = clock
        self.file = file
        self.cached = True  # whether the message may promise "cached for next time"
        self.count = 0  # programs compiled in the current burst
        self.first = 0.0  # when the current burst's first compile began
        self.last = -float("inf")  # when the last compile ended
        self.bar: Any = None

    def begin(self) -> float:
        """Call before compiling; returns the start time to pass to ``end``."""
        now = self.clock()
        if now - self.last > self.gap_s:  # a new burst
            self.close()
            self.count, self.first = 0, now
        return now

    def end(self) -> None:
        now = self.last = self.clock()
        self.count += 1
        if self.bar is not None:
            try:
                self.bar.set_postfix_str(self._seconds(), refresh=False)
                self.bar.update(1)
            except Exception:  # noqa: BLE001 - a progress display must never fail a compile
                self.bar = _Line()
        elif now - self.first >= self.threshold_s:
            try:
                self.bar = self._open()
            except Exception:  # noqa: BLE001 - a progress display must never fail a compile
                self.bar = _Line()

    def idle(self) -> None:
        """Close the bar once no program has compiled for ``gap_s`` (a cache hit calls this)."""
        if self.bar is not None and self.clock() - self.last > self.gap_s:
            self.close()

    def close(self) -> None:
        bar, self.bar = self.bar, None
        if bar is not None:
            bar.close()

    def _open(self) -> Any:
        desc = "compiling OpenCL kernels" + (" (cached for next time)" if self.cached else "")
        file = self.file if self.file is not None else sys.stderr
        try:
            from tqdm.auto import tqdm
        except ImportError:  # tqdm is optional: one plain line per burst
            if getattr(file, "isatty", lambda: False)():
                print(f"ember: {desc} ...", file=file, flush=True)
            return _Line()
        bar = tqdm(
            desc=desc,
            file=file,
            # Off on a file that is not a terminal, or with tqdm's own switch TQDM_DISABLE=1
            # (which an explicit ``disable`` would override).
            disable=True if os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true") else None,
            initial=self.count,
            postfix=self._seconds(),
            bar_format="{desc}: {n_fmt} programs{postfix}",
        )
        return bar

    def _seconds(self) -> str:
        """The burst's time so far, to its last compile (tqdm's own clock starts with the bar)."""
        return f"{self.last - self.first:.1f} s"


class _Line:
    """Stands in for tqdm's bar when tqdm is not installed."""

    def update(self, n: int) -> None:
        pass

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


progress = Progress()
