"""Learning-rate schedulers against lr sequences recorded from PyTorch (see gen_reference.py)."""

from __future__ import annotations

import _refs
import ember
import pytest
from ember import optim
from ember.optim import lr_scheduler as S

SCHEDS = {
    "step": lambda o: S.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "exponential": lambda o: S.ExponentialLR(o, gamma=0.9),
    "lambda": lambda o: S.LambdaLR(o, lambda e: 1.0 / (1 + e)),
    "multiplicative": lambda o: S.MultiplicativeLR(o, lambda e: 0.95),
    "cosine": lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "warm_restarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
    "cyclic": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "cyclic_tri2": lambda o: S.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=2, mode="triangular2"
    ),
    "cyclic_exp": lambda o: S.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.9
    ),
    "onecycle": lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=25),
    "onecycle_linear3": lambda o: S.OneCycleLR(
        o, max_lr=[0.5, 0.2], total_steps=25, anneal_strategy="linear", three_phase=True
    ),
    "linear": lambda o: S.LinearLR(o, start_factor=0.25, total_iters=6),
    "constant": lambda o: S.ConstantLR(o, factor=0.5, total_iters=4),
    "polynomial": lambda o: S.PolynomialLR(o, total_iters=8, power=2.0),
    "sequential": lambda o: S.SequentialLR(
        o, [S.LinearLR(o, 0.1, total_iters=4), S.ExponentialLR(o, 0.8)], milestones=[4]
    ),
    "chained": lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=3), S.ExponentialLR(o, 0.9)]),
}


def _opt() -> optim.SGD:
    w1, w2 = ember.zeros(2, requires_grad=True), ember.zeros(2, requires_grad=True)
    return optim.SGD([{"params": [w1]}, {"params": [w2], "lr": 0.05}], lr=0.1, momentum=0.9)


def test_every_recorded_case_has_a_builder() -> None:
    assert set(SCHEDS) == set(_refs.SCHEDS)


@pytest.mark.parametrize("case", sorted(SCHEDS))
def test_lr_sequence_matches_pytorch(case: str) -> None:
    opt = _opt()
    sched = SCHEDS[case](opt)
    lrs, moms = [list(sched.get_last_lr())], [[g["momentum"] for g in opt.param_groups]]
    for _ in range(len(_refs.SCHEDS[case][0]) - 1):
        opt.step()
        sched.step()
        lrs.append(list(sched.get_last_lr()))
        moms.append([g["momentum"] for g in opt.param_groups])
    expected_lrs, expected_moms = _refs.SCHEDS[case]
    assert lrs == expected_lrs  # bit for bit: the same float64 formulas in the same order
    assert moms == expected_moms


def test_reduce_lr_on_plateau_matches_pytorch() -> None:
    metrics, expected = _refs.PLATEAU
    w = ember.zeros(2, requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    s = S.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1, min_lr=0.05)
    got = []
    for m in metrics:
        opt.step()
        s.step(ember.tensor(m))
        got.append(s.get_last_lr()[0])
    assert got == expected


def test_state_dict_resumes_the_schedule() -> None:
    opt = _opt()
    sched = S.CosineAnnealingLR(opt, T_max=10)
    for _ in range(3):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    opt2 = _opt()
    for g, h in zip(opt2.param_groups, opt.param_groups):
        g["lr"], g["initial_lr"] = h["lr"], h["initial_lr"]
    sched2 = S.CosineAnnealingLR(opt2, T_max=10)
    sched2.load_state_dict(sd)
    for s, o in ((sched, opt), (sched2, opt2)):
        o.step()
        s.step()
    assert sched.get_last_lr() == sched2.get_last_lr()


def test_scheduler_errors() -> None:
    opt = _opt()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        S.StepLR([], 3)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        s = S.OneCycleLR(opt, max_lr=0.1, total_steps=2)
        for _ in range(3):
            opt.step()
            s.step()
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        S.ReduceLROnPlateau(opt, factor=2.0)


def test_scheduler_before_optimizer_step_warns() -> None:
    opt = _opt()
    sched = S.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
