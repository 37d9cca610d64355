"""Optimizers against step-by-step sequences recorded from PyTorch (see gen_reference.py)."""

from __future__ import annotations

import _refs
import ember
import numpy as np
import pytest
from ember import optim


def _loss(w: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
    a, y = ember.tensor(_refs.A), ember.tensor(_refs.Y)
    return ((a @ w - y) ** 2).mean() + (b**3).sum() * 0.1 + (w * w).sum() * 0.01


def _params() -> tuple[ember.Tensor, ember.Tensor]:
    return ember.tensor(_refs.W0, requires_grad=True), ember.tensor(_refs.B0, requires_grad=True)


def _flat(w: ember.Tensor, b: ember.Tensor) -> np.ndarray:
    return np.concatenate([w.detach().cpu().numpy().ravel(), b.detach().cpu().numpy().ravel()])


@pytest.mark.parametrize("case", sorted(_refs.OPTIMS))
def test_matches_pytorch_step_by_step(case: str) -> None:
    name, kwargs = _refs.OPTIMS[case]
    w, b = _params()
    opt = getattr(optim, name)([w, b], **kwargs)
    for i, expected in enumerate(_refs.OPTIM_STEPS[case]):
        opt.zero_grad()
        _loss(w, b).backward()
        opt.step()
        np.testing.assert_allclose(
            _flat(w, b), expected, rtol=2e-6, atol=2e-7, err_msg=f"{case} step {i + 1}"
        )


def test_every_optimizer_on_a_second_device() -> None:
    a, y = ember.tensor(_refs.A, device="cpu:1"), ember.tensor(_refs.Y, device="cpu:1")
    for case, (name, kwargs) in _refs.OPTIMS.items():
        w = ember.tensor(_refs.W0, device="cpu:1", requires_grad=True)
        b = ember.tensor(_refs.B0, device="cpu:1", requires_grad=True)
        opt = getattr(optim, name)([w, b], **kwargs)
        for _ in range(3):
            opt.zero_grad()
            (((a @ w - y) ** 2).mean() + (b**3).sum() * 0.1 + (w * w).sum() * 0.01).backward()
            opt.step()
        assert all(
            t.device == ember.device("cpu:1")
            for s in opt.state.values()
            for k, t in s.items()
            if k not in ("step", "mu_product")
        )
        np.testing.assert_allclose(
            _flat(w, b), _refs.OPTIM_STEPS[case][2], rtol=2e-6, atol=2e-7, err_msg=case
        )


@pytest.mark.parametrize("line_search", ["none", "strong_wolfe"])
def test_lbfgs_matches_pytorch(line_search: str) -> None:
    w, b = _params()
    opt = optim.LBFGS(
        [w, b],
        lr=0.5,
        max_iter=4,
        history_size=3,
        line_search_fn=None if line_search == "none" else line_search,
    )
    a, y = ember.tensor(_refs.A), ember.tensor(_refs.Y)

    def closure() -> ember.Tensor:
        opt.zero_grad()
        loss = ((a @ w - y) ** 2).mean() + ((b - 0.3) ** 2).sum() * 0.5 + (w * w).sum() * 0.01
        loss.backward()
        return loss

    for expected in _refs.LBFGS_STEPS[line_search]:
        opt.step(closure)
        np.testing.assert_allclose(_flat(w, b), expected, rtol=1e-5, atol=1e-6)


def test_zero_grad_set_to_none_and_zeros() -> None:
    w, b = _params()
    opt = optim.SGD([w, b], lr=0.1)
    _loss(w, b).backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and float(w.grad.abs().sum()) == 0.0
    opt.zero_grad()
    assert w.grad is None and b.grad is None


def test_param_groups_defaults_and_add_param_group() -> None:
    w, b = _params()
    opt = optim.SGD([{"params": [w]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    extra = ember.zeros(2, requires_grad=True)
    opt.add_param_group({"params": [extra], "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.0
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [w]})


def test_constructor_errors_name_values() -> None:
    w, _ = _params()
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.5"):
        optim.Adam([w], betas=(0.9, 1.5))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors or dicts, but got torch.FloatTensor"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {w}}], lr=0.1)


def test_state_dict_round_trip_continues_identically() -> None:
    w, b = _params()
    opt = optim.Adam([w, b], lr=0.05, amsgrad=True)
    for _ in range(3):
        opt.zero_grad()
        _loss(w, b).backward()
        opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    w2, b2 = ember.tensor(w.tolist(), requires_grad=True), ember.tensor(b.tolist(), requires_grad=True)
    opt2 = optim.Adam([w2, b2], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.05
    for o, x, y in ((opt, w, b), (opt2, w2, b2)):
        o.zero_grad()
        _loss(x, y).backward()
        o.step()
    np.testing.assert_array_equal(_flat(w, b), _flat(w2, b2))


def test_load_state_dict_mismatch_raises() -> None:
    w, b = _params()
    sd = optim.SGD([w, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([w], lr=0.1).load_state_dict(sd)


def test_step_closure_returns_loss_and_skips_params_without_grad() -> None:
    w, b = _params()
    opt = optim.SGD([w, b], lr=0.1)

    def closure() -> ember.Tensor:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == pytest.approx(sum(x * x for x in _refs.W0))
    np.testing.assert_array_equal(b.detach().cpu().numpy(), np.asarray(_refs.B0, dtype=np.float32))


def test_seed_polynomial_fit_with_adam_matches_pytorch() -> None:
    xs, expected = _refs.SEED_POLY
    xs = [ember.tensor(x) for x in xs]
    w = ember.tensor([[0.3], [-0.2], [0.1]], requires_grad=True)
    opt = optim.Adam([w], 0.1)
    for i in range(1000):
        x = xs[i % 8]
        y = 5 * x * x + 3
        f = ember.stack([x * x, x, ember.ones_like(x)], 1)
        yhat = ember.squeeze(f @ w, 1)
        loss = ((yhat - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(w.detach().cpu().numpy().ravel(), expected, rtol=2e-3, atol=2e-3)
    assert abs(float(w[0, 0]) - 5) < 0.05 and abs(float(w[1, 0])) < 0.05


def test_step_hooks_and_pickling() -> None:
    import pickle

    w, b = _params()
    opt = optim.Adam([w, b], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", len(o.state))))
    _loss(w, b).backward()
    opt.step()
    pre.remove()
    opt.step()
    assert calls == [("pre", True), ("post", 2), ("post", 2)]
    again = pickle.loads(pickle.dumps(opt))
    assert again.param_groups[0]["lr"] == 0.1 and len(again.state) == 2
    lbfgs = optim.LBFGS([w])
    seen = []
    lbfgs.register_step_post_hook(lambda o, a, k: seen.append(o))
    lbfgs.step(lambda: (w * w).sum())
    assert seen == [lbfgs]
