"""Autocast through the frontend on the backend's device: lower-precision matmul, linear and
conv within the lower dtype's tolerance, float32 islands (losses, reductions PyTorch keeps in
float32 on every device type) computed in float32, promotion of mixed dtypes, gradients that
reach float32 weights as float32, and a GradScaler step. A backend declaring neither bfloat16
nor float16 must see autocast warn and disable itself (for each one it lacks), as PyTorch's CPU does for float64.

Each check is ``check(ember, device, low)``; ``low`` is the lower dtype's name the backend
declares (bfloat16 first) or None. The reference is float64 NumPy on inputs already rounded to
the lower dtype, so only the backend's own low-precision arithmetic is measured.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CHECKS", "low_dtype"]

# relative tolerance of a lower-precision result (a few of its ulps, summing 16 products)
RTOL = {"bfloat16": 3e-2, "float16": 4e-3}


def low_dtype(declared: list[str]) -> str | None:
    """The lower dtype autocast should use on a backend declaring ``declared``."""
    return next((d for d in ("bfloat16", "float16") if d in declared), None)


def _rand(ember: Any, dev: str, low: str, *shape: int, seed: int = 0) -> Any:
    """float32 values exactly representable in ``low``, on ``dev``."""
    rng = np.random.default_rng(seed + len(shape))
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32))
    return x.to(getattr(ember, low)).float().to(dev)


def _host(x: Any) -> np.ndarray:
    return x.detach().float().cpu().numpy().astype(np.float64)


def _close(got: Any, want: np.ndarray, rtol: float, what: str) -> None:
    scale = max(float(np.abs(want).max()), 1.0)
    err = float(np.abs(_host(got) - want).max())
    assert err <= rtol * scale, f"{what}: max error {err:.3g} exceeds {rtol:g} x {scale:.3g}"


def _dtype(ember: Any, x: Any, want: str, what: str) -> None:
    assert x.dtype == getattr(ember, want), f"{what} gave {x.dtype}, expected ember.{want}"


def _device_type(dev: str) -> str:
    return dev.split(":")[0]


def check_matmul(ember: Any, dev: str, low: str) -> None:
    a, b = _rand(ember, dev, low, 8, 16), _rand(ember, dev, low, 16, 4, seed=1)
    with ember.amp.autocast(_device_type(dev), dtype=getattr(ember, low)):
        out = a @ b
        bmm = ember.bmm(a.reshape(2, 4, 16), b.expand(2, 16, 4))
    _dtype(ember, out, low, "matmul")
    _dtype(ember, bmm, low, "bmm")
    want = _host(a) @ _host(b)
    _close(out, want, RTOL[low], "matmul")
    _close(bmm.reshape(8, 4), want, RTOL[low], "bmm")


def check_linear_and_conv(ember: Any, dev: str, low: str) -> None:
    x, w, bias = (
        _rand(ember, dev, low, 3, 16),
        _rand(ember, dev, low, 5, 16, seed=2),
        _rand(ember, dev, low, 5),
    )
    img, k = _rand(ember, dev, low, 1, 2, 6, 6, seed=3), _rand(ember, dev, low, 3, 2, 3, 3, seed=4)
    with ember.amp.autocast(_device_type(dev), dtype=getattr(ember, low)):
        lin = ember.nn.functional.linear(x, w, bias)
        conv = ember.nn.functional.conv2d(img, k)
    _dtype(ember, lin, low, "linear")
    _dtype(ember, conv, low, "conv2d")
    _close(lin, _host(x) @ _host(w).T + _host(bias), RTOL[low], "linear")
    ref = ember.nn.functional.conv2d(img.double().cpu(), k.double().cpu()).numpy()
    _close(conv, ref, RTOL[low], "conv2d")


def check_float32_islands(ember: Any, dev: str, low: str) -> None:
    """Losses take the lower-precision logits and compute in float32."""
    logits = _rand(ember, dev, low, 4, 5)
    target = ember.tensor([0, 3, 1, 4]).to(dev)
    with ember.amp.autocast(_device_type(dev), dtype=getattr(ember, low)):
        low_logits = logits @ ember.eye(5, device=dev)  # a lower-precision activation
        ce = ember.nn.functional.cross_entropy(low_logits, target)
        mse = ember.nn.functional.mse_loss(low_logits, ember.zeros(4, 5, device=dev))
    _dtype(ember, low_logits, low, "matmul")
    for name, out in (("cross_entropy", ce), ("mse_loss", mse)):
        _dtype(ember, out, "float32", name)
    z = _host(logits)
    lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
    _close(ce, np.asarray((lse - z[np.arange(4), [0, 3, 1, 4]]).mean()), 1e-5, "cross_entropy")
    _close(mse, np.asarray((z**2).mean()), 1e-5, "mse_loss")


def check_promote(ember: Any, dev: str, low: str) -> None:
    a = _rand(ember, dev, low, 2, 3)
    with ember.amp.autocast(_device_type(dev), dtype=getattr(ember, low)):
        out = ember.cat([a.to(getattr(ember, low)), a])
        kept = a.double() @ a.double().T  # float64 is never autocast
    _dtype(ember, out, "float32", "cat of lower and float32")
    _dtype(ember, kept, "float64", "float64 matmul")
    _close(out, np.concatenate([_host(a)] * 2), 0.0, "cat")


def check_backward(ember: Any, dev: str, low: str) -> None:
    x = _rand(ember, dev, low, 4, 16)
    w = _rand(ember, dev, low, 3, 16, seed=5).requires_grad_()
    with ember.amp.autocast(_device_type(dev), dtype=getattr(ember, low)):
        loss = ember.nn.functional.linear(x, w).float().pow(2).sum()
    loss.backward()
    _dtype(ember, w.grad, "float32", "the weight's gradient")
    xs, ws = _host(x), _host(w)
    _close(w.grad, 2 * (xs @ ws.T).T @ xs, 2 * RTOL[low], "the weight's gradient")


def check_grad_scaler(ember: Any, dev: str, low: str) -> None:
    """A finite step is taken with unscaled gradients; an overflowing one is skipped."""
    w = ember.nn.Parameter(ember.ones(3, device=dev))
    opt = ember.optim.SGD([w], lr=0.5)
    scaler = ember.amp.GradScaler(_device_type(dev), init_scale=1024.0)
    scaler.scale((w * ember.tensor([1.0, 2.0, 3.0], device=dev)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    _close(w, np.array([0.5, 0.0, -0.5]), 0.0, "parameters after a scaled step")
    opt.zero_grad()
    scaler.scale((w * float("inf")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    _close(w, np.array([0.5, 0.0, -0.5]), 0.0, "parameters after an overflowing step")
    assert scaler.get_scale() == 512.0, f"scale after one overflow: {scaler.get_scale()}, expected 512.0"


def check_unsupported_disables(ember: Any, dev: str, dtype: str) -> None:
    """A region in a lower dtype the backend does not declare warns (PyTorch's wording) and
    changes nothing."""
    a = ember.ones(2, 2, device=dev)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.amp.autocast(_device_type(dev), dtype=getattr(ember, dtype)):
            enabled = ember.amp.is_autocast_enabled(_device_type(dev))
            out = a @ a
    msgs = [str(w.message) for w in caught]
    assert any("autocast, but the target dtype is not supported" in m for m in msgs), msgs
    assert not enabled, f"autocast stayed enabled in an undeclared {dtype} region"
    _dtype(ember, out, "float32", f"matmul in a disabled {dtype} region")


CHECKS: dict[str, Callable[[Any, str, Any], None]] = {
    "matmul": check_matmul,
    "linear-conv": check_linear_and_conv,
    "float32-islands": check_float32_islands,
    "promote": check_promote,
    "backward": check_backward,
    "grad-scaler": check_grad_scaler,
}
