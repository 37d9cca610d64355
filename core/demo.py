"""``ember demo``: train a small CNN on scikit-learn's handwritten digits, save, reload, evaluate.

The digits (8x8 images, bundled with scikit-learn, no download) need the optional extra
``pip install ember[demo]``. Runs deterministically (``ember.manual_seed``) on any installed
device: ``ember demo --device opencl`` (or ``EMBER_DEVICE=opencl ember demo``).
``ember demo --export demo.onnx`` also writes the trained model as ONNX (needs ``onnx``), with
a dynamic batch axis: input ``images`` (N, 1, 8, 8), output ``logits`` (N, 10).
``ember demo --amp`` trains in mixed precision (``ember.amp.autocast``: bfloat16 on cpu,
float16 elsewhere, with a GradScaler).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from typing import Any

import ember
import ember.amp
from ember import nn
from ember.utils.data import DataLoader, TensorDataset

__all__ = ["build_model", "main"]


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


def _bar(done: int, total: int, width: int = 24) -> str:
    filled = width * done // total
    return "[" + "#" * filled + "." * (width - filled) + "]"


def _train_epoch(
    model: nn.Module, loader: DataLoader, opt: Any, epoch: int, epochs: int, scaler: Any = None
) -> float:
    """One epoch; with ``scaler`` (an ``ember.amp.GradScaler``), forward runs under autocast."""
    loss_fn = nn.CrossEntropyLoss()
    total, seen = 0.0, 0
    n = len(loader)
    for i, (xb, yb) in enumerate(loader, 1):
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
        total += loss.item() * len(yb)
        seen += len(yb)
        sys.stdout.write(f"\repoch {epoch}/{epochs} {_bar(i, n)} {i}/{n} loss {total / seen:.4f}")
        sys.stdout.flush()
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
    p.add_argument("--checkpoint", default=None, help="where to save the state_dict (default: a temp dir)")
    p.add_argument("--export", default=None, metavar="FILE", help="also write the trained model as ONNX")
    p.add_argument("--amp", action="store_true", help="train in mixed precision (autocast + GradScaler)")


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
    print(f"ember demo: {len(y_train)} train / {len(y_test)} test digits (8x8) on {device}{precision}")
    for epoch in range(1, args.epochs + 1):
        _train_epoch(model, loader, opt, epoch, args.epochs, scaler)
        sched.step()
        print(f"  test accuracy {accuracy(model, x_test, y_test):.4f}")
    acc = accuracy(model, x_test, y_test)
    path = args.checkpoint or os.path.join(tempfile.mkdtemp(prefix="ember-demo-"), "digits_cnn.pt")
    ember.save(model.state_dict(), path)
    fresh = build_model().to(device)
    fresh.load_state_dict(ember.load(path, map_location=device))
    reloaded = accuracy(fresh, x_test, y_test)
    elapsed = time.perf_counter() - t0
    print(f"trained in {elapsed:.1f} s; test accuracy {acc:.4f}; checkpoint {path}")
    print(f"reloaded model test accuracy {reloaded:.4f}")
    if getattr(args, "export", None):  # a Namespace built by an older caller lacks it
        export_onnx(fresh, x_test[:1], args.export)
        print(f"exported ONNX model {args.export} (input 'images' (N, 1, 8, 8), output 'logits' (N, 10))")
    return 0 if reloaded == acc else 1


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
