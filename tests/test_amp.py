"""ember.amp on ember's own terms: the per-device-type policy (CUDA's lists on every device but
cpu), backends' declared dtypes, backward's dtypes, and GradScaler's one host read per step.
(Behaviour shared with PyTorch is proved against it in tests_torch/test_amp_torch.py.)"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ember
import pytest
from ember import amp
from ember._dispatch import DispatchMode
from ember.amp import GradScaler, autocast

MINIMAL = Path(__file__).resolve().parent.parent / "examples" / "minimal_backend"


class Record(DispatchMode):
    """Every kernel call: its op name and the dtypes of its array arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def __ember_dispatch__(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict) -> Any:
        self.calls.append((op, [str(a.dtype) for a in args if hasattr(a, "dtype") and hasattr(a, "shape")]))
        return run(*args, **kwargs)


def test_other_device_types_follow_cuda_policy(cpu_prims: str) -> None:
    x = ember.rand(3, 3, device=cpu_prims)
    low = x.to(ember.bfloat16)
    with autocast(cpu_prims, dtype=ember.bfloat16):
        got = {
            "mm": (x @ x).dtype,
            "exp": ember.exp(low).dtype,
            "softmax": ember.softmax(low, 0).dtype,
            "softmax_dtype": ember.softmax(low, 0, dtype=ember.float64).dtype,
            "sum": low.sum().dtype,
            "cat": ember.cat([low, x]).dtype,
            "addcmul": ember.addcmul(low, low, low).dtype,
            "add": (low + low).dtype,
            "f64_mm": (x.double() @ x.double()).dtype,
        }
    assert got == {
        "mm": ember.bfloat16,
        "exp": ember.float32,
        "softmax": ember.float32,
        "softmax_dtype": ember.float64,
        "sum": ember.float32,
        "cat": ember.float32,
        "addcmul": ember.bfloat16,
        "add": ember.bfloat16,
        "f64_mm": ember.float64,
    }
    assert amp.get_autocast_dtype(cpu_prims) == ember.float16  # PyTorch's non-cpu default


def test_region_of_one_device_type_leaves_others_alone(cpu_prims: str) -> None:
    a, b = ember.ones(2, 2, device="cpu"), ember.ones(2, 2, device=cpu_prims)
    with autocast(cpu_prims, dtype=ember.bfloat16):
        assert ((a @ a).dtype, (b @ b).dtype) == (ember.float32, ember.bfloat16)
    with autocast("cpu"):
        assert ((a @ a).dtype, (b @ b).dtype) == (ember.bfloat16, ember.float32)


@pytest.fixture
def minimal() -> Iterator[str]:
    """The example third-party backend (it declares no bfloat16): installed, or registered in
    this process from examples/minimal_backend."""
    if "minimal" in ember.backends.available():
        yield "minimal"
        return
    sys.path.insert(0, str(MINIMAL))
    try:
        import ember_minimal.plugin

        ember.backends.register("minimal", ember_minimal.plugin)
        yield "minimal"
    finally:
        ember.backends.unregister("minimal")
        sys.path.remove(str(MINIMAL))


def test_backend_without_bfloat16_warns_and_disables(minimal: str) -> None:
    x = ember.ones(2, 2, device=minimal)
    with pytest.warns(UserWarning, match="MINIMAL Autocast only supports dtypes of ember.float16 currently"):
        region = autocast("minimal", dtype=ember.bfloat16)
    with region:
        assert not amp.is_autocast_enabled("minimal")
        assert (x @ x).dtype == ember.float32
    with autocast("minimal"):  # float16, the default off cpu, is declared
        assert (x @ x).dtype == ember.float16


def test_unavailable_cuda_warns_and_disables() -> None:
    if "cuda" in ember.backends.available():
        pytest.skip("a GPU is present: the region is enabled")
    with pytest.warns(UserWarning, match="CUDA is not available"), autocast("cuda"):
        assert not amp.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
        assert not GradScaler().is_enabled()


def test_backward_runs_in_the_dtypes_forward_chose() -> None:
    x = ember.rand(4, 3, requires_grad=True, device="cpu")
    w = ember.rand(2, 3, requires_grad=True, device="cpu")
    with autocast("cpu"):
        y = ember.nn.functional.linear(x, w)
        loss = ember.nn.functional.mse_loss(y, ember.zeros(4, 2, device="cpu"))
    with Record() as rec:
        loss.backward()
    mms = [dts for op, dts in rec.calls if op == "matmul"]
    assert mms and all(d == "bfloat16" for dts in mms for d in dts)
    assert (x.grad.dtype, w.grad.dtype) == (ember.float32, ember.float32)


def test_state_functions() -> None:
    ember.set_default_device("cpu")  # restored by conftest
    assert amp.is_autocast_available("cpu") and not amp.is_autocast_available("nonexistent")
    amp.set_autocast_enabled("cpu", True)
    try:
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.bfloat16
        amp.set_autocast_dtype("cpu", ember.float16)
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.float16
    finally:
        amp.set_autocast_enabled("cpu", False)
        amp.set_autocast_dtype("cpu", ember.bfloat16)
    assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.float32
    assert amp.autocast_increment_nesting() == 1 and amp.autocast_decrement_nesting() == 0
    amp.set_autocast_cache_enabled(False)
    assert not amp.is_autocast_cache_enabled()
    amp.set_autocast_cache_enabled(True)


def test_cache_is_cleared_when_the_outermost_region_ends() -> None:
    w = ember.ones(2, 2, requires_grad=True)
    with autocast("cpu"):
        with autocast("cpu"):
            a = w @ w
        b = w @ w  # the inner exit did not clear it
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
    from ember.amp.autocast_mode import _tls

    assert not _tls.cache


def _model(n: int) -> tuple[list[ember.Tensor], Any]:
    ps = [ember.nn.Parameter(ember.rand(3, 2, device="cpu")) for _ in range(n)]
    return ps, ember.optim.SGD(ps, lr=0.1)


class HostReads:
    """Counts the backend's device-to-host copies (``Tensor.item`` reads the backend directly,
    not through the dispatcher's ``to_host``, so a mode would not see it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, be: Any) -> None:
        self.n = 0
        real = be.to_numpy

        def counted(x: Any) -> Any:
            self.n += 1
            return real(x)

        monkeypatch.setattr(be, "to_numpy", counted)

    def take(self) -> int:
        n, self.n = self.n, 0
        return n


@pytest.mark.parametrize("grad", [1.0, float("inf"), float("nan")])
def test_step_reads_the_host_once_for_any_number_of_parameters(
    grad: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    ps, opt = _model(6)
    before = [p.detach().clone() for p in ps]
    s = GradScaler("cpu", init_scale=4.0)
    s.scale(sum(p.sum() for p in ps)).backward()
    ps[3].grad[0, 1] = grad
    reads = HostReads(monkeypatch, ps[0]._be.backend)
    s.unscale_(opt)
    assert reads.take() == 0
    s.step(opt)
    assert reads.take() == 1
    s.update()
    assert reads.take() == 0
    stepped = [not ember.equal(p.detach(), b) for p, b in zip(ps, before)]
    assert stepped == [grad == 1.0] * 6
    assert s.get_scale() == (4.0 if grad == 1.0 else 2.0)
    assert ember.equal(ps[0].grad, ember.ones(3, 2, device="cpu"))  # unscaled in place


def test_scale_accepts_nested_sequences() -> None:
    s = GradScaler("cpu", init_scale=2.0)
    a, b = ember.tensor(1.0), ember.tensor(3.0)
    out = s.scale([a, (b, a)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    assert [out[0].item(), out[1][0].item(), out[1][1].item()] == [2.0, 6.0, 2.0]
    assert [t.item() for t in s.scale(iter([a, b]))] == [2.0, 6.0]


def test_pickle_only_between_iterations() -> None:
    import pickle

    ps, opt = _model(1)
    s = GradScaler("cpu", init_scale=8.0, growth_interval=1)
    s.scale(ps[0].sum()).backward()
    s.unscale_(opt)
    with pytest.raises(AssertionError, match="may only be pickled at the beginning"):
        pickle.dumps(s)
    s.step(opt)
    s.update()
    copy = pickle.loads(pickle.dumps(s))
    assert (
        copy.state_dict()
        == s.state_dict()
        == {
            "scale": 16.0,
            "growth_factor": 2.0,
            "backoff_factor": 0.5,
            "growth_interval": 1,
            "_growth_tracker": 0,
        }
    )


def test_per_device_spellings_warn_as_deprecated_and_work() -> None:
    from ember.amp.legacy import cpu_amp, cuda_amp

    with pytest.warns(FutureWarning, match=r"Please use `ember.amp.autocast\('cpu', args...\)` instead"):
        region = cpu_amp.autocast()
    with region:
        assert (ember.ones(2, 2, device="cpu") @ ember.ones(2, 2, device="cpu")).dtype == ember.bfloat16
    with pytest.warns(FutureWarning, match=r"Please use `ember.amp.GradScaler\('cuda', args...\)` instead"):
        scaler = cuda_amp.GradScaler(init_scale=4.0)
    assert scaler.get_scale() == (4.0 if scaler.is_enabled() else 1.0)


def test_regions_are_per_thread() -> None:
    """A region in one thread leaves another thread's ops alone (PyTorch's state is thread-local)."""
    import threading

    a = ember.ones(2, 2, device="cpu")
    seen: dict[str, Any] = {}
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        seen["other_before"] = (a @ a).dtype
        with autocast("cpu", dtype=ember.float16):
            inside.set()
            done.wait(10)
            seen["other_inside"] = (a @ a).dtype
        seen["other_after"] = (a @ a).dtype

    with autocast("cpu"):
        t = threading.Thread(target=other)
        t.start()
        inside.wait(10)
        seen["main_inside"] = (a @ a).dtype
        done.set()
        t.join(10)
    seen["main_after"] = (a @ a).dtype
    assert seen == {
        "other_before": ember.float32,
        "other_inside": ember.float16,
        "other_after": ember.float32,
        "main_inside": ember.bfloat16,
        "main_after": ember.float32,
    }
    from ember._autocast_hook import hook

    assert hook[0] is None  # uninstalled once no thread has a region


def test_demo_trains_in_mixed_precision(capsys) -> None:
    pytest.importorskip("sklearn")
    from ember.demo import main

    assert main(["--epochs", "2", "--amp"]) == 0
    assert "in mixed precision (ember.bfloat16)" in capsys.readouterr().out
