"""The Backend protocol: a table from op to kernel plus an allocator (STYLE.md 2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .dtypes import DType

__all__ = ["CONTRACT_VERSION", "Backend"]

# Major.minor. A plugin built for another major version is refused at load time. Minor
# versions add optional things only: 1.2 the foreach optimizer updates, 1.3 the recurrent
# layers, sdpa, softmax/log_softmax backward, and the optional accelerator and kernel_events
# members; 1.4 the optional compile_graph member (ember.compile) and relu_backward; 1.5
# norm_foreach / mul_foreach (gradient clipping) and layer_norm / layer_norm_backward; 1.6
# add_scaled (add/sub with alpha rounded once).
CONTRACT_VERSION = "1.6"


@runtime_checkable
class Backend(Protocol):
    """What a backend plugin's ``ember_backend`` hook returns.

    Kernels come separately, through ``ember_register_kernels``. Arrays are the backend's
    own type; the frontend never looks inside them except through these methods.
    """

    name: str
    version: str
    contract_version: str
    dtypes: frozenset[DType]
    # True when kernels only accept contiguous arrays: the frontend copies inputs first.
    contiguous_only: bool
    # Ops whose kernels are nondeterministic; they raise under
    # ember.use_deterministic_algorithms(True).
    nondeterministic: frozenset[str]
    # The class of this backend's arrays (used to move them for the CPU fallback).
    array_type: type

    def unavailable_reason(self) -> str | None:
        """None when usable, else why not (e.g. 'no CUDA driver')."""

    def device_count(self) -> int:
        """How many devices of this backend exist (0 when unavailable)."""

    def device_name(self, index: int) -> str:
        """A human name for device ``index``, for ``ember info``."""

    def synchronize(self, index: int) -> None:
        """Wait for all queued work on device ``index``."""

    def empty(self, shape: tuple[int, ...], dtype: DType, index: int) -> Any:
        """A new contiguous, uninitialised array."""

    def from_numpy(self, array: np.ndarray, index: int) -> Any:
        """Copy (or, on the host, may alias) a NumPy array onto device ``index``."""

    def to_numpy(self, x: Any) -> np.ndarray:
        """A NumPy array with ``x``'s values; may alias ``x`` on host backends."""

    def layout(self, x: Any) -> tuple[tuple[int, ...], int]:
        """``(strides, storage_offset)`` of ``x`` in elements."""

    def index_of(self, x: Any) -> int:
        """The device index an array lives on."""

    def storage_id(self, x: Any) -> int:
        """An id equal for arrays sharing one storage (used by aliasing checks)."""

    # Optional, not part of the protocol: ``set_num_threads(n)`` / ``get_num_threads()``
    # (``ember.set_num_threads`` reaches them on the ``cpu`` backend).
    #
    # Optional, read by ``ember.accelerator`` (docs/backend-guide.md, section 4):
    #   is_accelerator: bool        default: True for every backend but ``cpu``
    #   accelerator_priority: int   default 0; the highest available wins, ties by name
    #   memory_stats(index) -> dict[str, int]   PyTorch's flat keys ("allocated_bytes.all.current")
    #   reset_peak_memory_stats(index), empty_cache(index), memory_info(index) -> (free, total)
    #   new_stream(index, priority), current_stream(index), set_current_stream(index, stream)
    #   new_event(index, enable_timing)   stream/event handles as ember.accelerator._streams
    #
    # Optional, read by ``ember.profiler`` for device time (docs/profiler.md):
    #   kernel_events() -> session | None: session.start(); session.mark() before/after each
    #   kernel call; session.stop() at the profile's end; session.between(m0, m1) ->
    #   [(kernel name, start_ns, end_ns)] on time.perf_counter_ns's clock
    #
    # Optional, read by ``ember.compile`` (docs/compile.md):
    #   compile_graph(graph: ember.backends.graph.KernelGraph) -> KernelGraph | None: a straight
    #   run of captured kernel calls, returned fused (fewer calls, same outputs) or None


KernelTable = dict[str, Callable[..., Any]]
