"""A float16/bfloat16 tensor with a scalar operand (a Python number or a 0-d tensor) against
PyTorch, bit for bit: mul and the divisions read the scalar at float32 precision and round the
result once, the other ops take the scalar rounded to the tensor's dtype (PyTorch's CPU kernels);
in place, reversed, and in the gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.linspace(-3, 3, 601, dtype=np.float32)
SCALARS = [0.1, 3.3333, -7.77, 3, 70000]
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda a, s: a * s,
    "rmul": lambda a, s: s * a,
    "div": lambda a, s: a / s,
    "floor_div": lambda a, s: a // s,
    "div_trunc": lambda a, s: a.div(s, rounding_mode="trunc"),
    "add": lambda a, s: a + s,
    "sub": lambda a, s: a - s,
    "rsub": lambda a, s: s - a,
    "pow": lambda a, s: a.abs() ** s,
    "remainder": lambda a, s: a % s,
    "eq": lambda a, s: a == s,
    "lt": lambda a, s: a < s,
}


def _same(e: Any, t: Any) -> None:
    ev, tv = e.float().numpy(), t.float().numpy()
    np.testing.assert_array_equal(ev, tv)


# pow's integer exponents are PyTorch's special cases (x*x*x; an exponent that overflows the
# dtype raises), not this rule
CASES = [(op, s) for op in OPS for s in SCALARS if not (op == "pow" and s in (3, 70000))]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op,s", CASES)
def test_python_scalar(dtype: str, s: float, op: str) -> None:
    got = OPS[op](ember.tensor(X).to(getattr(ember, dtype)), s)
    want = OPS[op](torch.tensor(X).to(getattr(torch, dtype)), s)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    _same(got, want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("sdtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["mul", "div", "add", "sub"])
def test_zero_dim_tensor_scalar(dtype: str, sdtype: str, op: str) -> None:
    got = OPS[op](ember.tensor(X).to(getattr(ember, dtype)), ember.tensor(0.1, dtype=getattr(ember, sdtype)))
    want = OPS[op](torch.tensor(X).to(getattr(torch, dtype)), torch.tensor(0.1, dtype=getattr(torch, sdtype)))
    assert got.dtype.name == dtype
    _same(got, want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("method", ["mul_", "div_", "add_", "sub_"])
def test_in_place(dtype: str, method: str) -> None:
    e, t = ember.tensor(X).to(getattr(ember, dtype)), torch.tensor(X).to(getattr(torch, dtype))
    getattr(e, method)(0.1)
    getattr(t, method)(0.1)
    _same(e, t)
    getattr(e, method)(ember.tensor(3.3333))
    getattr(t, method)(torch.tensor(3.3333))
    _same(e, t)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gradients(dtype: str) -> None:
    e = ember.tensor(X).to(getattr(ember, dtype)).requires_grad_()
    t = torch.tensor(X).to(getattr(torch, dtype)).requires_grad_()
    (e * 0.1 / 3.3333 + 0.1).sum().backward()
    (t * 0.1 / 3.3333 + 0.1).sum().backward()
    _same(e.grad, t.grad)
