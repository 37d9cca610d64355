"""Regenerate ``_refs.py`` (and the checkpoint fixture) from PyTorch; not part of the test run.

Run with a PyTorch venv: ``/tmp/torchref2/bin/python tests/training/gen_reference.py``.
The tests compare ember against these recorded numbers and never import torch.
"""

from __future__ import annotations

import collections
import os
import pprint

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

W0 = [0.5, -1.25, 2.0, 0.75]
B0 = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]
A = [[1.0, 2.0, -1.0, 0.5], [0.0, 1.5, 2.0, -1.0], [3.0, -0.5, 0.25, 1.0]]
Y = [1.0, -2.0, 0.5]

OPTIMS = {
    "sgd": ("SGD", {"lr": 0.05}),
    "sgd_momentum": ("SGD", {"lr": 0.05, "momentum": 0.9}),
    "sgd_nesterov_wd": ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    "sgd_dampening_max": ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    "adam": ("Adam", {"lr": 0.1}),
    "adam_amsgrad_wd": ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    "adam_maximize": ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "maximize": True}),
    "adamw": ("AdamW", {"lr": 0.05}),
    "adamw_amsgrad": ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    "adamax": ("Adamax", {"lr": 0.05, "weight_decay": 0.01}),
    "nadam": ("NAdam", {"lr": 0.05}),
    "nadam_decoupled": ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "radam": ("RAdam", {"lr": 0.05}),
    "radam_wd": ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop_centered_momentum": (
        "RMSprop",
        {"lr": 0.01, "centered": True, "momentum": 0.9, "weight_decay": 0.01},
    ),
    "adagrad": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    "adadelta": ("Adadelta", {"lr": 1.0, "weight_decay": 0.01}),
    "rprop": ("Rprop", {"lr": 0.05}),
    "rprop_max": ("Rprop", {"lr": 0.01, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.02), "maximize": True}),
    "asgd": ("ASGD", {"lr": 0.05, "t0": 3, "weight_decay": 0.01}),
    "asgd_lambd": ("ASGD", {"lr": 0.1, "lambd": 0.1, "alpha": 0.5}),
}
STEPS = 8


def loss_fn(w, b):
    a, y = torch.tensor(A), torch.tensor(Y)
    return ((a @ w - y) ** 2).mean() + (b**3).sum() * 0.1 + (w * w).sum() * 0.01


def run_optim(name, kwargs):
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    opt = getattr(torch.optim, name)([w, b], **kwargs)
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss_fn(w, b).backward()
        opt.step()
        out.append(w.detach().tolist() + b.detach().flatten().tolist())
    return out


def lbfgs_loss(w, b):
    """Bounded below (unlike ``loss_fn``), as a quasi-Newton method needs."""
    a, y = torch.tensor(A), torch.tensor(Y)
    return ((a @ w - y) ** 2).mean() + ((b - 0.3) ** 2).sum() * 0.5 + (w * w).sum() * 0.01


def lbfgs(line_search_fn):
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=0.5, max_iter=4, history_size=3, line_search_fn=line_search_fn)
    out = []
    for _ in range(3):

        def closure():
            opt.zero_grad()
            loss = lbfgs_loss(w, b)
            loss.backward()
            return loss

        opt.step(closure)
        out.append(w.detach().tolist() + b.detach().flatten().tolist())
    return out


S = torch.optim.lr_scheduler
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
SCHED_STEPS = 24


def run_sched(make):
    w1 = torch.zeros(2, requires_grad=True)
    w2 = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([{"params": [w1]}, {"params": [w2], "lr": 0.05}], lr=0.1, momentum=0.9)
    sched = make(opt)
    out = [list(sched.get_last_lr())]
    moms = [[g["momentum"] for g in opt.param_groups]]
    for _ in range(SCHED_STEPS):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
        moms.append([g["momentum"] for g in opt.param_groups])
    return out, moms


def plateau():
    w = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=1.0)
    s = S.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1, min_lr=0.05)
    metrics = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
    out = []
    for m in metrics:
        opt.step()
        s.step(m)
        out.append(s.get_last_lr()[0])
    return metrics, out


def seed_polynomial():
    """The seed's polynomial fit, on fixed data so the result is reproducible."""
    g = torch.Generator().manual_seed(0)
    w = torch.tensor([[0.3], [-0.2], [0.1]], requires_grad=True)
    opt = torch.optim.Adam([w], 0.1)
    xs = [torch.rand(100, generator=g) * 20 - 10 for _ in range(8)]
    for i in range(1000):
        x = xs[i % 8]
        y = 5 * x * x + 3
        f = torch.stack([x * x, x, torch.ones_like(x)], 1)
        yhat = torch.squeeze(f @ w, 1)
        loss = torch.nn.functional.mse_loss(yhat, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [x.tolist() for x in xs], w.detach().flatten().tolist()


def write_checkpoint():
    sd = collections.OrderedDict(
        [
            ("linear.weight", torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4),
            ("linear.bias", torch.tensor([0.5, -1.5])),
            ("steps", torch.tensor([3, 1, 4], dtype=torch.int64)),
            ("mask", torch.tensor([True, False])),
            ("half", torch.tensor([1.5, -2.0], dtype=torch.float64)),
        ]
    )
    view = torch.arange(10, dtype=torch.float32)
    obj = {
        "model": sd,
        "epoch": 7,
        "lr": 0.125,
        "name": "tiny",
        "view": view[2:8:2],  # a strided view of a shared storage
        "base": view,
        "param": torch.nn.Parameter(torch.ones(2, 2)),
    }
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(sd["linear.weight"])
        lin.bias.copy_(sd["linear.bias"])
    opt = torch.optim.Adam(lin.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3])
    for _ in range(2):
        opt.zero_grad()
        lin(torch.ones(4, 3)).pow(2).sum().backward()
        opt.step()
        sched.step()
    obj["optimizer"] = opt.state_dict()
    obj["scheduler"] = sched.state_dict()
    obj["size"] = torch.Size([2, 3])
    tagged = torch.tensor([1.0, 2.0])
    tagged.note = "kept by PyTorch, dropped by ember"  # pickled through _rebuild_from_type_v2
    obj["tagged"] = tagged
    obj["after_two_steps"] = lin.state_dict()
    torch.save(obj, os.path.join(HERE, "fixtures", "torch_checkpoint.pt"))
    from safetensors.torch import save_file

    save_file(
        {
            "w": torch.arange(6, dtype=torch.float32).reshape(2, 3),
            "i": torch.tensor([7, -8], dtype=torch.int32),
        },
        os.path.join(HERE, "fixtures", "reference.safetensors"),
        metadata={"format": "pt"},
    )


def main():
    refs = {
        "W0": W0,
        "B0": B0,
        "A": A,
        "Y": Y,
        "OPTIMS": OPTIMS,
        "OPTIM_STEPS": {k: run_optim(*v) for k, v in OPTIMS.items()},
        "LBFGS_STEPS": {"none": lbfgs(None), "strong_wolfe": lbfgs("strong_wolfe")},
        "SCHEDS": {k: run_sched(v) for k, v in SCHEDS.items()},
        "PLATEAU": plateau(),
        "SEED_POLY": seed_polynomial(),
    }
    with open(os.path.join(HERE, "_refs.py"), "w") as f:
        f.write('"""Recorded by gen_reference.py with PyTorch ' + torch.__version__ + ' (CPU)."""\n\n')
        f.write("# fmt: off\n")
        f.writelines(f"{k} = {pprint.pformat(v, width=110, compact=True)}\n" for k, v in refs.items())
    write_checkpoint()


if __name__ == "__main__":
    main()
