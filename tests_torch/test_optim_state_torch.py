"""Optimizer and LR-scheduler state dicts against PyTorch 2.13: same keys in the same order,
same Python types (int defaults stay ints, ``step`` a float32 0-d tensor), and a state dict
PyTorch saved continues training in ember with PyTorch's numbers (and the other way round)."""

from __future__ import annotations

import os
import warnings
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("RMSprop", {"lr": 0.01}),
    ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {"decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("RAdam", {}),
    ("ASGD", {"t0": 1}),
    ("Rprop", {}),
    ("LBFGS", {"lr": 0.5, "history_size": 3, "max_iter": 4}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(OPTIMIZERS)]


def _shape_of(v: Any) -> Any:
    """A comparable description: key order, Python types, tensor dtype/shape, plain values."""
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_shape_of(x) for x in v])
    if isinstance(v, dict):
        return [(k, _shape_of(x)) for k, x in v.items()]
    if type(v) is float:  # losses and steps computed in float32 differ in the last bits
        return ("float", f"{v:.5g}")
    return (type(v).__name__, v)


def _train(lib: Any, name: str, kw: dict, steps: int, start: Any, sd: Any = None) -> tuple:
    w = lib.tensor(np.asarray(start[0]).tolist(), requires_grad=True)
    b = lib.tensor(np.asarray(start[1]).tolist(), requires_grad=True)
    opt = getattr(lib.optim, name)([w, b], **kw)
    if sd is not None:
        opt.load_state_dict(sd)
    target = lib.tensor([1.0, 2.0, -1.0])

    def closure() -> Any:
        opt.zero_grad()
        loss = ((w * target + b - 0.5) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return [w.detach().numpy().copy(), b.detach().numpy().copy()], opt


@pytest.mark.parametrize(("name", "kw"), OPTIMIZERS, ids=IDS)
def test_state_dict_has_pytorchs_keys_types_and_values(name: str, kw: dict) -> None:
    w0 = ([1.0, -2.0, 0.5], [0.25])
    t_params, t_opt = _train(torch, name, kw, 3, w0)
    e_params, e_opt = _train(ember, name, kw, 3, w0)
    t_sd, e_sd = t_opt.state_dict(), e_opt.state_dict()
    assert _shape_of(e_sd) == _shape_of(t_sd)
    for k, t_state in t_sd["state"].items():
        for key, t_val in t_state.items():
            if isinstance(t_val, torch.Tensor):
                np.testing.assert_allclose(e_sd["state"][k][key].numpy(), t_val.numpy(), rtol=1e-5, atol=1e-6)
    for t_p, e_p in zip(t_params, e_params):
        np.testing.assert_allclose(e_p, t_p, rtol=1e-5, atol=1e-6)


def test_step_is_a_float32_scalar_tensor_and_defaults_keep_their_int_type() -> None:
    w = ember.tensor([1.0], requires_grad=True)
    opt = ember.optim.Adam([w])
    w.sum().backward()
    opt.step()
    sd = opt.state_dict()
    assert list(sd["state"][0]) == ["step", "exp_avg", "exp_avg_sq"]
    step = sd["state"][0]["step"]
    assert isinstance(step, ember.Tensor) and step.dtype == ember.float32 and step.shape == ()
    assert step.item() == 1.0
    assert type(sd["param_groups"][0]["weight_decay"]) is int


def test_sgd_without_momentum_keeps_no_state() -> None:
    w = ember.tensor([1.0], requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)
    w.sum().backward()
    opt.step()
    assert opt.state_dict()["state"] == {}
    assert len(opt.state) == 0


@pytest.mark.parametrize(("name", "kw"), OPTIMIZERS, ids=IDS)
def test_pytorch_checkpoint_continues_in_ember_and_back(name: str, kw: dict, tmp_path: Any) -> None:
    w0 = ([1.0, -2.0, 0.5], [0.25])
    reference, _ = _train(torch, name, kw, 6, w0)
    mid, t_opt = _train(torch, name, kw, 3, w0)
    path = os.path.join(tmp_path, "torch.pt")
    torch.save(t_opt.state_dict(), path)
    got, e_opt = _train(ember, name, kw, 3, mid, ember.load(path))
    mid_e, e_opt = _train(ember, name, kw, 3, w0)
    path_e = os.path.join(tmp_path, "ember.pt")
    ember.save(e_opt.state_dict(), path_e)
    back, _ = _train(torch, name, kw, 3, mid_e, torch.load(path_e))
    for r, g, h in zip(reference, got, back):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h, r, rtol=1e-5, atol=1e-6)


def _schedulers(lib: Any, opt: Any) -> dict[str, Any]:
    S = lib.optim.lr_scheduler
    return {
        "LambdaLR": lambda: S.LambdaLR(opt, lambda e: 0.9**e),
        "StepLR": lambda: S.StepLR(opt, 2),
        "MultiStepLR": lambda: S.MultiStepLR(opt, [1, 3]),
        "ConstantLR": lambda: S.ConstantLR(opt),
        "LinearLR": lambda: S.LinearLR(opt),
        "ExponentialLR": lambda: S.ExponentialLR(opt, 0.9),
        "PolynomialLR": lambda: S.PolynomialLR(opt),
        "CosineAnnealingLR": lambda: S.CosineAnnealingLR(opt, 10),
        "SequentialLR": lambda: S.SequentialLR(
            opt, [S.ConstantLR(opt), S.ExponentialLR(opt, 0.9)], milestones=[2]
        ),
        "ChainedScheduler": lambda: S.ChainedScheduler([S.ConstantLR(opt), S.ExponentialLR(opt, 0.9)]),
        "ReduceLROnPlateau": lambda: S.ReduceLROnPlateau(opt, patience=1),
        "CyclicLR": lambda: S.CyclicLR(opt, 0.01, 0.1, step_size_up=2),
        "CosineAnnealingWarmRestarts": lambda: S.CosineAnnealingWarmRestarts(opt, 3),
        "OneCycleLR": lambda: S.OneCycleLR(opt, 1.0, total_steps=10),
    }


SCHEDULERS = list(_schedulers(ember, None))


def _scheduled(lib: Any, name: str, steps: int, sd: Any = None) -> tuple[Any, Any]:
    w = lib.tensor([1.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    sched = _schedulers(lib, opt)[name]()
    if sd is not None:
        sched.load_state_dict(sd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.step()
            sched.step(1.0) if name == "ReduceLROnPlateau" else sched.step()
    return sched, opt


def _without_callables(v: Any) -> Any:
    if isinstance(v, dict):
        return [(k, _without_callables(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [_without_callables(x) for x in v]
    return "callable" if callable(v) else _shape_of(v)


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_state_dict_matches_and_resumes(name: str) -> None:
    t_sched, _ = _scheduled(torch, name, 4)
    e_sched, _ = _scheduled(ember, name, 4)
    t_sd = t_sched.state_dict()
    assert _without_callables(e_sched.state_dict()) == _without_callables(t_sd)
    e_resumed, e_opt = _scheduled(ember, name, 3, sd=t_sd)
    t_resumed, t_opt = _scheduled(torch, name, 3, sd=t_sd)
    assert e_opt.param_groups[0]["lr"] == pytest.approx(t_opt.param_groups[0]["lr"], rel=1e-12)
    assert e_resumed.get_last_lr() == pytest.approx(t_resumed.get_last_lr(), rel=1e-12)


@pytest.mark.parametrize("name", ["Adam", "ASGD", "NAdam", "RMSprop"])
def test_an_older_checkpoint_with_float_steps_and_fewer_options_loads_as_in_pytorch(
    name: str, tmp_path: Any
) -> None:
    """PyTorch < 1.12 kept ``step`` (and ASGD's ``eta``/``mu``) as numbers, and older group dicts
    lack options added since; both frameworks turn them into tensors and fill the defaults."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = getattr(torch.optim, name)([w])
    (w**2).sum().backward()
    opt.step()
    full = opt.state_dict()
    scalars = ("step", "eta", "mu", "mu_product")
    state = {k: v.item() if k in scalars else v for k, v in full["state"][0].items()}
    newer = ("foreach", "differentiable", "capturable", "maximize", "fused", "decoupled_weight_decay")
    group = {k: v for k, v in full["param_groups"][0].items() if k not in newer}
    path = os.path.join(tmp_path, "old.pt")
    torch.save({"state": {0: state}, "param_groups": [group]}, path)
    results = []
    for lib in (torch, ember):
        p = lib.tensor([1.0, -2.0], requires_grad=True)
        o = getattr(lib.optim, name)([p])
        o.load_state_dict(lib.load(path))
        sd = o.state_dict()  # the filled-in options' order is each class's __setstate__ detail
        loaded = (_shape_of(sd["state"]), sorted(_shape_of(sd["param_groups"][0])))
        for _ in range(2):
            o.zero_grad()
            (p**2).sum().backward()
            o.step()
        results.append((loaded, p.detach().numpy().copy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)
