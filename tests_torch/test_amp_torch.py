"""ember.amp against torch.amp on the CPU: per-op result dtypes and values under autocast,
regions (nesting, disabled, decorator, cache), warnings and errors, GradScaler's schedule and
skipped steps, and the EffectivePyTorch seed's mixed-precision training loop."""

from __future__ import annotations

import re
import warnings
from typing import Any

import ember
import numpy as np
import pytest
from _amp_samples import SAMPLES
from ember._autocast_hook import AUTOCAST_OPS
from ember._dispatch import DispatchMode
from ember.amp import GradScaler, autocast, get_autocast_dtype, is_autocast_enabled

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode

# bfloat16 inputs PyTorch's own CPU kernels refuse (not autocast's business).
TORCH_REFUSES_BF16 = {
    "nuclear_norm",
    "pdist",
    "linalg.det",
    "linalg.slogdet",
    "linalg.pinv",
    "linalg.lu_factor",
    "linalg.lu_factor_ex",
    "lu_solve",
}
# ember refuses what PyTorch computes (strict xfail: fix and delete).
EMBER_REFUSES_BF16 = {"linalg.matrix_norm": "ember's linalg.matrix_norm rejects bfloat16 input"}


def _run(T: Any, name: str, dtype: str, ctx: Any) -> list[Any]:
    rng = np.random.default_rng(0)

    def A(*shape: int) -> Any:
        return T.tensor(rng.uniform(0.1, 1.0, shape).astype(np.float32)).to(getattr(T, dtype))

    def I(values: Any) -> Any:
        return T.tensor(values)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ctx:
            r = SAMPLES[name](T, A, I)
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _dt(x: Any) -> str:
    return str(x.dtype).split(".")[-1]


def _values(x: Any) -> np.ndarray:
    x = x.detach()
    if x.is_complex():
        return np.asarray(x.cpu().resolve_conj().numpy()).astype(np.complex128)
    return np.asarray(x.double().numpy())


def test_every_marked_op_has_a_sample() -> None:
    assert set(AUTOCAST_OPS) - set(SAMPLES) == {"nn.functional.ctc_loss"}


CASES = [
    pytest.param(
        n,
        d,
        marks=pytest.mark.xfail(strict=True, reason=EMBER_REFUSES_BF16[n])
        if d == "bfloat16" and n in EMBER_REFUSES_BF16
        else (),
    )
    for n in SAMPLES
    for d in ("float32", "bfloat16")
    if not (d == "bfloat16" and n in TORCH_REFUSES_BF16)
]


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_result_dtype_and_value_as_torch_cpu_autocast(name: str, dtype: str) -> None:
    t = _run(torch, name, dtype, torch.autocast("cpu"))
    e = _run(ember, name, dtype, autocast("cpu"))
    assert [_dt(x) for x in e] == [_dt(x) for x in t]
    for a, b in zip(e, t):
        np.testing.assert_allclose(_values(a), _values(b), rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("name", sorted(TORCH_REFUSES_BF16))
def test_torch_refuses_these_bfloat16_inputs(name: str) -> None:
    with pytest.raises((RuntimeError, NotImplementedError)):
        _run(torch, name, "bfloat16", torch.autocast("cpu"))


@pytest.mark.parametrize("name", ["matmul", "nn.functional.linear", "conv2d", "softmax", "cat", "sum"])
def test_float16_region_as_torch(name: str) -> None:
    t = _run(torch, name, "float32", torch.autocast("cpu", dtype=torch.float16))
    e = _run(ember, name, "float32", autocast("cpu", dtype=ember.float16))
    assert [_dt(x) for x in e] == [_dt(x) for x in t]


def _region_trace(T: Any, ac: Any, low: Any) -> list[Any]:
    x = T.ones(2, 2)
    out: list[Any] = []
    with ac("cpu"):
        out.append(_dt(x @ x))
        with ac("cpu", enabled=False):
            out.append(_dt(x @ x))
            with ac("cpu", dtype=T.float16):
                out.append(_dt(x @ x))
            out.append(_dt(x @ x))
        out.append(_dt(x @ x))
        out.append(_dt((x @ x) @ x.to(low)))
    out.append(_dt(x @ x))
    return out


def test_nested_and_disabled_regions_as_torch() -> None:
    assert _region_trace(ember, autocast, ember.bfloat16) == _region_trace(
        torch, torch.autocast, torch.bfloat16
    )


def test_state_queries_as_torch() -> None:
    def trace(T: Any, ac: Any, enabled: Any, get: Any) -> list[Any]:
        out = [
            enabled("cpu"),
            enabled(),
            _dt(T.empty(0, dtype=get("cpu"))),
            _dt(T.empty(0, dtype=get("cuda"))),
        ]
        with ac("cpu", dtype=T.float16):
            out += [enabled("cpu"), enabled(), _dt(T.empty(0, dtype=get("cpu")))]
            with ac("cpu", enabled=False):
                out.append(enabled("cpu"))
        return [*out, enabled("cpu"), _dt(T.empty(0, dtype=get("cpu")))]

    got = trace(ember, autocast, is_autocast_enabled, get_autocast_dtype)
    assert got == trace(torch, torch.autocast, torch.is_autocast_enabled, torch.get_autocast_dtype)


def test_decorator_as_torch() -> None:
    def f(T: Any, ac: Any) -> str:
        @ac("cpu")
        def g(a: Any) -> Any:
            return a @ a

        return _dt(g(T.ones(2, 2))) + _dt(T.ones(2, 2) @ T.ones(2, 2))

    assert f(ember, autocast) == f(torch, torch.autocast)


def test_gradients_reach_float32_leaves_as_torch() -> None:
    rng = np.random.default_rng(1)
    xs, ws, bs = (rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (3, 4), (3,)))
    grads = []
    for T, ac in ((torch, torch.autocast), (ember, autocast)):
        x, w, b = T.tensor(xs), T.tensor(ws, requires_grad=True), T.tensor(bs, requires_grad=True)
        with ac("cpu"):
            y = T.nn.functional.linear(x, w, b)
            loss = T.nn.functional.cross_entropy(y, T.tensor([0, 1, 2, 0, 1]))
        loss.backward()
        grads.append([(_dt(y), _dt(loss), _dt(w.grad), _dt(b.grad)), w.grad.numpy(), b.grad.numpy()])
    (te, *tv), (ee, *ev) = grads
    assert ee == te == ("bfloat16", "float32", "float32", "float32")
    for a, b in zip(ev, tv):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=1e-2)


class _EmberCasts(DispatchMode):
    def __init__(self) -> None:
        self.n = 0

    def __ember_dispatch__(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict) -> Any:
        self.n += op == "cast"
        return run(*args, **kwargs)


class _TorchCasts(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        self.n += "_to_copy" in str(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_weight_casts_cached_within_a_region_as_torch(cache_enabled: bool) -> None:
    def count(T: Any, ac: Any, mode: Any) -> list[int]:
        x, w = T.ones(2, 3), T.ones(4, 3, requires_grad=True)
        counts = []
        for _ in range(2):  # a second region casts again: the cache ends with the region
            with mode() as m, ac("cpu", cache_enabled=cache_enabled):
                T.nn.functional.linear(x, w)
                T.nn.functional.linear(x, w)
                T.nn.functional.linear(x.detach(), w.detach())
            counts.append(m.n)
        return counts

    assert count(ember, autocast, _EmberCasts) == count(torch, torch.autocast, _TorchCasts)


def test_unsupported_dtype_warns_and_disables_as_torch() -> None:
    msgs = []
    for T, ac in ((torch, torch.autocast), (ember, autocast)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with ac("cpu", dtype=T.float64):
                enabled = T.is_autocast_enabled("cpu") if T is torch else is_autocast_enabled("cpu")
                d = _dt(T.ones(2, 2) @ T.ones(2, 2))
        msgs.append((str(w[0].message).replace("torch.", "ember."), enabled, d))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("device_type", [3, "nonexistent"])
def test_bad_device_type_errors_as_torch(device_type: Any) -> None:
    with pytest.raises((ValueError, RuntimeError)) as t:
        torch.autocast(device_type)
    expected = re.escape(str(t.value))
    if device_type == "nonexistent":  # the list of device types differs: each names its own
        expected = "^Expected one of .*cpu.* device type at start of device string: nonexistent$"
    with pytest.raises(t.type, match=expected):
        autocast(device_type)


def _scaler_run(T: Any, scaler_cls: Any, grads: list[list[float]]) -> list[Any]:
    """Feed fixed gradients (some inf/NaN) through scale/step/update; record what changes."""
    w = T.nn.Parameter(T.ones(3))
    opt = T.optim.SGD([w], lr=0.5)
    s = scaler_cls("cpu", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=2)
    out: list[Any] = []
    for g in grads:
        opt.zero_grad()
        s.scale((w * 1.0).sum()).backward()  # scale is lazily made here; its gradient is replaced
        w.grad = T.tensor(g) * s.get_scale()
        ret = s.step(opt)
        s.update()
        out.append((ret, s.get_scale(), s._get_growth_tracker(), [round(v, 5) for v in w.detach().tolist()]))
    out.append(s.state_dict())
    return out


GRADS = [
    [1.0, 2.0, 3.0],
    [1.0, float("inf"), 0.0],
    [0.5, 0.5, 0.5],
    [float("nan"), 1, 1],
    [1, 1, 1],
    [2, 2, 2],
]


def test_grad_scaler_schedule_and_skipped_steps_as_torch() -> None:
    assert _scaler_run(ember, GradScaler, GRADS) == _scaler_run(torch, torch.amp.GradScaler, GRADS)


def _misuse(T: Any, scaler_cls: Any) -> list[str]:
    w = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([w], lr=0.1)
    s = scaler_cls("cpu")
    out = []

    def attempt(f: Any) -> None:
        try:
            f()
            out.append("ok")
        except (RuntimeError, ValueError, AssertionError) as e:
            out.append(f"{type(e).__name__}: {e}")

    attempt(lambda: s.step(opt))
    attempt(lambda: s.update())
    attempt(lambda: s.unscale_(opt))
    s.scale(w.sum()).backward()
    attempt(lambda: s.step(opt, closure=lambda: None))
    attempt(lambda: s.unscale_(opt))
    attempt(lambda: s.unscale_(opt))
    attempt(lambda: s.step(opt))
    attempt(lambda: s.step(opt))
    attempt(lambda: s.unscale_(opt))
    s.update()
    w16 = T.nn.Parameter(T.ones(2, dtype=T.float16))
    s.scale(w16.float().sum()).backward()
    attempt(lambda: s.unscale_(T.optim.SGD([w16], lr=0.1)))
    attempt(lambda: s.load_state_dict({}))
    attempt(lambda: scaler_cls("cpu", growth_factor=1.0))
    attempt(lambda: scaler_cls("cpu", backoff_factor=1.0))
    return out


def test_grad_scaler_misuse_errors_as_torch() -> None:
    assert _misuse(ember, GradScaler) == _misuse(torch, torch.amp.GradScaler)


def test_disabled_grad_scaler_as_torch() -> None:
    def run(T: Any, cls: Any) -> list[Any]:
        s = cls("cpu", enabled=False)
        w = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([w], lr=0.5)
        loss = w.sum()
        scaled = s.scale(loss)
        scaled.backward()
        s.step(opt)
        s.update()
        return [scaled is loss, s.get_scale(), s.state_dict(), s.is_enabled(), w.tolist()]

    assert run(ember, GradScaler) == run(torch, torch.amp.GradScaler)


def test_grad_scaler_checkpoint_round_trip(tmp_path: Any) -> None:
    """A state saved mid-training loads into a fresh scaler, which continues as torch's does."""
    results = []
    for T, cls in ((ember, GradScaler), (torch, torch.amp.GradScaler)):
        first = _scaler_run(T, cls, GRADS[:3])[-1]
        T.save({"scaler": first}, tmp_path / f"{T.__name__}.pt")
        loaded = T.load(tmp_path / f"{T.__name__}.pt")["scaler"]
        s = cls("cpu")
        s.load_state_dict(loaded)
        w = T.nn.Parameter(T.ones(1))
        s.scale(w.sum()).backward()
        s.step(T.optim.SGD([w], lr=0.1))
        s.update()
        results.append((loaded, s.get_scale(), s._get_growth_tracker(), s.state_dict()))
    assert results[0] == results[1]


def _grid(T: Any, width: int, height: int) -> Any:
    hrange = T.arange(width).unsqueeze(0).repeat([height, 1]).div(width)
    vrange = T.arange(height).unsqueeze(1).repeat([1, width]).div(height)
    return T.stack([hrange, vrange], 0)


def _checker(T: Any, width: int, height: int, freq: int) -> Any:
    hrange = T.arange(width).reshape([1, width]).mul(freq / width / 2.0).fmod(1.0).gt(0.5)
    vrange = T.arange(height).reshape([height, 1]).mul(freq / height / 2.0).fmod(1.0).gt(0.5)
    return hrange.logical_xor(vrange).float()


def _seed_losses(T: Any, state: dict[str, np.ndarray]) -> list[float]:
    """The EffectivePyTorch seed's mixed-precision loop (autocast + GradScaler), on the CPU in
    bfloat16 and smaller (its 512x512 image, 256 channels and 500 steps take minutes here)."""
    inputs = _grid(T, 8, 8).unsqueeze(0)
    targets = _checker(T, 8, 8, 2).unsqueeze(0).unsqueeze(1)
    nn = T.nn
    net = nn.Sequential(
        nn.Conv2d(2, 16, 1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 16, 1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 1, 1),
    )  # fmt: skip
    net.load_state_dict({k: T.tensor(v) for k, v in state.items()})
    loss_fn = nn.MSELoss()
    opt = T.optim.Adam(net.parameters(), 0.01)
    scaler = (GradScaler if T is ember else torch.amp.GradScaler)("cpu")
    ac = autocast if T is ember else torch.autocast
    losses = []
    for _ in range(15):
        opt.zero_grad()
        with ac("cpu"):
            outputs = net(inputs)
            loss = loss_fn(outputs, targets)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        assert (outputs.dtype, loss.dtype) == (T.bfloat16, T.float32)
        losses.append(loss.item())
    return losses


def test_seed_mixed_precision_training_as_torch() -> None:
    torch.manual_seed(0)
    ref = torch.nn.Sequential(
        torch.nn.Conv2d(2, 16, 1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 1, 1),
    )  # fmt: skip
    state = {k: v.numpy().copy() for k, v in ref.state_dict().items()}
    t, e = _seed_losses(torch, state), _seed_losses(ember, state)
    assert t[-1] < 0.7 * t[0]  # it learns
    np.testing.assert_allclose(e, t, rtol=5e-2, atol=5e-3)


def _custom_fn_trace(T: Any, amp_mod: Any, ac: Any) -> list[str]:
    seen: list[str] = []

    class MyMM(T.autograd.Function):
        @staticmethod
        @amp_mod.custom_fwd(device_type="cpu", cast_inputs=T.float32)
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            ctx.save_for_backward(a, b)
            seen.append(_dt(a))
            return a.mm(b)

        @staticmethod
        @amp_mod.custom_bwd(device_type="cpu")
        def backward(ctx: Any, grad: Any) -> Any:
            a, b = ctx.saved_tensors
            seen.append(_dt(grad.mm(b.t())))
            return grad.mm(b.t()), a.t().mm(grad)

    class Plain(T.autograd.Function):
        @staticmethod
        @amp_mod.custom_fwd(device_type="cpu")
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        @amp_mod.custom_bwd(device_type="cpu")
        def backward(ctx: Any, grad: Any) -> Any:
            seen.append(_dt(T.ones(2, 2) @ T.ones(2, 2)))  # autocast is on again here
            return grad * 2

    a = T.ones(2, 2, requires_grad=True)
    with ac("cpu"):
        out = MyMM.apply(a.to(T.bfloat16), a)
        p = Plain.apply(a)
    seen.append(_dt(out))
    (out.float().sum() + p.sum()).backward()
    seen.append(_dt(a.grad))
    return seen


def test_custom_fwd_bwd_as_torch() -> None:
    assert _custom_fn_trace(ember, ember.amp, autocast) == _custom_fn_trace(torch, torch.amp, torch.autocast)


def _recipe(T: Any, state: dict[str, np.ndarray], data: list[np.ndarray], tmp: Any) -> list[float]:
    """PyTorch's "Automatic Mixed Precision" recipe on the CPU in float16, smaller: its default
    loop, the clipping loop (unscale_ then clip_grad_norm_), then save and resume."""
    net = T.nn.Sequential(
        T.nn.Linear(32, 32), T.nn.ReLU(), T.nn.Linear(32, 32), T.nn.ReLU(), T.nn.Linear(32, 32)
    )
    net.load_state_dict({k: T.tensor(v) for k, v in state.items()})
    opt = T.optim.SGD(net.parameters(), lr=0.01)
    scaler = (GradScaler if T is ember else torch.amp.GradScaler)("cpu", enabled=True)
    ac = autocast if T is ember else torch.autocast
    loss_fn = T.nn.MSELoss()
    losses = []
    pairs = [(T.tensor(data[i]), T.tensor(data[i + 1])) for i in range(0, len(data), 2)]

    def epoch(clip: bool) -> None:
        for inp, target in pairs:
            with ac(device_type="cpu", dtype=T.float16, enabled=True):
                output = net(inp)
                loss = loss_fn(output, target)
            assert output.dtype == T.float16 and loss.dtype == T.float32
            scaler.scale(loss).backward()
            if clip:
                scaler.unscale_(opt)
                T.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.item())

    epoch(clip=False)
    epoch(clip=True)
    path = tmp / f"{T.__name__}-amp.pt"
    T.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "scaler": scaler.state_dict()}, path)
    checkpoint = T.load(path)
    net.load_state_dict(checkpoint["model"])
    opt.load_state_dict(checkpoint["optimizer"])
    scaler.load_state_dict(checkpoint["scaler"])
    epoch(clip=False)
    losses.append(scaler.get_scale())
    return losses


def test_pytorch_amp_recipe_as_torch(tmp_path: Any) -> None:
    torch.manual_seed(0)
    ref = torch.nn.Sequential(*(torch.nn.Linear(32, 32) for _ in range(3)))
    # the reference's layers 0, 1, 2 are the recipe's 0, 2, 4 (ReLUs between)
    state = {
        f"{2 * int(k.split('.')[0])}.{k.split('.')[1]}": v.numpy().copy() for k, v in ref.state_dict().items()
    }
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((16, 32)).astype(np.float32) for _ in range(8)]
    t, e = _recipe(torch, state, data, tmp_path), _recipe(ember, state, data, tmp_path)
    assert e[-1] == t[-1] == 65536.0  # no overflow: the scale never changed
    np.testing.assert_allclose(e, t, rtol=1e-2, atol=1e-3)
