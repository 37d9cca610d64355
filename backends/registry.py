"""Backend discovery (entry points through pluggy), kernel tables and cached lookup.

Each loaded backend gets one ``LoadedBackend`` record whose ``k`` dict maps every op name
to the callable the frontend's dispatcher runs (see ``LoadedBackend``): resolved once at
load and again, in place, when a policy or the dispatcher's modes change, so the hot path
is one dict lookup. The CPU fallback and its policy live here, once, for every op.

Which composites have a decomposition is the frontend's knowledge: it declares them here
(``declare_decomposition``) when ``ember`` is imported, so ``composite_fallbacks`` can say
which composites a backend would run on the CPU. A declaration may name the frontend module
that defines the decomposition: it is imported when a backend without the composite's kernel
loads, so a program on a backend with the kernels never pays for it.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from . import hookspecs
from ._entry_points import EntryPoint, entry_points
from .errors import BackendError, BackendUnavailableError, ContractError, FallbackError
from .ops import ALL_OPS, COMPOSITES, PRIMITIVES
from .protocol import CONTRACT_VERSION, Backend

__all__ = [
    "ENTRY_POINT_GROUP",
    "FIRST_PARTY",
    "LoadedBackend",
    "accelerators",
    "available",
    "declare_decomposition",
    "decomposed",
    "fallback_allowed",
    "fallback_counts",
    "get",
    "get_fallback_policy",
    "is_contiguous",
    "is_deterministic",
    "is_deterministic_warn_only",
    "register",
    "set_deterministic",
    "set_fallback_policy",
    "set_interposer",
    "status",
    "unregister",
]

ENTRY_POINT_GROUP = "ember.backends"
# Reserved names and the distributions allowed to claim them.
FIRST_PARTY = {"cpu": "ember-cpu", "cuda": "ember-cuda", "opencl": "ember-opencl"}
_POLICIES = ("warn", "error", "silent")

_policy = os.environ.get("EMBER_FALLBACK", "warn")
if _policy not in _POLICIES:
    _policy = "warn"
_deterministic = False
_warn_only = False
# The dispatcher's hook: wraps each resolved kernel while modes are active (None: no modes).
_interposer: Callable[[LoadedBackend, str, Callable[..., Any]], Callable[..., Any]] | None = None
_fallback_counts: dict[tuple[str, str], int] = {}
# Every live LoadedBackend, registered or not (tensors may outlive ``unregister``): policy
# and mode changes re-resolve them all.
_instances: weakref.WeakSet[LoadedBackend] = weakref.WeakSet()

_entry_points: dict[str, EntryPoint] | None = None
_discovery_errors: dict[str, str] = {}
_loaded: dict[str, LoadedBackend] = {}
_broken: dict[str, str] = {}
_warned: set[tuple[str, str]] = set()
# ``accelerators()``'s answer, emptied whenever a backend is loaded, registered or forgotten.
_accelerator_rows: list[tuple[str, bool]] = []
# Composites the frontend can compute from primitives (filled by ``declare_decomposition``),
# each with a factory for a kernel-shaped adapter where the frontend offers one (None: the
# decomposition lives inside the op's frontend function and has no kernel form).
_decomposed: dict[str, Callable[[LoadedBackend], Callable[..., Any]] | None] = {}
# Composite -> the frontend module whose import registers its decomposition, where the
# declaration named one (imported when a backend lacking the composite's kernel resolves).
_decomposition_modules: dict[str, str] = {}


class LoadedBackend:
    """A backend with its kernels resolved; what a Tensor holds as ``_be``.

    ``k`` maps every op to what runs it, resolved once (and again when a policy or the
    dispatcher's modes change): the native kernel (its deterministic variant under
    ``use_deterministic_algorithms``; inputs made contiguous first on a ``contiguous_only``
    backend), else ``None`` for a composite the frontend decomposes, else the CPU fallback
    under the user's policy, else a kernel that raises a clear error. Only the frontend's
    dispatcher (``ember/_dispatch.py``) reads it.
    """

    __slots__ = ("__weakref__", "backend", "deterministic", "dist", "k", "name", "native", "unavailable")

    def __init__(
        self,
        name: str,
        backend: Backend,
        native: dict[str, Callable[..., Any]],
        dist: str,
        deterministic: dict[str, Callable[..., Any]] | None = None,
    ):
        self.name = name
        self.backend = backend
        self.native = native
        self.deterministic = deterministic or {}
        self.dist = dist
        self.unavailable = backend.unavailable_reason()
        self.k: dict[str, Callable[..., Any] | None] = {}
        self.resolve()
        _instances.add(self)

    def resolve(self) -> None:
        """(Re)build the op -> callable table under the current policies."""
        table: dict[str, Callable[..., Any] | None] = {}
        dense = bool(getattr(self.backend, "contiguous_only", False))
        for op in ALL_OPS:
            table[op] = self._resolve(op, dense)
        self.k.clear()
        self.k.update(table)
        _import_decompositions(op for op in _decomposition_modules if op not in self.native)

    def _resolve(self, op: str, dense: bool) -> Callable[..., Any] | None:
        fn = self.native.get(op)
        if fn is None:
            if op in COMPOSITES and op in _decomposed:
                return None  # the frontend runs the decomposition, on this device
            fn = _fallback(self, op)
        else:
            if _deterministic and op in self.backend.nondeterministic:
                fn = self.deterministic.get(op) or _nondeterministic(self.name, op, fn)
            if dense and ALL_OPS[op].kind != "view" and op not in _ALIASING:
                fn = _contiguous_inputs(self, fn, writes_first=op in _WRITES_FIRST)
        return fn if _interposer is None else _interposer(self, op, fn)

    def fallbacks(self) -> list[str]:
        """Primitive ops this backend runs through the CPU fallback."""
        return [op for op in PRIMITIVES if op not in self.native]

    def composite_fallbacks(self) -> list[str]:
        """Composites this backend runs on the CPU: no kernel of its own and no decomposition.

        Meaningful once ``ember`` (the frontend, which declares its decompositions) is imported.
        """
        if self.name == "cpu":
            return []
        return [op for op in COMPOSITES if op not in self.native and op not in _decomposed]

    def decomposed_composites(self) -> list[str]:
        """Composites this backend runs through the frontend's decomposition into primitives."""
        return [op for op in COMPOSITES if op not in self.native and op in _decomposed]

    def kernel(self, op: str) -> Callable[..., Any] | None:
        """What runs ``op`` on native arrays: the table's kernel, else the decomposition's
        kernel-shaped adapter (for testing it like a kernel), else None."""
        fn = self.k.get(op)
        if fn is None and self.name != "cpu" and _decomposed.get(op) is not None:
            fn = _decomposed[op](self)  # type: ignore[misc]
        return fn

    def overridden_composites(self) -> list[str]:
        return [op for op in COMPOSITES if op in self.native]


def _nondeterministic(name: str, op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``op``'s kernel under ``use_deterministic_algorithms(True)`` when the backend has no
    deterministic variant: PyTorch's error, or its warning and the kernel under ``warn_only``."""
    if _warn_only and _deterministic:
        message = (
            f"{op} (backend '{name}') does not have a deterministic implementation, but you set "
            "'ember.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue "
            "to help us prioritize adding deterministic support for this operation."
        )

        def warner(*args: Any, **kwargs: Any) -> Any:
            warnings.warn(message, UserWarning, stacklevel=3)
            return fn(*args, **kwargs)

        return warner

    def raiser(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{op} (backend '{name}') does not have a deterministic implementation, but you set "
            "'ember.use_deterministic_algorithms(True)'. You can turn off determinism just for "
            "this operation, or you can use the 'warn_only=True' option, if that's acceptable "
            "for your application. You can also file an issue to help us prioritize adding "
            "deterministic support for this operation."
        )

    return raiser


# Kernels that alias or write their array arguments: a contiguous copy would lose the
# write, so they get their arrays as they are (the frontend hands the optimizer updates only
# contiguous tensors on such backends).
_ALIASING = frozenset(
    {"assign", "sgd_update", "adam_update", "sgd_update_foreach", "adam_update_foreach", "mul_foreach"}
)
# Kernels that write into their first argument: it is copied, written, and copied back.
_WRITES_FIRST = frozenset({"index_put"})


def _contiguous_inputs(
    lb: LoadedBackend, fn: Callable[..., Any], writes_first: bool = False
) -> Callable[..., Any]:
    """``fn`` given only contiguous arrays (the promise to a ``contiguous_only`` backend):
    each strided array argument, alone or in a list, is first copied into a new contiguous
    array with the backend's own ``empty`` and ``assign`` (which take strided arrays)."""
    be = lb.backend
    kind = be.array_type
    assign = lb.native.get("assign")

    def strided(a: Any) -> bool:
        shape = tuple(int(s) for s in (a.shape if hasattr(a, "shape") else be.to_numpy(a).shape))
        return not is_contiguous(shape, be.layout(a)[0])

    def copy(a: Any) -> Any:
        if assign is None or not (hasattr(a, "shape") and hasattr(a, "dtype")):
            return be.from_numpy(_dense_host(be.to_numpy(a)), be.index_of(a))
        out = be.empty(tuple(int(s) for s in a.shape), _dtype_of(a), be.index_of(a))
        assign(out, a)
        return out

    def dense(a: Any) -> Any:
        if isinstance(a, kind):
            return copy(a) if strided(a) else a
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], kind):
            return type(a)(dense(x) for x in a)
        return a

    def run(*args: Any, **kwargs: Any) -> Any:
        return fn(*(dense(a) for a in args), **kwargs)

    def run_writing(target: Any, *args: Any, **kwargs: Any) -> Any:
        if not strided(target):
            return fn(target, *(dense(a) for a in args), **kwargs)
        tmp = copy(target)
        out = fn(tmp, *(dense(a) for a in args), **kwargs)
        assign(target, tmp)  # type: ignore[misc]
        return out

    return run_writing if writes_first and assign is not None else run


def _dtype_of(a: Any) -> Any:
    import numpy as np

    from .dtypes import DTYPES_BY_NAME

    return DTYPES_BY_NAME[np.dtype(a.dtype).name]


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether ``strides`` (in elements) are C-contiguous for ``shape`` (size-1 dims and empty
    arrays place no constraint, as in PyTorch)."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(tuple(strides))):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def fallback_allowed(backend: str, op: str, stacklevel: int = 4) -> None:
    """The user's fallback policy for running ``op`` of ``backend`` on the CPU: raise under
    'error', warn once per (backend, op) under 'warn'; every allowed fallback is counted."""
    if _policy == "error":
        raise FallbackError(
            f"{op}: backend '{backend}' has no kernel and the fallback policy is 'error'; "
            "use ember.backends.set_fallback_policy('warn') or move the tensors to 'cpu'"
        )
    if _policy == "warn" and (backend, op) not in _warned:
        _warned.add((backend, op))
        warnings.warn(
            f"{op}: backend '{backend}' has no kernel; running it on the CPU and copying "
            "back (set ember.backends.set_fallback_policy('silent') to hide this)",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
    key = (backend, op)
    _fallback_counts[key] = _fallback_counts.get(key, 0) + 1


def fallback_counts() -> dict[tuple[str, str], int]:
    """How many times each (backend, op) ran on the CPU in this process."""
    return dict(_fallback_counts)


def _fallback(lb: LoadedBackend, op: str) -> Callable[..., Any]:
    """A kernel that runs ``op`` on the CPU backend and copies the result back."""
    if lb.name == "cpu" or not ALL_OPS[op].may_fall_back:

        def missing(*args: Any, **kwargs: Any) -> Any:
            if lb.name == "cpu":
                raise FallbackError(f"{op}: backend 'cpu' registers no kernel for it")
            raise FallbackError(
                f"{op}: backend '{lb.name}' has no kernel and this op cannot fall back to "
                "the CPU (it aliases or writes device memory); the backend must implement it"
            )

        return missing

    def run_on_cpu(*args: Any) -> Any:
        fallback_allowed(lb.name, op)
        cpu = get("cpu")
        be = lb.backend
        index = 0
        host_args = []
        for a in args:
            if isinstance(a, be.array_type):
                index = be.index_of(a)
                host_args.append(cpu.backend.from_numpy(_dense_host(be.to_numpy(a)), 0))
            elif isinstance(a, (list, tuple)) and a and isinstance(a[0], be.array_type):
                index = be.index_of(a[0])
                host_args.append([cpu.backend.from_numpy(_dense_host(be.to_numpy(x)), 0) for x in a])
            else:
                host_args.append(a)
        if ALL_OPS[op].kind in ("creation", "random"):
            index, host_args[-1] = host_args[-1], 0
        out = cpu.native[op](*host_args)
        if isinstance(out, tuple):
            return tuple(be.from_numpy(_dense_host(cpu.backend.to_numpy(o)), index) for o in out)
        return be.from_numpy(_dense_host(cpu.backend.to_numpy(out)), index)

    return run_on_cpu


def _dense_host(a: Any) -> Any:
    """A C-contiguous NumPy array (0-d stays 0-d), as a device upload expects."""
    import numpy as np

    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy(order="C")


def _discover() -> dict[str, EntryPoint]:
    global _entry_points
    if _entry_points is not None:
        return _entry_points
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(ENTRY_POINT_GROUP):
        dist = ep.dist or "?"
        if ep.name in found:
            other = found[ep.name].dist
            if other is not None and other == dist:
                continue  # the same distribution seen twice on sys.path
            _discovery_errors[ep.name] = (
                f"backend name '{ep.name}' is claimed by two distributions: "
                f"'{other or '?'}' and '{dist}'; uninstall one"
            )
            continue
        reserved = FIRST_PARTY.get(ep.name)
        if reserved is not None and _normalise(dist) != reserved:
            _discovery_errors[ep.name] = (
                f"backend name '{ep.name}' is reserved for '{reserved}' but distribution '{dist}' claims it"
            )
            continue
        found[ep.name] = ep
    _entry_points = found
    return found


def _normalise(dist: str) -> str:
    return dist.lower().replace("_", "-")


def _load(name: str) -> LoadedBackend:
    eps = _discover()
    if name in _discovery_errors:
        raise ContractError(_discovery_errors[name])
    if name not in eps:
        known = sorted(set(eps) | set(_loaded))
        raise RuntimeError(
            f"Unknown device type '{name}': no installed backend provides it "
            f"(installed: {', '.join(known) or 'none'}); install one, e.g. pip install ember-{name}"
        )
    ep = eps[name]
    try:
        plugin = ep.load()
    except Exception as e:  # a broken plugin must not break ember
        raise BackendError(f"backend '{name}' failed to import: {type(e).__name__}: {e}") from e
    return _install(name, plugin, ep.dist or "?")


def _install(name: str, plugin: Any, dist: str) -> LoadedBackend:
    pm = pluggy.PluginManager("ember")
    pm.add_hookspecs(hookspecs)
    try:
        pm.register(plugin, name=name)
        pm.check_pending()
    except pluggy.PluginValidationError as e:
        raise ContractError(f"backend '{name}': {e}") from e
    backend = pm.hook.ember_backend()
    if backend is None:
        raise ContractError(f"backend '{name}': its plugin implements no ember_backend hook")
    _check_version(name, backend)
    native: dict[str, Callable[..., Any]] = {}
    variants: dict[str, Callable[..., Any]] = {}

    def register_kernel(op: str, fn: Callable[..., Any], *, deterministic: bool = False) -> None:
        if op not in ALL_OPS:
            raise ContractError(
                f"backend '{name}' registers a kernel for unknown op '{op}'; "
                "op names come from ember.backends.ops.ALL_OPS"
            )
        if not callable(fn):
            raise ContractError(f"backend '{name}': kernel for '{op}' is not callable")
        if deterministic and op not in backend.nondeterministic:
            raise ContractError(
                f"backend '{name}' registers a deterministic variant of '{op}' but does not "
                f"declare '{op}' in Backend.nondeterministic"
            )
        (variants if deterministic else native)[op] = fn

    pm.hook.ember_register_kernels(backend=name, register=register_kernel)
    lonely = sorted(set(variants) - set(native))
    if lonely:
        raise ContractError(f"backend '{name}' registers deterministic variants without kernels: {lonely}")
    return LoadedBackend(name, backend, native, dist, variants)


def _check_version(name: str, backend: Any) -> None:
    theirs = str(getattr(backend, "contract_version", "?"))
    if theirs.split(".")[0] != CONTRACT_VERSION.split(".")[0]:
        raise ContractError(
            f"backend '{name}' was built for ember contract {theirs}, but this ember "
            f"implements contract {CONTRACT_VERSION}; upgrade the backend or ember"
        )


def get(name: str) -> LoadedBackend:
    """The loaded backend ``name``, loading it on first use; raises if it cannot be used."""
    lb = _loaded.get(name)
    if lb is None:
        if name in _broken:
            raise BackendError(_broken[name])
        try:
            lb = _load(name)
        except BackendError as e:
            _broken[name] = str(e)
            raise
        _loaded[name] = lb
        _accelerator_rows.clear()
    if lb.unavailable is not None:
        raise BackendUnavailableError(f"backend '{name}' is installed but unavailable: {lb.unavailable}")
    return lb


def status() -> list[dict[str, Any]]:
    """One record per installed backend, for ``ember info``; never raises."""
    names = sorted(set(_discover()) | set(_loaded) | set(_discovery_errors))
    rows = []
    for name in names:
        try:
            get(name)
        except (BackendError, RuntimeError, ImportError) as e:  # recorded in _broken
            _broken.setdefault(name, str(e))
        lb = _loaded.get(name)
        if lb is None:
            err = _discovery_errors.get(name) or _broken.get(name, "not loaded")
            rows.append({"name": name, "available": False, "reason": err})
            continue
        be = lb.backend
        row: dict[str, Any] = {
            "name": name,
            "distribution": lb.dist,
            "version": be.version,
            "available": lb.unavailable is None,
            "reason": lb.unavailable,
            "dtypes": [d.name for d in sorted(be.dtypes, key=_dtype_order)],
            "fallbacks": lb.fallbacks(),
            "composite_fallbacks": lb.composite_fallbacks(),
            "fallback_calls": {op: n for (b, op), n in sorted(_fallback_counts.items()) if b == name},
            "decomposed": lb.decomposed_composites(),
            "overrides": lb.overridden_composites(),
        }
        if lb.unavailable is None:
            row["devices"] = [be.device_name(i) for i in range(be.device_count())]
        rows.append(row)
    return rows


def _dtype_order(d: Any) -> int:
    from .dtypes import ALL_DTYPES

    return ALL_DTYPES.index(d)


def available() -> list[str]:
    """Names of installed backends that can be used on this machine now."""
    return [row["name"] for row in status() if row["available"]]


def accelerators() -> list[tuple[str, bool]]:
    """Installed accelerator backends, best first, each with whether it can run now.

    A backend may declare ``is_accelerator`` and ``accelerator_priority`` (both optional:
    without them every backend but ``cpu`` is an accelerator of priority 0); the highest
    priority comes first, ties in name order. Backends that fail to load are left out
    (``status()`` says why). Cached until a backend is loaded, registered or forgotten:
    ``ember.accelerator`` asks on every call.
    """
    if _accelerator_rows:
        return list(_accelerator_rows)
    rows = []
    for name in sorted(set(_discover()) | set(_loaded)):
        if name not in _loaded:
            try:
                get(name)
            except (BackendError, RuntimeError, ImportError):
                pass  # unavailable ones are loaded all the same; broken ones stay out
        lb = _loaded.get(name)
        if lb is None or not getattr(lb.backend, "is_accelerator", name != "cpu"):
            continue
        rows.append((-int(getattr(lb.backend, "accelerator_priority", 0)), name, lb.unavailable is None))
    rows.sort()
    _accelerator_rows[:] = [(name, ok) for _, name, ok in rows]
    return list(_accelerator_rows)


def register(name: str, plugin: Any, dist: str = "<in-process>") -> LoadedBackend:
    """Install a backend plugin object in this process (tests, notebooks, prototypes).

    ``plugin`` implements the same hooks as an entry-point plugin.
    """
    if name in _loaded or name in _discover():
        raise ContractError(f"backend name '{name}' is already registered")
    lb = _install(name, plugin, dist)
    _loaded[name] = lb
    _accelerator_rows.clear()
    return lb


def unregister(name: str) -> None:
    """Forget an in-process backend (tensors on it stop working)."""
    _loaded.pop(name, None)
    _broken.pop(name, None)
    _accelerator_rows.clear()


def declare_decomposition(
    op: str,
    make_kernel: Callable[[LoadedBackend], Callable[..., Any]] | None = None,
    module: str | None = None,
) -> None:
    """Record that the frontend computes composite ``op`` from primitives when a backend has no
    kernel for it (called by the frontend at import; a contract error for a non-composite).

    ``make_kernel(lb)``, where given, returns the decomposition as a kernel on ``lb``'s arrays.
    ``module``, where given, is imported (registering the decomposition) before any backend
    without ``op``'s kernel runs it.
    """
    if op not in COMPOSITES:
        raise ContractError(f"'{op}' is not a composite op; only composites have decompositions")
    _decomposed[op] = make_kernel
    if module is not None:
        _decomposition_modules[op] = module
    lacking = False
    for lb in list(_instances):
        if op not in lb.native:
            lb.k[op] = None
            lacking = True
    if lacking:
        _import_decompositions((op,))


def _import_decompositions(ops: Iterable[str]) -> None:
    """Import the modules that define the decompositions of ``ops`` (those not imported yet)."""
    for name in sorted({_decomposition_modules[op] for op in ops if op in _decomposition_modules}):
        if name not in sys.modules:
            importlib.import_module(name)


def decomposed() -> frozenset[str]:
    """The composites the frontend has declared a decomposition for."""
    return frozenset(_decomposed)


def set_fallback_policy(policy: str) -> None:
    """What a missing primitive kernel does: ``warn`` once per op, ``error`` or ``silent``."""
    global _policy
    if policy not in _POLICIES:
        raise ValueError(f"fallback policy must be one of {_POLICIES}, got {policy!r}")
    _policy = policy
    _warned.clear()
    _resolve_all()


def get_fallback_policy() -> str:
    return _policy


def set_deterministic(flag: bool, warn_only: bool = False) -> None:
    """Under ``flag``, kernels a backend declares nondeterministic are replaced by its
    registered deterministic variant, else raise (or warn and run, with ``warn_only``)."""
    global _deterministic, _warn_only
    _deterministic, _warn_only = bool(flag), bool(warn_only)  # PyTorch keeps warn_only as given
    _resolve_all()


def is_deterministic() -> bool:
    return _deterministic


def is_deterministic_warn_only() -> bool:
    return _warn_only


def set_interposer(
    wrap: Callable[[LoadedBackend, str, Callable[..., Any]], Callable[..., Any]] | None,
) -> None:
    """The dispatcher's hook (``ember/_dispatch.py``): ``wrap(lb, op, fn)`` is applied to every
    resolved kernel while dispatch modes are active; ``None`` restores the bare kernels."""
    global _interposer
    _interposer = wrap
    _resolve_all()


def _resolve_all() -> None:
    for lb in list(_instances):
        lb.resolve()
