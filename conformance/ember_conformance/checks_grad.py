"""Gradient checks through the frontend, on the backend under test: for every kernel whose
record has ``grad_order >= 1``, ``ember.autograd.gradcheck`` of the frontend op that runs it
(and ``gradgradcheck`` for order 2) on tiny inputs. float64 where the backend declares it;
else float32 with a wide step and loose tolerances (finite differences in float32 are coarse).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .checks import Check, CheckFailed, Ctx
from .records import GRAD_ORDERS

__all__ = ["GRAD_CALLS", "GROUPS"]

# kernel op -> (input shapes and ranges, the frontend call that runs the kernel)
_S = tuple[tuple[int, ...], float, float]
GRAD_CALLS: dict[str, tuple[list[_S], Callable[..., Any]]] = {
    "add": ([((2, 3), -1, 1), ((3,), -1, 1)], lambda e, a, b: a + b),
    "sub": ([((2, 3), -1, 1), ((2, 1), -1, 1)], lambda e, a, b: a - b),
    "mul": ([((2, 3), -1, 1), ((2, 3), -1, 1)], lambda e, a, b: a * b),
    "div": ([((2, 3), -1, 1), ((2, 3), 0.5, 1.5)], lambda e, a, b: a / b),
    "pow": ([((2, 3), 0.5, 1.5), ((2, 3), -1, 1)], lambda e, a, b: a**b),
    "neg": ([((2, 3), -1, 1)], lambda e, a: -a),
    "exp": ([((2, 3), -1, 1)], lambda e, a: a.exp()),
    "log": ([((2, 3), 0.5, 1.5)], lambda e, a: a.log()),
    "sqrt": ([((2, 3), 0.5, 1.5)], lambda e, a: a.sqrt()),
    "sin": ([((2, 3), -1, 1)], lambda e, a: a.sin()),
    "cos": ([((2, 3), -1, 1)], lambda e, a: a.cos()),
    "tanh": ([((2, 3), -1, 1)], lambda e, a: a.tanh()),
    "sigmoid": ([((2, 3), -1, 1)], lambda e, a: a.sigmoid()),
    "erf": ([((2, 3), -1, 1)], lambda e, a: a.erf()),
    "maximum": ([((2, 3), -1, 1), ((2, 3), -1, 1)], lambda e, a, b: e.maximum(a, b)),
    "where": ([((2, 3), -1, 1), ((2, 3), -1, 1)], lambda e, a, b: e.where(a > 0, a, b)),
    "sum": ([((2, 3), -1, 1)], lambda e, a: a.sum(1)),
    "prod": ([((2, 3), 0.5, 1.5)], lambda e, a: a.prod(1)),
    "amax": ([((2, 3), -1, 1)], lambda e, a: a.amax(1)),
    "cumsum": ([((2, 3), -1, 1)], lambda e, a: a.cumsum(1)),
    "matmul": ([((2, 3), -1, 1), ((3, 2), -1, 1)], lambda e, a, b: a @ b),
    "softmax": ([((2, 3), -1, 1)], lambda e, a: e.softmax(a, 1)),
    "log_softmax": ([((2, 3), -1, 1)], lambda e, a: e.log_softmax(a, 1)),
    "gather": ([((2, 3), -1, 1)], lambda e, a: a.gather(1, e.tensor([[0, 2], [1, 1]], device=a.device))),
    "cat": ([((2, 3), -1, 1), ((1, 3), -1, 1)], lambda e, a, b: e.cat([a, b])),
    "permute": ([((2, 3), -1, 1)], lambda e, a: a.permute(1, 0) * 1),
    "conv2d": ([((1, 1, 3, 3), -1, 1), ((1, 1, 2, 2), -1, 1)], lambda e, a, w: e.nn.functional.conv2d(a, w)),
}


def _inputs(ember: Any, shapes: list[_S], dev: str, dtype: Any) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    out = []
    for shape, lo, hi in shapes:
        a = rng.uniform(lo, hi, shape)
        if lo < 0 < hi:
            a = np.where(np.abs(a) < 0.1, np.copysign(0.2, a), a)  # away from kinks
        out.append(ember.tensor(a, dtype=dtype, device=dev, requires_grad=True))
    return tuple(out)


def _check(ctx: Ctx, op: str, order: int) -> None:
    import ember
    from ember.autograd import gradcheck, gradgradcheck
    from ember.autograd.gradcheck import GradcheckError

    dev = f"{ctx.lb.name}:{ctx.index}"
    wide = "float64" in ctx.dtypes
    dtype = ember.float64 if wide else ember.float32
    tol: dict[str, float] = {} if wide else {"eps": 1e-2, "atol": 1e-2, "rtol": 1e-2}
    shapes, call = GRAD_CALLS[op]

    def fn(*xs: Any) -> Any:
        return call(ember, *xs)

    for check, name in ((gradcheck, "gradcheck"), (gradgradcheck, "gradgradcheck"))[:order]:
        try:
            check(fn, _inputs(ember, shapes, dev, dtype), **tol)
        except GradcheckError as e:
            raise CheckFailed(f"{op}: {name} of the frontend op on {dev} ({dtype}): {e}") from None


def grad_checks(ctx: Ctx) -> list[Check]:
    if not {"float64", "float32"} & set(ctx.dtypes):
        return []
    return [
        (f"{op}-order{order}", lambda op=op, order=order: _check(ctx, op, order))
        for op, order in sorted(GRAD_ORDERS.items())
        if order >= 1 and op in ctx.lb.k
    ]


GROUPS: dict[str, Callable[[Ctx], list[Check]]] = {"grad": grad_checks}
