"""Finite-difference checks of analytic gradients (float64 central differences)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Analytic and numerical gradients disagree."""


def _inputs(inputs: Any) -> tuple:
    return inputs if isinstance(inputs, tuple) else (inputs,)


def _flat_outputs(fn: Callable[..., Any], inputs: tuple) -> list:
    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if hasattr(o, "requires_grad")]


def _numerical(fn: Callable[..., Any], inputs: tuple, i: int, eps: float, out_index: int) -> Any:
    import numpy as np

    x = inputs[i]
    base = x.detach().numpy(force=True).astype(np.complex128 if x.dtype.is_complex else np.float64)
    flat = base.reshape(-1)
    ref = _flat_outputs(fn, inputs)[out_index]
    jac = np.zeros((flat.size, max(ref.numel(), 1)))
    from .._creation import tensor

    for j in range(flat.size):
        vals = []
        for sign in (1, -1):
            pert = flat.copy()
            pert[j] += sign * eps
            xs = list(inputs)
            # Grad mode stays on and the input keeps requires_grad: for gradgradcheck, ``fn``
            # itself differentiates its output with respect to this input.
            xs[i] = tensor(
                pert.reshape(base.shape), dtype=x.dtype, device=x.device, requires_grad=x.requires_grad
            )
            vals.append(
                _flat_outputs(fn, tuple(xs))[out_index]
                .detach()
                .numpy(force=True)
                .astype(np.float64)
                .reshape(-1)
            )
        jac[j] = (vals[0] - vals[1]) / (2 * eps)
    return jac


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """Compare autograd's Jacobian of ``func`` at ``inputs`` with central differences."""
    import numpy as np

    from . import grad as autograd_grad

    ins = _inputs(inputs)
    outs = _flat_outputs(func, ins)
    for k, out in enumerate(outs):
        diff_ins = [(i, x) for i, x in enumerate(ins) if hasattr(x, "requires_grad") and x.requires_grad]
        for i, x in diff_ins:
            numeric = _numerical(func, ins, i, eps, k)
            analytic = np.zeros_like(numeric)
            from .._creation import zeros_like

            for m in range(out.numel()):
                o = _flat_outputs(func, ins)[k]
                if not o.requires_grad:  # an output independent of the inputs: zero Jacobian
                    break
                g = zeros_like(o).reshape(-1)
                g[m] = 1.0
                (gx,) = autograd_grad(o, x, g.reshape(o.shape), retain_graph=True, allow_unused=True)
                if gx is not None:
                    analytic[:, m] = gx.detach().numpy(force=True).reshape(-1)
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {k} with respect to input {i},\n"
                        f"numerical:{numeric}\nanalytical:{analytic}\n"
                    )
                return False
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, **kwargs: Any) -> bool:
    """``gradcheck`` of the first derivative (checks second-order gradients)."""
    from . import grad as autograd_grad

    ins = _inputs(inputs)

    def first(*xs: Any) -> Any:
        outs = _flat_outputs(func, xs)
        diff = [x for x in xs if hasattr(x, "requires_grad") and x.requires_grad]
        from .._creation import ones_like

        gos = [ones_like(o) for o in outs]
        return autograd_grad(outs, diff, gos, create_graph=True, allow_unused=True)

    return gradcheck(first, ins, **kwargs)
