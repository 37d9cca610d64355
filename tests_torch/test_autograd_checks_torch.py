"""ember's checks on user-returned gradients against PyTorch's: each case runs the same code with
``lib = torch`` and ``lib = ember`` and must give the same values, or the same exception type and
message (``torch`` read as ``ember``). Devices other than ``cpu`` are covered in tests/."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ember
import pytest
import torch


def _my_fn(lib: Any, make: Callable) -> Any:
    """``MyFn``: ``forward(x, y) = 2x + y``, ``backward`` returns ``make(lib, g)``."""

    def forward(ctx: Any, x: Any, y: Any) -> Any:
        return x * 2 + y

    def backward(ctx: Any, g: Any) -> Any:
        return make(lib, g)

    return type(
        "MyFn",
        (lib.autograd.Function,),
        {"forward": staticmethod(forward), "backward": staticmethod(backward)},
    )


def _function(make: Callable, x_shape: tuple = (3,), dtype: str = "float32", y: Any = "tensor") -> Callable:
    def run(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        x = lib.ones(x_shape, dtype=dt, requires_grad=True)
        yy = lib.ones(x_shape, dtype=dt, requires_grad=True) if y == "tensor" else y
        out = _my_fn(lib, make).apply(x, yy)
        out.backward(lib.ones_like(out))
        return x.grad, getattr(yy, "grad", None)

    return run


def _hook(make: Callable, leaf: bool = True, use_grad: bool = False) -> Callable:
    def run(lib: Any) -> Any:
        x = lib.ones(3, requires_grad=True)
        t = x if leaf else x * 1
        t.register_hook(make(lib))
        y = (t * 2).sum()
        if use_grad:
            return lib.autograd.grad(y, x)
        y.backward()
        return x.grad

    return run


def _node_hook(make: Callable) -> Callable:
    def run(lib: Any) -> Any:
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: make(lib, gi))
        y.sum().backward()
        return x.grad

    return run


def _module_hook(make: Callable) -> Callable:
    def run(lib: Any) -> Any:
        m = lib.nn.Module()
        m.forward = lambda a, b: a * b
        m.register_full_backward_hook(lambda mod, gin, gout: make(lib, gin))
        a = lib.ones(3, requires_grad=True)
        b = lib.full((3,), 2.0, requires_grad=True)
        m(a, b).sum().backward()
        return a.grad, b.grad

    return run


def _grad_outputs(make: Callable, dtype: str = "float32", api: str = "grad", n_out: int = 1) -> Callable:
    def run(lib: Any) -> Any:
        x = lib.ones(3, dtype=getattr(lib, dtype), requires_grad=True)
        outs = [x * (k + 2) for k in range(n_out)]
        if api == "grad":
            return lib.autograd.grad(outs, x, make(lib))
        lib.autograd.backward(outs, make(lib))
        return x.grad

    return run


def _leaf_root(lib: Any) -> Any:
    x = lib.ones(3, requires_grad=True)
    x.backward(lib.full((3,), 4.0, dtype=lib.float64))
    return x.grad


class _Named:
    def __call__(self, g: Any) -> Any:
        return g[:1]


CASES: dict[str, Callable] = {
    # custom Function: count
    "fn 3 grads": _function(lambda lib, g: (g, g, g)),
    "fn extra Nones": _function(lambda lib, g: (2 * g, g, None, None)),
    "fn 1 grad": _function(lambda lib, g: g),
    "fn 1-tuple": _function(lambda lib, g: (g,)),
    "fn list": _function(lambda lib, g: [g, g]),
    "fn float grad": _function(lambda lib, g: (3.0, g)),
    "fn nested tuple": _function(lambda lib, g: ((g,), g)),
    "fn grad for non-tensor arg": _function(lambda lib, g: (g, g), y=1.0),
    "fn None grad": _function(lambda lib, g: (None, g)),
    "fn unchecked for input not requiring grad": _function(lambda lib, g: (g, lib.ones(5)), y=None),
    # custom Function: shapes
    "fn shape [5]": _function(lambda lib, g: (lib.ones(5), g)),
    "fn shape [5] at index 1": _function(lambda lib, g: (g, lib.ones(5))),
    "fn shape [1]": _function(lambda lib, g: (lib.ones(1), g)),
    "fn shape []": _function(lambda lib, g: (lib.tensor(2.0), g)),
    "fn shape [3, 1]": _function(lambda lib, g: (lib.ones(3, 1), g)),
    "fn shape [3] for [2, 3]": _function(lambda lib, g: (lib.ones(3), g), x_shape=(2, 3)),
    "fn shape [3] for [1, 3]": _function(lambda lib, g: (lib.ones(3), g), x_shape=(1, 3)),
    "fn summed [2, 3] to [3]": _function(lambda lib, g: (lib.arange(6.0).reshape(2, 3), g)),
    "fn summed [4, 3] to [1, 3]": _function(
        lambda lib, g: (lib.arange(12.0).reshape(4, 3), g), x_shape=(1, 3)
    ),
    "fn summed [2, 5] to [2, 1]": _function(
        lambda lib, g: (lib.arange(10.0).reshape(2, 5), g), x_shape=(2, 1)
    ),
    "fn summed [2, 2] to []": _function(lambda lib, g: (lib.arange(4.0).reshape(2, 2), g), x_shape=()),
    "fn summed [5, 2, 0] to [2, 0]": _function(lambda lib, g: (lib.ones(5, 2, 0), g), x_shape=(2, 0)),
    # custom Function: dtypes
    "fn float64 grad": _function(lambda lib, g: (g.double() * 3, g)),
    "fn int64 grad": _function(lambda lib, g: (lib.ones(3, dtype=lib.int64), g)),
    "fn bool grad": _function(lambda lib, g: (lib.ones(3, dtype=lib.bool), g)),
    "fn float64 input float32 grad": _function(lambda lib, g: (g.float(), g.float()), dtype="float64"),
    "fn complex grad for real": _function(lambda lib, g: (g.to(lib.complex64), g)),
    "fn real grad for complex": _function(lambda lib, g: (lib.ones(3), g), dtype="complex64"),
    "fn complex128 grad for complex64": _function(
        lambda lib, g: (lib.ones(3, dtype=lib.complex128), g), dtype="complex64"
    ),
    "fn int grad for complex": _function(lambda lib, g: (lib.ones(3, dtype=lib.int64), g), dtype="complex64"),
    # tensor hooks
    "hook leaf size": _hook(lambda lib: lambda g: lib.ones(5)),
    "hook non-leaf size": _hook(lambda lib: lambda g: lib.ones(5), leaf=False),
    "hook leaf broadcastable size": _hook(lambda lib: lambda g: lib.ones(1)),
    "hook non-leaf [1, 3]": _hook(lambda lib: lambda g: lib.ones(1, 3), leaf=False),
    "hook float64": _hook(lambda lib: lambda g: g.double()),
    "hook non-leaf float64": _hook(lambda lib: lambda g: g.double(), leaf=False),
    "hook float16": _hook(lambda lib: lambda g: g.half()),
    "hook int64": _hook(lambda lib: lambda g: g.long()),
    "hook int8": _hook(lambda lib: lambda g: g.to(lib.int8)),
    "hook uint8": _hook(lambda lib: lambda g: g.to(lib.uint8)),
    "hook bool": _hook(lambda lib: lambda g: g.bool()),
    "hook bfloat16": _hook(lambda lib: lambda g: g.to(lib.bfloat16)),
    "hook complex64": _hook(lambda lib: lambda g: g.to(lib.complex64)),
    "hook float": _hook(lambda lib: lambda g: 3.0),
    "hook non-leaf float": _hook(lambda lib: lambda g: 3.0, leaf=False),
    "hook tuple": _hook(lambda lib: lambda g: (g,)),
    "hook callable object": _hook(lambda lib: _Named()),
    "hook partial": _hook(lambda lib: functools.partial(lambda k, g: g[:k], 1)),
    "hook replaces": _hook(lambda lib: lambda g: g * 10),
    "hook non-leaf replaces": _hook(lambda lib: lambda g: g * 10, leaf=False),
    "hook observes": _hook(lambda lib: lambda g: None),
    "hook under grad() replaces": _hook(lambda lib: lambda g: g * 10, use_grad=True),
    "hook under grad() size": _hook(lambda lib: lambda g: lib.ones(2), use_grad=True),
    # node hooks
    "node hook replaces": _node_hook(lambda lib, gi: (gi[0] * 5, None)),
    "node hook observes": _node_hook(lambda lib, gi: None),
    "node hook count": _node_hook(lambda lib, gi: (gi[0],)),
    "node hook list": _node_hook(lambda lib, gi: list(gi)),
    "node hook fills None": _node_hook(lambda lib, gi: (gi[0], gi[0])),
    "node hook float64": _node_hook(lambda lib, gi: (gi[0].double(), None)),
    "node hook size": _node_hook(lambda lib, gi: (lib.ones(4), None)),
    # module full backward hooks
    "module hook count 1": _module_hook(lambda lib, gi: gi[:1]),
    "module hook count 3": _module_hook(lambda lib, gi: (*gi, gi[0])),
    "module hook tensor": _module_hook(lambda lib, gi: gi[0]),
    "module hook size": _module_hook(lambda lib, gi: (lib.ones(5), gi[1])),
    "module hook float64": _module_hook(lambda lib, gi: (gi[0].double(), gi[1])),
    "module hook float": _module_hook(lambda lib, gi: (1.0, gi[1])),
    "module hook list replaces": _module_hook(lambda lib, gi: [gi[0] * 3, gi[1]]),
    # grad_outputs / gradient
    "grad_outputs shape [2]": _grad_outputs(lambda lib: [lib.ones(2)]),
    "grad_outputs shape [1]": _grad_outputs(lambda lib: [lib.ones(1)]),
    "grad_outputs shape []": _grad_outputs(lambda lib: lib.tensor(1.0)),
    "backward gradient shape [2]": _grad_outputs(lambda lib: [lib.ones(2)], api="backward"),
    "grad_outputs float": _grad_outputs(lambda lib: [2.0]),
    "grad_outputs str": _grad_outputs(lambda lib: ["a"]),
    "grad_outputs complex for real": _grad_outputs(lambda lib: lib.ones(3, dtype=lib.complex64)),
    "grad_outputs real for complex": _grad_outputs(lambda lib: lib.ones(3), dtype="complex64"),
    "grad_outputs complex128 for complex64": _grad_outputs(
        lambda lib: lib.ones(3, dtype=lib.complex128), dtype="complex64"
    ),
    "grad_outputs float64": _grad_outputs(lambda lib: lib.full((3,), 0.1, dtype=lib.float64)),
    "grad_outputs int64": _grad_outputs(lambda lib: lib.ones(3, dtype=lib.int64)),
    "grad_outputs bool": _grad_outputs(lambda lib: lib.ones(3, dtype=lib.bool)),
    "backward gradient float64": _grad_outputs(lambda lib: lib.ones(3, dtype=lib.float64), api="backward"),
    "grad_outputs fewer": _grad_outputs(lambda lib: [lib.ones(3)], n_out=2),
    "backward gradients fewer": _grad_outputs(lambda lib: [lib.ones(3)], api="backward", n_out=2),
    "grad_outputs empty": _grad_outputs(lambda lib: []),
    "backward gradients empty": _grad_outputs(lambda lib: [], api="backward", n_out=2),
    "grad_outputs more": _grad_outputs(lambda lib: [lib.ones(3), lib.ones(3)]),
    "grad_outputs shape before count": _grad_outputs(lambda lib: [lib.ones(2)], api="backward", n_out=2),
    "leaf gradient float64": _leaf_root,
}


def _outcome(lib: Any, case: Callable) -> Any:
    """What a case gives: values with their dtypes, or the exception's type and message."""
    try:
        result = case(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome being compared
        message = str(e).replace("PyTorch", "ember").replace("torch", "ember")
        return ("raised", type(e).__name__, message)
    return ("returned", _plain(result))


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if value is None:
        return None
    return (value.tolist(), str(value.dtype).split(".")[-1], list(value.shape))


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_torch(name):
    case = CASES[name]
    assert _outcome(ember, case) == _outcome(torch, case)
