"""ember.amp's GradScaler and mixed-precision training against torch.amp on the CPU: the scale
schedule with skipped steps, misuse errors, a disabled scaler, checkpoints, the EffectivePyTorch
seed's autocast+GradScaler loop and PyTorch's AMP recipe."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember.amp import GradScaler, autocast

torch = pytest.importorskip("torch")


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
