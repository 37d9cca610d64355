"""The dispatcher (``ember/_dispatch.py``): one door between every op and its kernel.

Modes see every kernel call, in stack order; with none active the tables hold the bare
kernels; deterministic variants replace nondeterministic kernels under
``use_deterministic_algorithms``; the CPU fallback is one policy, counted per op.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import ember
import numpy as np
import pytest
from ember import _dispatch
from ember.backends import ContractError, FallbackError, registry
from ember.backends.hookspecs import hookimpl
from ember.backends.ops import PRIMITIVES
from ember_cpu.backend import CPUBackend
from ember_cpu.kernels import KERNELS


class Recorder(_dispatch.DispatchMode):
    """Remembers (op, backend) of every call it sees."""

    def __init__(self, log: list[Any] | None = None, tag: str = "") -> None:
        self.calls: list[tuple[str, str]] = [] if log is None else log
        self.tag = tag

    def __ember_dispatch__(
        self, op: str, backend: str, run: Callable[..., Any], args: tuple, kwargs: dict
    ) -> Any:
        self.calls.append((self.tag + op, backend))
        return run(*args, **kwargs)


def ops_of(rec: Recorder) -> list[str]:
    return [op for op, _ in rec.calls]


def test_no_mode_tables_hold_the_bare_kernels() -> None:
    be = ember.ones(1)._be
    assert _dispatch.active_modes() == ()
    assert be.k["add"] is be.native["add"]
    assert be.k["matmul"] is be.native["matmul"]


def test_a_mode_sees_every_kernel_of_an_op_with_its_inputs_and_outputs() -> None:
    seen: list[Any] = []

    class Spy(_dispatch.DispatchMode):
        def __ember_dispatch__(self, op, backend, run, args, kwargs):  # type: ignore[no-untyped-def]
            out = run(*args, **kwargs)
            seen.append((op, backend, [np.asarray(a).tolist() for a in args], np.asarray(out).tolist()))
            return out

    a, b = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])
    with Spy():
        c = a + b
    assert c.tolist() == [4.0, 6.0]
    assert seen == [("add", "cpu", [[1.0, 2.0], [3.0, 4.0]], [4.0, 6.0])]
    assert ember.ones(1)._be.k["add"] is ember.ones(1)._be.native["add"]  # bare again after exit


def test_a_mode_may_replace_the_result() -> None:
    class Doubling(_dispatch.DispatchMode):
        def __ember_dispatch__(self, op, backend, run, args, kwargs):  # type: ignore[no-untyped-def]
            out = run(*args, **kwargs)
            return out * 2 if op == "exp" else out

    with Doubling():
        y = ember.zeros(3).exp()
    assert y.tolist() == [2.0, 2.0, 2.0]


def test_modes_nest_and_the_last_entered_sees_a_call_first() -> None:
    log: list[Any] = []
    x = ember.ones(2)
    with Recorder(log, "outer:"), Recorder(log, "inner:"):
        x.neg()
    assert log == [("inner:neg", "cpu"), ("outer:neg", "cpu")]


def test_ops_a_mode_runs_itself_skip_it_and_the_modes_above() -> None:
    log: list[Any] = []

    class Probing(_dispatch.DispatchMode):
        def __ember_dispatch__(self, op, backend, run, args, kwargs):  # type: ignore[no-untyped-def]
            log.append(("probe:" + op, backend))
            if op == "neg":
                y.exp()  # seen by the modes below only
            return run(*args, **kwargs)

    x, y = ember.ones(2), ember.ones(1)
    with Recorder(log, "low:"), Probing(), Recorder(log, "high:"):
        x.neg()
    assert [op for op, _ in log] == ["high:neg", "probe:neg", "low:exp", "low:neg"]


def test_modes_exit_in_reverse_order_only() -> None:
    a, b = Recorder(), Recorder()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert _dispatch.active_modes() == ()


def test_functional_optimizer_and_copies_pass_through_modes() -> None:
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(1, 2, 3)
    opt = ember.optim.SGD(conv.parameters(), lr=0.1, momentum=0.9)
    x = ember.randn(1, 1, 5, 5)
    with Recorder() as rec:
        loss = ember.nn.functional.log_softmax(conv(x).flatten(1), 1).sum()
        loss.backward()
        opt.step()
        repr(x)  # printing reads the values on the host
        ember.tensor([1.0, 2.0])  # values from the host
    ops = set(ops_of(rec))
    assert {"conv2d", "log_softmax", "sum", "sgd_update"} <= ops
    assert "to_host" in ops and "from_host" in ops
    assert {backend for _, backend in rec.calls} == {"cpu"}


def test_autograd_backward_kernels_are_seen() -> None:
    x = ember.ones(3, requires_grad=True)
    with Recorder() as rec:
        (x * x).sum().backward()
    assert ops_of(rec).count("mul") >= 2  # forward, and backward's g * x
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


# --- deterministic variants -------------------------------------------------------------


class _Plugin:
    def __init__(
        self, name: str, kernels: dict[str, Any], variants: dict[str, Any], nondet: frozenset[str]
    ) -> None:
        self.name, self.kernels, self.variants, self.nondet = name, kernels, variants, nondet

    @hookimpl
    def ember_backend(self) -> Any:
        be = CPUBackend()
        be.name = self.name
        be.nondeterministic = self.nondet
        return be

    @hookimpl
    def ember_register_kernels(self, backend: str, register: Any) -> None:
        if backend != self.name:
            return
        for op, fn in self.kernels.items():
            register(op, fn)
        for op, fn in self.variants.items():
            register(op, fn, deterministic=True)


@pytest.fixture
def backend_factory() -> Iterator[Callable[..., str]]:
    names: list[str] = []

    def make(name: str, variants: dict[str, Any], nondet: frozenset[str], kernels: dict | None = None) -> str:
        names.append(name)
        registry.register(
            name, _Plugin(name, dict(KERNELS) if kernels is None else kernels, variants, nondet)
        )
        return name

    yield make
    ember.use_deterministic_algorithms(False)
    for name in names:
        registry.unregister(name)


def _scatter_add(dev: str) -> list[float]:
    x = ember.zeros(3, device=dev)
    idx = ember.tensor([0, 0, 2], device=dev)
    return x.scatter_add(0, idx, ember.ones(3, device=dev)).tolist()


def test_the_registered_deterministic_variant_runs_under_determinism(backend_factory: Any) -> None:
    used: list[str] = []

    def variant(*args: Any) -> Any:
        used.append("variant")
        return KERNELS["scatter"](*args)

    dev = backend_factory("cpu_det_variant", {"scatter": variant}, frozenset({"scatter"}))
    assert _scatter_add(dev) == [2.0, 0.0, 1.0] and used == []
    ember.use_deterministic_algorithms(True)
    assert _scatter_add(dev) == [2.0, 0.0, 1.0] and used == ["variant"]


def test_without_a_variant_determinism_raises_pytorchs_error(backend_factory: Any) -> None:
    dev = backend_factory("cpu_nondet", {}, frozenset({"scatter"}))
    ember.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError) as e:
        _scatter_add(dev)
    assert str(e.value) == (
        "scatter (backend 'cpu_nondet') does not have a deterministic implementation, but you set "
        "'ember.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
        "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
        "application. You can also file an issue to help us prioritize adding deterministic "
        "support for this operation."
    )


def test_warn_only_warns_and_runs(backend_factory: Any) -> None:
    dev = backend_factory("cpu_nondet_warn", {}, frozenset({"scatter"}))
    ember.use_deterministic_algorithms(True, warn_only=True)
    assert ember.is_deterministic_algorithms_warn_only_enabled()
    with pytest.warns(
        UserWarning, match=r"scatter \(backend 'cpu_nondet_warn'\) does not have a deterministic"
    ):
        assert _scatter_add(dev) == [2.0, 0.0, 1.0]
    ember.use_deterministic_algorithms(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _scatter_add(dev) == [2.0, 0.0, 1.0]


def test_use_deterministic_algorithms_wants_a_bool() -> None:
    with pytest.raises(TypeError, match=r"argument 'mode' \(position 1\) must be bool, not int"):
        ember.use_deterministic_algorithms(1)  # type: ignore[arg-type]


def test_a_variant_for_an_op_not_declared_nondeterministic_is_a_contract_error(backend_factory: Any) -> None:
    with pytest.raises(ContractError, match="deterministic variant of 'scatter' but does not declare"):
        backend_factory("cpu_bad_variant", {"scatter": KERNELS["scatter"]}, frozenset())


# --- one CPU fallback, counted ----------------------------------------------------------


def test_fallbacks_follow_one_policy_and_are_counted(backend_factory: Any) -> None:
    prims = {op: fn for op, fn in KERNELS.items() if op in PRIMITIVES and op != "exp"}
    dev = backend_factory("cpu_no_exp", {}, frozenset(), kernels=prims)
    before = registry.fallback_counts().get((dev, "exp"), 0)
    ember.backends.set_fallback_policy("silent")
    try:
        assert ember.zeros(2, device=dev).exp().tolist() == [1.0, 1.0]
        assert ember.zeros(2, device=dev).t().exp().tolist() == [1.0, 1.0]
        assert registry.fallback_counts()[(dev, "exp")] == before + 2
        row = next(r for r in registry.status() if r["name"] == dev)
        assert row["fallback_calls"]["exp"] == before + 2
        ember.backends.set_fallback_policy("error")
        with pytest.raises(FallbackError, match="exp: backend 'cpu_no_exp' has no kernel"):
            ember.zeros(2, device=dev).exp()
    finally:
        ember.backends.set_fallback_policy("warn")


def test_contiguous_only_kernels_get_contiguous_arrays(backend_factory: Any) -> None:
    seen: list[bool] = []

    def checking(op: str) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            seen.extend(a.flags.c_contiguous for a in args if isinstance(a, np.ndarray) and a.ndim > 1)
            return KERNELS[op](*args, **kwargs)

        return run

    kernels = dict(KERNELS)
    for op in ("add", "exp", "sum", "matmul"):
        kernels[op] = checking(op)

    class Dense(_Plugin):
        @hookimpl
        def ember_backend(self) -> Any:
            be = CPUBackend()
            be.name, be.contiguous_only = self.name, True
            return be

    registry.register("cpu_dense", Dense("cpu_dense", kernels, {}, frozenset()))
    try:
        x = ember.arange(12.0, device="cpu_dense").reshape(3, 4).t()
        assert not x.is_contiguous()
        y = ((x + x).exp() @ x.t()).sum(0)
        ref = np.arange(12.0).reshape(3, 4).T
        np.testing.assert_allclose(y.cpu().numpy(), (np.exp(ref + ref) @ ref.T).sum(0), rtol=1e-6)
        assert seen and all(seen)
    finally:
        registry.unregister("cpu_dense")
