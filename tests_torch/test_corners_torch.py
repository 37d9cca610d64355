"""Corner cases against PyTorch 2.13: arguments PyTorch will not differentiate, softmax and norms
over empty dims, bool inputs PyTorch refuses, and which index kthvalue reports among equal values.

Each case runs the same call in both libraries on the same data: where PyTorch returns, ember
returns the same values, shape and dtype; where PyTorch raises, ember raises the same exception
type with the same first line of message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(thunk: Callable[[], Any]) -> Any:
    """The value of ``thunk()``, or the (type name, first message line) of what it raised."""
    try:
        return thunk()
    except Exception as error:  # noqa: BLE001 - the exception is the outcome compared
        return (type(error).__name__, str(error).split("\n")[0].replace("torch.", "ember."))


def _plain(result: Any) -> Any:
    if isinstance(result, tuple) and result and isinstance(result[0], str):
        return result
    if isinstance(result, (tuple, list)):
        return [_plain(part) for part in result]
    if str(result.dtype).endswith("bfloat16"):  # NumPy has no bfloat16: compare as float32
        result = result.float()
    return result.detach().numpy()


def _same(case: Callable[[Any], Any]) -> None:
    expected = _plain(_outcome(lambda: case(torch)))
    actual = _plain(_outcome(lambda: case(ember)))
    if isinstance(expected, tuple):
        assert actual == expected
        return
    assert not isinstance(actual, tuple), actual
    pairs = zip(expected, actual, strict=True) if isinstance(expected, list) else [(expected, actual)]
    for e, a in pairs:
        assert a.shape == e.shape
        assert str(a.dtype) == str(e.dtype)
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)


def _data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.RandomState(seed).rand(*shape).astype("float32")


# -- arguments PyTorch has no derivative for ------------------------------------------------
def _loss_grad(lib: Any, name: str, args: list, kwargs: dict, wrt: str) -> Any:
    """d(loss)/d(wrt) where ``wrt`` names the positional index or keyword that requires grad."""
    args = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    leaf = kwargs[wrt] if wrt in kwargs else args[int(wrt)]
    leaf.requires_grad_(True)
    loss = getattr(lib.nn.functional, name)(*args, **kwargs)
    return lib.autograd.grad(loss.sum(), leaf)[0]


_LABELS = np.array([0, 1, 2])
_LOSSES = {
    "cross_entropy weight": ("cross_entropy", [_data(3, 4), _LABELS], {"weight": _data(4)}, "weight"),
    "cross_entropy 3-d weight": (
        "cross_entropy",
        [_data(3, 4, 2), np.zeros((3, 2), dtype=np.int64)],
        {"weight": _data(4)},
        "weight",
    ),
    "cross_entropy smoothing weight": (
        "cross_entropy",
        [_data(3, 4), _LABELS],
        {"weight": _data(4), "label_smoothing": 0.1},
        "weight",
    ),
    "cross_entropy probabilities weight": (
        "cross_entropy",
        [_data(3, 4), _data(3, 4, seed=1)],
        {"weight": _data(4)},
        "weight",
    ),
    "nll_loss weight": ("nll_loss", [_data(3, 4), _LABELS], {"weight": _data(4)}, "weight"),
    "nll_loss 4-d weight": (
        "nll_loss",
        [_data(2, 4, 2, 2), np.zeros((2, 2, 2), dtype=np.int64)],
        {"weight": _data(4), "reduction": "none"},
        "weight",
    ),
    "binary_cross_entropy weight": (
        "binary_cross_entropy",
        [_data(3), _data(3, seed=1)],
        {"weight": _data(3)},
        "weight",
    ),
    "binary_cross_entropy target": ("binary_cross_entropy", [_data(3), _data(3, seed=1)], {}, "1"),
    "bce_with_logits weight": (
        "binary_cross_entropy_with_logits",
        [_data(3), _data(3, seed=1)],
        {"weight": _data(3)},
        "weight",
    ),
    "bce_with_logits pos_weight": (
        "binary_cross_entropy_with_logits",
        [_data(3), _data(3, seed=1)],
        {"pos_weight": _data(3)},
        "pos_weight",
    ),
    "bce_with_logits target": ("binary_cross_entropy_with_logits", [_data(3), _data(3, seed=1)], {}, "1"),
    "soft_margin_loss target": ("soft_margin_loss", [_data(2, 3), _data(2, 3, seed=1)], {}, "1"),
    "mse_loss target": ("mse_loss", [_data(3), _data(3, seed=1)], {}, "1"),
    "multilabel_soft_margin_loss weight": (
        "multilabel_soft_margin_loss",
        [_data(2, 3), _data(2, 3, seed=1)],
        {"weight": _data(3)},
        "weight",
    ),
}


@pytest.mark.parametrize("case", sorted(_LOSSES))
def test_loss_argument_gradients(case: str) -> None:
    name, args, kwargs, wrt = _LOSSES[case]
    _same(lambda lib: _loss_grad(lib, name, args, kwargs, wrt))


def test_weight_requiring_grad_is_accepted_without_grad_mode() -> None:
    for lib in (torch, ember):
        w = lib.tensor(_data(4)).requires_grad_(True)
        with lib.no_grad():
            out = lib.nn.functional.cross_entropy(lib.tensor(_data(3, 4)), lib.tensor(_LABELS), weight=w)
        assert out.shape == ()


def test_both_weights_name_weight_first() -> None:
    def case(lib: Any) -> Any:
        w, pw = (lib.tensor(_data(3)).requires_grad_(True) for _ in range(2))
        return lib.nn.functional.binary_cross_entropy_with_logits(
            lib.tensor(_data(3)), lib.tensor(_data(3)), weight=w, pos_weight=pw
        )

    _same(case)


# -- empty dims --------------------------------------------------------------------------------
EMPTY = [(0,), (2, 0), (0, 3)]


@pytest.mark.parametrize("shape", EMPTY)
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
def test_softmax_over_empty(shape: tuple, dim: int, fn: str) -> None:
    _same(lambda lib: getattr(lib.nn.functional, fn)(lib.zeros(shape), dim))


@pytest.mark.parametrize("shape", EMPTY)
def test_softmax_gradient_of_empty_is_empty(shape: tuple) -> None:
    def case(lib: Any) -> Any:
        x = lib.zeros(shape, requires_grad=True)
        return lib.autograd.grad(lib.softmax(x, -1).sum(), x)[0]

    _same(case)


ORDS = [math.inf, -math.inf, 2, 1, 0, -1, -0.5]


@pytest.mark.parametrize("shape", EMPTY)
@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("dim", [None, 0, -1, (0,)])
def test_vector_norm_of_empty(shape: tuple, ord: float, dim: Any) -> None:
    _same(lambda lib: lib.linalg.vector_norm(lib.zeros(shape), ord=ord, dim=dim))


@pytest.mark.parametrize("shape", EMPTY)
@pytest.mark.parametrize("ord", [math.inf, -math.inf, 2, 1])
def test_norm_and_linalg_norm_of_empty(shape: tuple, ord: float) -> None:
    _same(lambda lib: lib.norm(lib.zeros(shape), p=ord))
    _same(lambda lib: lib.linalg.norm(lib.zeros(shape), ord=ord))


@pytest.mark.parametrize("shape", [(2, 0), (0, 3), (0, 0), (3, 2, 0), (3, 0, 2), (0, 2, 2)])
@pytest.mark.parametrize("ord", ["fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_of_empty(shape: tuple, ord: Any, keepdim: bool) -> None:
    _same(lambda lib: lib.linalg.matrix_norm(lib.zeros(shape), ord=ord, keepdim=keepdim))


@pytest.mark.parametrize("ord", ["fro", "nuc"])
def test_linalg_norm_matrix_ord_of_a_vector(ord: str) -> None:
    _same(lambda lib: lib.linalg.norm(lib.zeros(3), ord=ord))


@pytest.mark.parametrize("dtype", ["bool", "int64", "int32", "uint8"])
def test_norm_of_non_float_names_the_dtype(dtype: str) -> None:
    _same(lambda lib: lib.linalg.vector_norm(lib.ones(2, dtype=getattr(lib, dtype))))
    _same(lambda lib: lib.ones(2, dtype=getattr(lib, dtype)).norm())


# -- bool inputs ---------------------------------------------------------------------------
BOOLS = [True, False, True]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.argmax(x),
        lambda lib, x: lib.argmin(x),
        lambda lib, x: x.argmax(0),
        lambda lib, x: x.argmin(0, keepdim=True),
        lambda lib, x: lib.argmax(x[:0]),
        lambda lib, x: x.max(0),
        lambda lib, x: x.min(0, keepdim=True),
        lambda lib, x: lib.topk(x, 1),
        lambda lib, x: x.topk(2, largest=False),
        lambda lib, x: lib.topk(x, 5),
        lambda lib, x: lib.square(x),
        lambda lib, x: lib.sum(x),
        lambda lib, x: lib.cumsum(x, 0),
        lambda lib, x: lib.prod(x),
        lambda lib, x: x.sum(dtype=lib.bool),
    ],
)
def test_bool_inputs(call: Callable) -> None:
    _same(lambda lib: call(lib, lib.tensor(BOOLS)))


# -- kthvalue among equal values -------------------------------------------------------------
@pytest.mark.parametrize(
    "row", [[2.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0], [3.0, 1.0, 1.0, 1.0, 2.0], [5.0, 5.0, 1.0, 1.0, 5.0]]
)
def test_kthvalue_index_among_ties(row: list) -> None:
    for k in range(1, len(row) + 1):
        _same(lambda lib, k=k: lib.kthvalue(lib.tensor(row), k))


def test_kthvalue_ties_random_rows_with_nan_and_dims() -> None:
    rng = np.random.RandomState(3)
    for trial in range(60):
        shape = (rng.randint(1, 4), rng.randint(1, 25))
        x = rng.randint(0, rng.randint(1, 5), shape).astype("float32")
        if trial % 4 == 0:
            x[rng.rand(*shape) < 0.2] = np.nan
        dim = trial % 2
        k = rng.randint(1, shape[dim] + 1)
        expected = torch.kthvalue(torch.tensor(x), k, dim)
        actual = ember.kthvalue(ember.tensor(x), k, dim)
        np.testing.assert_array_equal(actual.indices.numpy(), expected.indices.numpy())
        np.testing.assert_array_equal(actual.values.numpy(), expected.values.numpy())


def test_kthvalue_gradient_goes_to_the_reported_element() -> None:
    def case(lib: Any) -> Any:
        x = lib.tensor([[3.0, 1.0, 1.0, 1.0, 2.0], [2.0, 2.0, 2.0, 0.0, 2.0]], requires_grad=True)
        return lib.autograd.grad(lib.kthvalue(x, 2, 1, keepdim=True).values.sum(), x)[0]

    _same(case)
    _same(lambda lib: lib.kthvalue(lib.tensor([[1, 1, 2], [2, 0, 2]]), 2, dim=1, keepdim=True))


# -- x[index] = value with a value of another dtype ------------------------------------------
def _set(lib: Any, key: Callable[[Any], Any], value: Callable[[Any], Any]) -> Any:
    x = lib.zeros(2, 3)
    x[key(lib)] = value(lib)
    return x


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (lambda L: L.tensor([0, 1]), lambda L: L.ones(2, 3, dtype=L.float64)),
        (lambda L: L.tensor([0, 1]), lambda L: L.ones(2, 3, dtype=L.int64)),
        (lambda L: L.tensor([0, 1]), lambda L: L.tensor(1.0, dtype=L.float64)),
        (lambda L: (0, L.tensor([0, 1])), lambda L: L.ones(2, dtype=L.int64)),
        (lambda L: [0, 1], lambda L: L.ones(3, dtype=L.float64)),
        (lambda L: (slice(None), [0, 1]), lambda L: L.ones(2, dtype=L.float64)),
        (lambda L: L.tensor([True, False]), lambda L: L.ones(3, dtype=L.float64)),
        # a 0-d value under a single mask is PyTorch's masked_fill, which casts
        (lambda L: L.tensor([True, False]), lambda L: L.tensor(2.0, dtype=L.float64)),
        (lambda L: L.tensor([[True, False, True], [False] * 3]), lambda L: L.tensor(2, dtype=L.int64)),
        # basic indexing is a copy_, which casts too
        (lambda L: 0, lambda L: L.ones(3, dtype=L.float64)),
        (lambda L: L.tensor([0, 1]), lambda L: L.ones(2, 3)),
    ],
)
def test_setitem_source_dtype(key: Callable, value: Callable) -> None:
    _same(lambda lib: _set(lib, key, value))


@pytest.mark.parametrize(
    "dtype", ["uint8", "int8", "int16", "int32", "int64", "bool", "float16", "bfloat16", "float32", "float64"]
)
@pytest.mark.parametrize(
    "value", [300, -300, 2**40, math.inf, 1e300, 1e38 * 3.395, 1j, 2 + 0j, 1.5, 255.9, True]
)
def test_full_value_conversion(dtype: str, value: Any) -> None:
    for size in [(1,), (2, 3), (0,)]:  # one element takes PyTorch's path through double
        _same(lambda lib, size=size: lib.full(size, value, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("value", ["a", None, [1.0], "tensor1d", "tensor0d"])
def test_full_value_kind(value: Any) -> None:
    def case(lib: Any) -> Any:
        v = (
            {"tensor1d": lib.tensor([1.0]), "tensor0d": lib.tensor(3)}.get(value, value)
            if isinstance(value, str) and value.startswith("tensor")
            else value
        )
        return lib.full((2,), v)

    _same(case)


# -- gradients of empty inputs are empty tensors -------------------------------------------------
EMPTY_GRAD_OPS = {
    "median": lambda lib, x: x.median(),
    "nanmedian": lambda lib, x: x.nanmedian(),
    "softmax": lambda lib, x: x.softmax(-1).sum(),
    "log_softmax": lambda lib, x: x.log_softmax(0).sum(),
    "sum": lambda lib, x: x.sum(),
    "amax over a non-empty dim": lambda lib, x: x.amax(-1).sum() if x.shape[-1] else x.sum(),
    "gather with an empty index": lambda lib, x: x.gather(0, lib.zeros(0, dtype=lib.long)).sum(),
    "scatter with an empty index": lambda lib, x: x.scatter(0, lib.zeros(0, dtype=lib.long), 1.0).sum(),
}


@pytest.mark.parametrize("shape", EMPTY)
@pytest.mark.parametrize("op", sorted(EMPTY_GRAD_OPS))
def test_gradient_of_empty_input_is_empty(shape: tuple, op: str) -> None:
    def case(lib: Any) -> Any:
        x = lib.zeros(shape, requires_grad=True)
        return lib.autograd.grad(EMPTY_GRAD_OPS[op](lib, x), x)[0]

    _same(case)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.zeros(2, 3).gather(0, L.zeros(0, 2, 1, dtype=L.long)),
        lambda L: L.zeros(2, 3).gather(0, L.zeros(0, dtype=L.float32)),
        lambda L: L.zeros(2, 3).gather(5, L.zeros(0, dtype=L.long)),
        lambda L: L.zeros(2, 3).scatter_add(0, L.zeros(0, dtype=L.long), L.ones(2)),
    ],
)
def test_empty_index_is_not_checked(call: Callable) -> None:
    _same(call)


@pytest.mark.parametrize("op", ["abs", "floor", "ceil", "round", "trunc", "positive", "abs_", "floor_"])
def test_rounding_and_abs_of_bool_refused_as_pytorch(op: str) -> None:
    _same(lambda lib: getattr(lib.tensor([True, False]), op)())


def test_multi_margin_loss_weight_is_not_differentiable() -> None:
    def case(lib: Any) -> Any:
        x = lib.tensor([[0.1, 0.5, 0.2], [0.3, 0.0, 0.9]])
        w = lib.tensor([1.0, 2.0, 0.5], requires_grad=True)
        return lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 2]), weight=w)

    _same(case)
