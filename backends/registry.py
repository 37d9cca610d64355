"""Backend discovery (entry points through pluggy), kernel tables and cached lookup.

Each loaded backend gets one ``LoadedBackend`` record whose ``k`` dict maps every op name
to the callable the frontend should run: the backend's own kernel, a CPU-fallback wrapper
(primitives only) or ``None`` (a composite the frontend runs itself: through its
decomposition into primitives where it has one, else on the CPU backend and copied back).
``k`` is filled once at load and refilled in place when a policy changes, so the hot path
is one dict lookup.

Which composites have a decomposition is the frontend's knowledge: it declares them here
(``declare_decomposition``) when ``ember`` is imported, so ``composite_fallbacks`` can say
which composites a backend would run on the CPU.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pluggy

from . import hookspecs
from .errors import BackendError, BackendUnavailableError, ContractError, FallbackError
from .ops import ALL_OPS, COMPOSITES, PRIMITIVES
from .protocol import CONTRACT_VERSION, Backend

__all__ = [
    "ENTRY_POINT_GROUP",
    "FIRST_PARTY",
    "LoadedBackend",
    "available",
    "declare_decomposition",
    "decomposed",
    "get",
    "get_fallback_policy",
    "is_deterministic",
    "register",
    "set_deterministic",
    "set_fallback_policy",
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

_entry_points: dict[str, metadata.EntryPoint] | None = None
_discovery_errors: dict[str, str] = {}
_loaded: dict[str, LoadedBackend] = {}
_broken: dict[str, str] = {}
_warned: set[tuple[str, str]] = set()
# Composites the frontend can compute from primitives (filled by ``declare_decomposition``),
# each with a factory for a kernel-shaped adapter where the frontend offers one (None: the
# decomposition lives inside the op's frontend function and has no kernel form).
_decomposed: dict[str, Callable[[LoadedBackend], Callable[..., Any]] | None] = {}


class LoadedBackend:
    """A backend with its kernels resolved; what a Tensor holds as ``_be``."""

    __slots__ = ("backend", "dist", "k", "name", "native", "unavailable")

    def __init__(self, name: str, backend: Backend, native: dict[str, Callable[..., Any]], dist: str):
        self.name = name
        self.backend = backend
        self.native = native
        self.dist = dist
        self.unavailable = backend.unavailable_reason()
        self.k: dict[str, Callable[..., Any] | None] = {}
        self.resolve()

    def resolve(self) -> None:
        """(Re)build the op -> callable table under the current policies."""
        table: dict[str, Callable[..., Any] | None] = {}
        for op in ALL_OPS:
            fn = self.native.get(op)
            if fn is None and op in PRIMITIVES:
                fn = _fallback(self, op)
            if fn is not None and _deterministic and op in self.backend.nondeterministic:
                fn = _nondeterministic(self.name, op)
            table[op] = fn
        self.k.clear()
        self.k.update(table)

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


def _nondeterministic(name: str, op: str) -> Callable[..., Any]:
    def raiser(*args: Any) -> Any:
        raise RuntimeError(
            f"{op} does not have a deterministic implementation on backend '{name}', but you "
            "set 'ember.use_deterministic_algorithms(True)'. You can turn off determinism "
            "just for this operation, or move the tensors to another device."
        )

    return raiser


def _fallback(lb: LoadedBackend, op: str) -> Callable[..., Any]:
    """A kernel that runs ``op`` on the CPU backend and copies the result back."""
    if lb.name == "cpu" or not PRIMITIVES[op].may_fall_back:

        def missing(*args: Any) -> Any:
            raise FallbackError(
                f"{op}: backend '{lb.name}' has no kernel and this op cannot fall back to "
                "the CPU (it aliases or writes device memory); the backend must implement it"
            )

        return missing

    def run_on_cpu(*args: Any) -> Any:
        if _policy == "error":
            raise FallbackError(
                f"{op}: backend '{lb.name}' has no kernel and the fallback policy is 'error'; "
                "use ember.backends.set_fallback_policy('warn') or move the tensors to 'cpu'"
            )
        if _policy == "warn" and (lb.name, op) not in _warned:
            _warned.add((lb.name, op))
            warnings.warn(
                f"{op}: backend '{lb.name}' has no kernel; running it on the CPU and copying "
                "back (set ember.backends.set_fallback_policy('silent') to hide this)",
                RuntimeWarning,
                stacklevel=3,
            )
        cpu = get("cpu")
        be = lb.backend
        index = 0
        host_args = []
        for a in args:
            if isinstance(a, be.array_type):
                index = be.index_of(a)
                host_args.append(cpu.backend.from_numpy(be.to_numpy(a), 0))
            elif isinstance(a, (list, tuple)) and a and isinstance(a[0], be.array_type):
                index = be.index_of(a[0])
                host_args.append([cpu.backend.from_numpy(be.to_numpy(x), 0) for x in a])
            else:
                host_args.append(a)
        if PRIMITIVES[op].kind in ("creation", "random"):
            index, host_args[-1] = host_args[-1], 0
        out = cpu.native[op](*host_args)
        if isinstance(out, tuple):
            return tuple(be.from_numpy(cpu.backend.to_numpy(o), index) for o in out)
        return be.from_numpy(cpu.backend.to_numpy(out), index)

    return run_on_cpu


def _discover() -> dict[str, metadata.EntryPoint]:
    global _entry_points
    if _entry_points is not None:
        return _entry_points
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else "?"
        if ep.name in found:
            other = found[ep.name].dist
            if other is not None and other.name == dist:
                continue  # the same distribution seen twice on sys.path
            _discovery_errors[ep.name] = (
                f"backend name '{ep.name}' is claimed by two distributions: "
                f"'{other.name if other else '?'}' and '{dist}'; uninstall one"
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
    dist = ep.dist.name if ep.dist is not None else "?"
    return _install(name, plugin, dist)


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

    def register_kernel(op: str, fn: Callable[..., Any]) -> None:
        if op not in ALL_OPS:
            raise ContractError(
                f"backend '{name}' registers a kernel for unknown op '{op}'; "
                "op names come from ember.backends.ops.ALL_OPS"
            )
        if not callable(fn):
            raise ContractError(f"backend '{name}': kernel for '{op}' is not callable")
        native[op] = fn

    pm.hook.ember_register_kernels(backend=name, register=register_kernel)
    return LoadedBackend(name, backend, native, dist)


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


def register(name: str, plugin: Any, dist: str = "<in-process>") -> LoadedBackend:
    """Install a backend plugin object in this process (tests, notebooks, prototypes).

    ``plugin`` implements the same hooks as an entry-point plugin.
    """
    if name in _loaded or name in _discover():
        raise ContractError(f"backend name '{name}' is already registered")
    lb = _install(name, plugin, dist)
    _loaded[name] = lb
    return lb


def unregister(name: str) -> None:
    """Forget an in-process backend (tensors on it stop working)."""
    _loaded.pop(name, None)
    _broken.pop(name, None)


def declare_decomposition(
    op: str, make_kernel: Callable[[LoadedBackend], Callable[..., Any]] | None = None
) -> None:
    """Record that the frontend computes composite ``op`` from primitives when a backend has no
    kernel for it (called by the frontend at import; a contract error for a non-composite).

    ``make_kernel(lb)``, where given, returns the decomposition as a kernel on ``lb``'s arrays.
    """
    if op not in COMPOSITES:
        raise ContractError(f"'{op}' is not a composite op; only composites have decompositions")
    _decomposed[op] = make_kernel


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


def get_fallback_policy() -> str:
    return _policy


def set_deterministic(flag: bool) -> None:
    """Make nondeterministic kernels raise (flag True) or run (False)."""
    global _deterministic
    _deterministic = bool(flag)
    for lb in _loaded.values():
        lb.resolve()


def is_deterministic() -> bool:
    return _deterministic
