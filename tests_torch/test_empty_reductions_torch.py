"""Reductions over empty dimensions and bool promotion corners, against PyTorch 2.13.

Each case runs the same call in both libraries on a tensor whose shape holds a 0: where
PyTorch returns, ember must return the same values, shape and dtype; where PyTorch raises,
ember must raise the same exception type with the same message.
"""

import ember
import numpy as np
import pytest
import torch

SHAPES = [(0,), (2, 0), (0, 3), (2, 0, 3)]


def _dims(shape):
    """None (all dims) and every dim of ``shape``, each way round."""
    return [None] + list(range(len(shape))) + [-1]


def _call(lib, op, shape, dim, keepdim, dtype="float32"):
    """``op`` of a tensor of ``shape`` over ``dim`` in ``lib`` (torch or ember)."""
    x = lib.zeros(shape, dtype=getattr(lib, dtype))
    fn = getattr(lib, op)
    if dim is None:
        return fn(x)
    return fn(x, dim=dim, keepdim=keepdim)


def _outcome(thunk):
    """The value of ``thunk()`` or the (type name, message) of what it raised."""
    try:
        return thunk()
    except Exception as error:  # noqa: BLE001 - the exception is the outcome compared
        return (type(error).__name__, str(error).split("\n")[0])


def _as_numpy(result):
    """Every tensor in ``result`` as a NumPy array (named tuples and tuples flattened)."""
    if isinstance(result, tuple) and isinstance(result[0], str):
        return result
    if isinstance(result, (tuple, list)):
        return [_as_numpy(part) for part in result]
    return result.detach().numpy() if hasattr(result, "detach") else np.asarray(result)


def _assert_same(expected, actual):
    """Same exception, or same values, shapes and dtypes."""
    expected, actual = _as_numpy(expected), _as_numpy(actual)
    if isinstance(expected, tuple):
        assert actual == expected
        return
    assert not isinstance(actual, tuple), actual
    if isinstance(expected, list):
        assert len(actual) == len(expected)
        for e, a in zip(expected, actual):
            _assert_same(e, a)
        return
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


def _differential(op, shape, dim, keepdim, dtype="float32"):
    expected = _outcome(lambda: _call(torch, op, shape, dim, keepdim, dtype))
    actual = _outcome(lambda: _call(ember, op, shape, dim, keepdim, dtype))
    _assert_same(expected, actual)


REDUCTIONS = [
    "sum",
    "mean",
    "std",
    "var",
    "prod",
    "logsumexp",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "median",
    "nansum",
    "nanmean",
]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_over_empty(op, shape, keepdim):
    for dim in _dims(shape):
        if op == "logsumexp" and dim is None:
            continue  # torch.logsumexp requires dim
        _differential(op, shape, dim, keepdim)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "sum", "prod", "all", "any", "amax", "max"])
def test_reduction_over_empty_by_dtype(op, shape, dtype):
    """Integer and bool inputs keep PyTorch's result dtypes (sum/cumsum/prod of bool: int64)."""
    dims = _dims(shape) if op not in ("cumsum", "cumprod") else list(range(len(shape))) + [-1]
    for dim in dims:
        _differential(op, shape, dim, False, dtype)


@pytest.mark.parametrize("dim", [None, -1])
@pytest.mark.parametrize("p", [None, 0, 1, 2, 3.5, "fro"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_norm_over_empty(shape, p, dim):
    """Every finite p-norm of an empty tensor is 0, over all dims or the last."""
    kwargs = {} if p is None else {"p": p}
    kwargs.update({} if dim is None else {"dim": dim})
    expected = _outcome(lambda: torch.norm(torch.zeros(shape), **kwargs))
    actual = _outcome(lambda: ember.norm(ember.zeros(shape), **kwargs))
    _assert_same(expected, actual)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("shape", [(2, 0), (0, 3)], ids=str)
def test_aminmax_over_empty(shape, dim):
    """aminmax words its own errors ("aminmax(): cannot compute ..."), not amin's."""
    kwargs = {} if dim is None else {"dim": dim}
    expected = _outcome(lambda: torch.aminmax(torch.zeros(shape), **kwargs))
    actual = _outcome(lambda: ember.aminmax(ember.zeros(shape), **kwargs))
    _assert_same(expected, actual)


@pytest.mark.parametrize("op", ["square", "sum", "prod", "mean", "cumsum", "cumprod"])
def test_bool_promotion(op):
    """square/sum/prod/cumsum of bool are int64 in PyTorch; mean of bool raises."""

    def run(lib):
        x = lib.tensor([True, False, True])
        return getattr(lib, op)(x, 0) if op.startswith("cum") else getattr(lib, op)(x)

    _assert_same(_outcome(lambda: run(torch)), _outcome(lambda: run(ember)))


@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("dest", ["float32", "int64"])
@pytest.mark.parametrize("source", ["float64", "int64", "int32", "float16", "bool", "float32"])
def test_index_put_source_dtype(source, dest, inplace):
    """index_put(_) refuses a source of another dtype with PyTorch's exact message."""

    def run(lib):
        x = lib.zeros(3, dtype=getattr(lib, dest))
        values = lib.tensor([1, 0], dtype=getattr(lib, source))
        op = x.index_put_ if inplace else x.index_put
        return op((lib.tensor([0, 1]),), values)

    _assert_same(_outcome(lambda: run(torch)), _outcome(lambda: run(ember)))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)], ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "norm", "nansum"])
def test_grad_of_empty_input_is_empty(op, shape):
    """The gradient of a reduction of an empty tensor is an empty tensor, not None."""

    def run(lib):
        x = lib.zeros(shape, requires_grad=True)
        getattr(lib, op)(x).backward()
        return x.grad

    expected, actual = run(torch), run(ember)
    assert actual is not None
    _assert_same(expected, actual)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "float16", "float64", "bool"])
def test_median_of_empty_by_dtype(op, dtype):
    """The median of no elements is NaN, cast to integer dtypes the way PyTorch's CPU build does."""
    for shape in ((0,), (2, 0)):
        for dim in (None, -1):
            _differential(op, shape, dim, False, dtype)


@pytest.mark.parametrize("dim", [None, 0])
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_of_bool_names_the_kernel(op, dim):
    """A bool median is refused with the kernel PyTorch names: median_cpu whole, median_out by dim."""

    def run(lib):
        x = lib.tensor([True, False, True])
        return getattr(lib, op)(x) if dim is None else getattr(lib, op)(x, dim)

    _assert_same(_outcome(lambda: run(torch)), _outcome(lambda: run(ember)))


GRAD_OPS = ["amax", "amin", "max", "min", "logsumexp", "std", "var", "median", "cumsum", "cumprod", "norm"]


@pytest.mark.parametrize(
    ("shape", "dim"), [((2, 0), 0), ((0, 3), 1), ((2, 0, 3), 2), ((2, 0, 3), 0)], ids=str
)
@pytest.mark.parametrize("op", GRAD_OPS)
def test_grad_over_a_full_dim_of_an_empty_input(op, shape, dim):
    """Reducing a non-empty dim of an empty tensor back-propagates an empty gradient, not None."""

    def run(lib):
        x = lib.zeros(shape, requires_grad=True)
        y = lib.norm(x, dim=dim) if op == "norm" else getattr(lib, op)(x, dim)
        (y[0] if isinstance(y, tuple) else y).sum().backward()
        return x.grad

    expected, actual = run(torch), run(ember)
    assert actual is not None
    _assert_same(expected, actual)


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize(
    ("shape", "dim"),
    [((0,), (0, -1)), ((2, 0), (1, 1)), ((2, 0), (0, 0)), ((2, 0), (5,)), ((2, 0), (-1, 0)), ((), (0, 0))],
    ids=str,
)
def test_amax_dim_lists_over_empty(op, shape, dim):
    """An empty dim is reported before a repeated one, as written (-1 stays -1), range checked."""
    _differential(op, shape, dim, False)
