"""``ember demo``: train a small CNN on scikit-learn's handwritten digits, save, reload, evaluate.

The digits (8x8 images, bundled with scikit-learn, no download) need the optional extra
``pip install ember[demo]``. Runs deterministically (``ember.manual_seed``) on any installed
device: ``ember demo --device opencl`` (or ``EMBER_DEVICE=opencl ember demo``).
``ember demo --export demo.onnx`` also writes the trained model as ONNX (needs ``onnx``), with
a dynamic batch axis: input ``images`` (N, 1, 8, 8), output ``logits`` (N, 10).
``ember demo --amp`` trains in mixed precision (``ember.amp.autocast``: bfloat16 on cpu,
float16 elsewhere, with a GradScaler). ``ember demo --compile`` trains with the training step
under ``ember.compile`` (captured once per batch shape, then replayed: the same numbers as
eager). ``ember demo --plot curve.png`` draws the training curve
and the confusion matrix (needs ``matplotlib``: ``pip install 'ember[plot]'``).

The checkpoint goes to ``--checkpoint PATH``, by default ``$XDG_CACHE_HOME/ember/demo/
digits_cnn.pt`` (``~/.cache/ember/demo/digits_cnn.pt``); its path is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Any

import ember
import ember.amp
import ember.optim
from ember import nn
from ember.utils.data import DataLoader, TensorDataset

__all__ = ["build_model", "main", "make_step"]


def build_model() -> nn.Module:
    """Two conv blocks (8x8 -> 4x4 -> 2x2) and a two-layer classifier."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def _load_digits(device: Any) -> tuple[ember.Tensor, ...]:
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("ember demo needs scikit-learn: pip install 'ember[demo]'") from None
    digits = load_digits()
    x = ember.tensor(digits.images / 16.0, dtype=ember.float32).unsqueeze(1)
    y = ember.tensor(digits.target, dtype=ember.int64)
    perm = ember.randperm(len(y), generator=ember.Generator().manual_seed(0))
    n_test = len(y) // 5
    test, train = perm[:n_test], perm[n_test:]
    return x[train].to(device), y[train].to(device), x[test].to(device), y[test].to(device)


def _progress(loader: DataLoader, epoch: int, epochs: int) -> Any:
    """tqdm's bar over one epoch (off when stdout is not a terminal), or the bare loader."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return loader
    return tqdm(loader, desc=f"epoch {epoch}/{epochs}", leave=False, disable=None, file=sys.stdout)


def default_checkpoint() -> str:
    """Where the demo keeps its checkpoint unless told: ember's folder in the user's cache."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "ember", "demo", "digits_cnn.pt")


def make_step(model: nn.Module, opt: Any, scaler: Any = None, compiled: bool = False) -> Any:
    """One training step ``step(xb, yb) -> loss``; with ``scaler`` (an ``ember.amp.GradScaler``),
    forward runs under autocast. With ``compiled``, the step is ``ember.compile``d: each batch
    shape is captured on its first call and replayed after (the optimizer step runs eagerly)."""
    loss_fn = nn.CrossEntropyLoss()

    def step(xb: ember.Tensor, yb: ember.Tensor) -> ember.Tensor:
        region = ember.amp.autocast(xb.device.type) if scaler is not None else contextlib.nullcontext()
        with region:
            loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return loss

    return ember.compile(step) if compiled else step


def _train_epoch(
    step: Any,
    loader: DataLoader,
    epoch: int,
    epochs: int,
    first_step: list[float] | None = None,
) -> float:
    """One epoch of ``step`` (``make_step``). ``first_step``, when empty, receives the clock time
    at the end of the first step (a backend compiles its kernels there, on first use)."""
    total, seen = 0.0, 0
    bar = _progress(loader, epoch, epochs)
    for xb, yb in bar:
        loss = step(xb, yb)
        total += loss.item() * len(yb)
        seen += len(yb)
        if first_step is not None and not first_step:
            first_step.append(time.perf_counter())
        if bar is not loader:
            bar.set_postfix(loss=f"{total / seen:.4f}")
    return total / seen


def accuracy(model: nn.Module, x: ember.Tensor, y: ember.Tensor) -> float:
    """Fraction of ``x`` that ``model`` classifies as ``y``."""
    model.eval()
    with ember.no_grad():
        pred = model(x).argmax(1)
    model.train()
    return (pred == y).float().mean().item()


def _parse(argv: Any) -> argparse.Namespace:
    if isinstance(argv, argparse.Namespace):
        return argv
    p = argparse.ArgumentParser(prog="ember demo", description=__doc__.splitlines()[0])
    add_arguments(p)
    return p.parse_args(argv)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default=None, help="device string (default: $EMBER_DEVICE or cpu)")
    p.add_argument("--epochs", type=int, default=20, help="training epochs (default 20)")
    p.add_argument(
        "--checkpoint",
        default=None,
        help="where to save the state_dict (default: ~/.cache/ember/demo/digits_cnn.pt)",
    )
    p.add_argument("--export", default=None, metavar="FILE", help="also write the trained model as ONNX")
    p.add_argument("--amp", action="store_true", help="train in mixed precision (autocast + GradScaler)")
    p.add_argument(
        "--compile",
        action="store_true",
        help="train with the training step under ember.compile (same results as eager)",
    )
    p.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help="draw the training curve and confusion matrix (matplotlib)",
    )


def _single_threaded_blas() -> Any:
    """These matrices are tiny: BLAS threads cost more than they save (much more on a busy machine)."""
    try:
        from threadpoolctl import threadpool_limits  # installed with scikit-learn
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def main(args: Any = None) -> int:
    """Train, save, reload into a fresh model and report test accuracy. Returns 0 on success."""
    args = _parse(args)
    with _single_threaded_blas():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    device = args.device or os.environ.get("EMBER_DEVICE") or "cpu"
    ember.manual_seed(0)
    t0 = time.perf_counter()
    x_train, y_train, x_test, y_test = _load_digits(device)
    model = build_model().to(device)
    opt = ember.optim.Adam(model.parameters(), lr=3e-3)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(args.epochs, 1))
    loader = DataLoader(
        TensorDataset(x_train, y_train),
        batch_size=32,
        shuffle=True,
        generator=ember.Generator().manual_seed(1),
    )
    scaler = ember.amp.GradScaler(ember.device(device).type) if getattr(args, "amp", False) else None
    low = ember.amp.get_autocast_dtype(ember.device(device).type)
    precision = f" in mixed precision ({low})" if scaler else ""
    compiled = bool(getattr(args, "compile", False))  # a Namespace built by an older caller lacks it
    step = make_step(model, opt, scaler, compiled)
    how = ", training step compiled (ember.compile)" if compiled else ""
    print(f"ember demo: {len(y_train)} train / {len(y_test)} test digits (8x8) on {device}{precision}{how}")
    t_load = time.perf_counter() - t0
    history: list[tuple[float, float]] = []
    t1 = time.perf_counter()
    first_step: list[float] = []
    for epoch in range(1, args.epochs + 1):
        loss = _train_epoch(step, loader, epoch, args.epochs, first_step)
        sched.step()
        history.append((loss, accuracy(model, x_test, y_test)))
        print(f"epoch {epoch}/{args.epochs} loss {loss:.4f} test accuracy {history[-1][1]:.4f}")
    t_end = time.perf_counter()
    t_first = (first_step[0] if first_step else t_end) - t1
    t_train = t_end - t1 - t_first
    acc = accuracy(model, x_test, y_test)
    path = args.checkpoint or default_checkpoint()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    ember.save(model.state_dict(), path)
    fresh = build_model().to(device)
    fresh.load_state_dict(ember.load(path, map_location=device))
    reloaded = accuracy(fresh, x_test, y_test)
    print(
        f"loaded data in {t_load:.1f} s, first step {t_first:.1f} s (kernels compile on first use), "
        f"trained in {t_train:.1f} s; test accuracy {acc:.4f}"
    )
    print(f"checkpoint {path}")
    print(f"reloaded model test accuracy {reloaded:.4f}")
    if getattr(args, "plot", None):
        plot(history, fresh, x_test, y_test, args.plot)
        print(f"plot {args.plot}")
    if getattr(args, "export", None):  # a Namespace built by an older caller lacks it
        export_onnx(fresh, x_test[:1], args.export)
        print(f"exported ONNX model {args.export} (input 'images' (N, 1, 8, 8), output 'logits' (N, 10))")
    return 0 if reloaded == acc else 1


def plot(
    history: list[tuple[float, float]], model: nn.Module, x: ember.Tensor, y: ember.Tensor, path: str
) -> None:
    """The loss and test accuracy per epoch, and the test set's confusion matrix, in one image."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("ember demo --plot needs matplotlib: pip install 'ember[plot]'") from None
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    model.eval()
    with ember.no_grad():
        pred = model(x).argmax(1).cpu().numpy()
    truth = y.cpu().numpy()
    confusion = [[int(((truth == t) & (pred == p)).sum()) for p in range(10)] for t in range(10)]
    fig, (curve, matrix) = plt.subplots(1, 2, figsize=(10, 4))
    epochs = range(1, len(history) + 1)
    curve.plot(epochs, [h[0] for h in history], label="training loss")
    curve.plot(epochs, [h[1] for h in history], label="test accuracy")
    curve.set_xlabel("epoch")
    curve.legend()
    matrix.imshow(confusion, cmap="Blues")
    matrix.set_xlabel("predicted digit")
    matrix.set_ylabel("true digit")
    matrix.set_xticks(range(10))
    matrix.set_yticks(range(10))
    for t in range(10):
        for p in range(10):
            matrix.text(p, t, confusion[t][p], ha="center", va="center", fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def export_onnx(model: nn.Module, example: ember.Tensor, path: str) -> None:
    """Write ``model`` as ONNX with a dynamic batch axis."""
    import ember.onnx

    batch = {0: "batch"}
    ember.onnx.export(
        model,
        (example,),
        path,
        input_names=["images"],
        output_names=["logits"],
        dynamic_axes={"images": batch, "logits": batch},
    )


if __name__ == "__main__":
    raise SystemExit(main())
