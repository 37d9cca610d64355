"""``inplace=True`` activation and dropout modules and the ``F.*_`` forms against PyTorch: the
same tensor comes back, written in place, its version bumped and its ``grad_fn`` the op's node,
gradients equal, and a leaf requiring grad refused with PyTorch's message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import pytest

torch = pytest.importorskip("torch")

MODULES = [
    ("ReLU", ()),
    ("ReLU6", ()),
    ("LeakyReLU", (0.2,)),
    ("ELU", (0.7,)),
    ("CELU", (0.7,)),
    ("SELU", ()),
    ("Hardtanh", (-0.5, 1.5)),
    ("Hardsigmoid", ()),
    ("Hardswish", ()),
    ("SiLU", ()),
    ("Mish", ()),
    ("Threshold", (0.1, 20.0)),
]
DROPOUTS = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]
FUNCTIONS = [
    ("relu_", ()),
    ("elu_", (0.5,)),
    ("leaky_relu_", (0.3,)),
    ("hardtanh_", (-0.5, 0.5)),
    ("threshold_", (0.1, 20.0)),
    ("celu_", ()),
    ("selu_", ()),
]
VALUES = [[-4.0, -1.0, 0.5], [2.0, 3.5, -0.25]]


def _check(case: Callable[[Any], Any]) -> None:
    def run(lib: Any) -> Any:
        try:
            return ("ok", case(lib))
        except RuntimeError as e:
            return ("RuntimeError", str(e))

    want, got = run(torch), run(ember)
    assert got[0] == want[0]
    if want[0] != "ok":
        assert got[1] == want[1]
        return
    for w, g in zip(want[1], got[1]):
        if isinstance(w, list):
            assert g == pytest.approx(w, rel=1e-5, abs=1e-6)
        else:
            assert g == w


def _nonleaf(lib: Any, apply: Callable[[Any], Any], shape: tuple = (2, 3)) -> Any:
    a = lib.tensor(VALUES, requires_grad=True)
    b = a.reshape(shape) * 1
    v = b._version
    y = apply(b)
    (y * lib.arange(1.0, 7.0).reshape(shape)).sum().backward()

    def flat(t: Any) -> list:
        return t.detach().reshape(-1).tolist()

    return [y is b, b._version - v, type(b.grad_fn).__name__, flat(y), flat(a.grad)]


@pytest.mark.parametrize(("name", "args"), MODULES)
def test_inplace_module(name: str, args: tuple) -> None:
    _check(lambda lib: _nonleaf(lib, getattr(lib.nn, name)(*args, inplace=True)))


@pytest.mark.parametrize(("name", "args"), MODULES)
def test_inplace_module_without_grad_writes_the_input(name: str, args: tuple) -> None:
    def case(lib: Any) -> Any:
        x = lib.tensor(VALUES)
        y = getattr(lib.nn, name)(*args, inplace=True)(x)
        return [y is x, x._version, x.reshape(-1).tolist()]

    _check(case)


@pytest.mark.parametrize(("name", "args"), MODULES)
def test_inplace_module_refuses_a_leaf(name: str, args: tuple) -> None:
    _check(lambda lib: getattr(lib.nn, name)(*args, inplace=True)(lib.tensor(VALUES, requires_grad=True)))


@pytest.mark.parametrize("p", [0.0, 1.0])
@pytest.mark.parametrize("name", DROPOUTS)
def test_inplace_dropout_module(name: str, p: float) -> None:
    shape = (1, 2, 3, 1, 1) if name == "Dropout3d" else (1, 2, 3)
    _check(lambda lib: _nonleaf(lib, getattr(lib.nn, name)(p, inplace=True), shape))


@pytest.mark.parametrize("name", DROPOUTS)
def test_inplace_dropout_module_refuses_a_leaf(name: str) -> None:
    shape = (1, 2, 3, 1, 1) if name == "Dropout3d" else (1, 2, 3)
    _check(lambda lib: getattr(lib.nn, name)(0.5, inplace=True)(lib.ones(shape, requires_grad=True)))


@pytest.mark.parametrize(("name", "args"), FUNCTIONS)
def test_functional_inplace_form(name: str, args: tuple) -> None:
    _check(lambda lib: _nonleaf(lib, lambda x: getattr(lib.nn.functional, name)(x, *args)))


@pytest.mark.parametrize(("name", "args"), FUNCTIONS)
def test_functional_inplace_form_on_a_view_reaches_the_base(name: str, args: tuple) -> None:
    def case(lib: Any) -> Any:
        a = lib.tensor(VALUES, requires_grad=True)
        b = a * 1
        getattr(lib.nn.functional, name)(b[1], *args)
        (b * b).sum().backward()
        return [b.reshape(-1).tolist(), a.grad.reshape(-1).tolist()]

    _check(case)


def test_relu_inplace_keyword() -> None:
    _check(lambda lib: _nonleaf(lib, lambda x: lib.nn.functional.relu(x, inplace=True)))
