"""Exception types and messages for wrong arguments, against PyTorch 2.13.

Each case makes the same bad call in both libraries; ember must raise what PyTorch raises (type
and first line of message, with ``ember.`` for ``torch.``), or return what PyTorch returns where
PyTorch accepts the call (masked_fill keeps the tensor's dtype, for one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(thunk: Callable[[], Any]) -> Any:
    try:
        result = thunk()
    except Exception as error:  # noqa: BLE001 - the exception is the outcome compared
        return (type(error).__name__, str(error).split("\n")[0].replace("torch.", "ember."))
    return result.numpy() if hasattr(result, "numpy") else result


def _x(lib: Any) -> Any:
    return lib.zeros(2, 3)


def _b(lib: Any, *shape: int) -> Any:
    return lib.zeros(*shape, dtype=lib.bool)


CASES: dict[str, Callable[[Any], Any]] = {
    # dims
    "sum dim out of range": lambda L: _x(L).sum(5),
    "sum dim negative out of range": lambda L: _x(L).sum(-3),
    "mean dim out of range": lambda L: _x(L).mean(5),
    "cumsum dim out of range": lambda L: _x(L).cumsum(5),
    "argmax dim out of range": lambda L: _x(L).argmax(5),
    "0-d sum dim 1": lambda L: L.tensor(1.0).sum(1),
    "0-d mean dim -1": lambda L: L.tensor(2.0).mean(-1),
    "0-d sort dim 1": lambda L: L.tensor(1.0).sort(1),
    "0-d argsort dim 1": lambda L: L.tensor(1.0).argsort(1),
    "0-d topk dim 1": lambda L: L.tensor(1.0).topk(1, 1),
    "0-d norm dim 1": lambda L: L.tensor(1.0).norm(dim=1),
    "0-d flip dim -1": lambda L: L.tensor(1.0).flip(-1),
    "0-d roll dim 1": lambda L: L.tensor(1.0).roll(1, 1),
    "0-d roll dim -1": lambda L: L.tensor(1.0).roll(1, -1),
    "flip a dim twice": lambda L: _x(L).flip((0, 0)),
    "flip a dim twice, counted from the end": lambda L: _x(L).flip((1, -1)),
    # repeat / roll
    "repeat too few sizes": lambda L: _x(L).repeat(2),
    "roll shifts and dims differ": lambda L: _x(L).roll((1, 2), (0,)),
    "roll several shifts without dims": lambda L: _x(L).roll((1, 2)),
    "roll dim out of range": lambda L: _x(L).roll(1, 5),
    "roll no shifts": lambda L: _x(L).roll((), ()),
    "roll no shifts, dims": lambda L: _x(L).roll((), (0,)),
    "roll one shift, empty dims": lambda L: L.arange(6).reshape(2, 3).roll((1,), ()),
    "roll float shift": lambda L: _x(L).roll(1.5, 0),
    "roll float dim": lambda L: _x(L).roll(1, 1.5),
    "repeat negative": lambda L: _x(L).repeat(-1, 2),
    "repeat negative later": lambda L: _x(L).repeat(2, -1),
    "repeat negative with a new dim": lambda L: _x(L).repeat(1, -1, 2),
    "repeat negative over an empty dim": lambda L: L.zeros(0, 3).repeat(-1, 2),
    "repeat_interleave negative int": lambda L: _x(L).repeat_interleave(-1),
    "repeat_interleave negative 0-d": lambda L: _x(L).repeat_interleave(L.tensor(-1)),
    "repeat_interleave counts of other size": lambda L: _x(L).repeat_interleave(L.tensor([1, 2, 3]), dim=0),
    "repeat_interleave flat counts of other size": lambda L: _x(L).repeat_interleave(L.tensor([1, 2])),
    "repeat_interleave 2-d counts": lambda L: _x(L).repeat_interleave(L.tensor([[1, 2]]), dim=0),
    "repeat_interleave float counts": lambda L: L.tensor([1, 2]).repeat_interleave(L.tensor([1.0, 2.0])),
    "repeat_interleave float counts alone": lambda L: L.repeat_interleave(L.tensor([1.0, 2.0])),
    "repeat_interleave 2-d counts alone": lambda L: L.repeat_interleave(L.tensor([[1, 2]])),
    "repeat_interleave int32 counts alone": lambda L: L.repeat_interleave(L.tensor([1, 2], dtype=L.int32)),
    # full / arange / tensor
    "full negative size": lambda L: L.full((-1,), 1.0),
    "arange zero step": lambda L: L.arange(0, 5, 0),
    "arange wrong direction": lambda L: L.arange(5, 0, 1),
    "arange wrong negative direction": lambda L: L.arange(0, 5, -1),
    "arange to inf": lambda L: L.arange(0, float("inf")),
    "arange to nan": lambda L: L.arange(0, float("nan")),
    "tensor ragged": lambda L: L.tensor([[1, 2], [3]]),
    "tensor into uint8 negative": lambda L: L.tensor([-1], dtype=L.uint8),
    # setitem
    "setitem index out of range": lambda L: _x(L).__setitem__(5, 1.0),
    "setitem tensor index out of range": lambda L: _x(L).__setitem__(L.tensor([5]), 1.0),
    "setitem too many indices": lambda L: _x(L).__setitem__((0, 0, 0), 1.0),
    "setitem float index": lambda L: _x(L).__setitem__(L.tensor([0.0]), 1.0),
    "setitem a str": lambda L: _x(L).__setitem__(0, "a"),
    "setitem None": lambda L: _x(L).__setitem__(0, None),
    "setitem a dict under a tensor index": lambda L: _x(L).__setitem__(L.tensor([0]), {1: 2}),
    "setitem a list": lambda L: _x(L).__setitem__(0, [1, 2, 3]),
    "setitem mask of wrong shape": lambda L: _x(L).__setitem__(L.tensor([True, False, True]), 1.0),
    # scatter_add
    "scatter_add float index": lambda L: _x(L).scatter_add(0, L.tensor([[0.0]]), _x(L)),
    "scatter_add int32 index": lambda L: _x(L).scatter_add(0, L.tensor([[0]], dtype=L.int32), _x(L)),
    "scatter_add index out of range": lambda L: _x(L).scatter_add(0, L.tensor([[5]]), _x(L)),
    "scatter_add index of other rank": lambda L: _x(L).scatter_add(0, L.tensor([0]), _x(L)),
    "scatter_add src of other dtype": lambda L: _x(L).scatter_add(
        0, L.tensor([[0]]), L.ones(2, 3, dtype=L.float64)
    ),
    "scatter_add_ src of other dtype": lambda L: _x(L).scatter_add_(
        0, L.tensor([[0]]), L.ones(2, 3, dtype=L.float64)
    ),
    "scatter_add index larger than src": lambda L: _x(L).scatter_add(0, L.zeros(3, 3, dtype=L.long), _x(L)),
    "scatter_add src smaller than index": lambda L: _x(L).scatter_add(
        0, L.zeros(2, 3, dtype=L.long), L.ones(1, 1)
    ),
    "scatter_add index wider than self": lambda L: _x(L).scatter_add(
        0, L.zeros(2, 4, dtype=L.long), L.ones(2, 4)
    ),
    "scatter_add empty index": lambda L: _x(L).scatter_add(0, L.zeros(3, 0, dtype=L.long), _x(L)),
    "scatter_add float src": lambda L: _x(L).scatter_add(0, L.tensor([[0]]), 1.0),
    "scatter value, index wider than self": lambda L: _x(L).scatter(1, L.zeros(3, 2, dtype=L.long), 1.0),
    "gather index wider than input": lambda L: _x(L).gather(0, L.zeros(2, 4, dtype=L.long)),
    "gather index taller than input": lambda L: _x(L).gather(1, L.zeros(3, 2, dtype=L.long)),
    "scatter src of other dtype": lambda L: _x(L).scatter(0, L.tensor([[0]]), L.ones(2, 3, dtype=L.float64)),
    # index_add
    "index_add float index": lambda L: _x(L).index_add(0, L.tensor([0.0]), L.ones(1, 3)),
    "index_add 2-d index": lambda L: _x(L).index_add(0, L.tensor([[0]]), L.ones(1, 3)),
    "index_add source count": lambda L: _x(L).index_add(0, L.tensor([0]), L.ones(2, 3)),
    "index_add source 1-d": lambda L: _x(L).index_add(0, L.tensor([0]), L.ones(3)),
    "index_add source shape": lambda L: _x(L).index_add(0, L.tensor([0]), L.ones(1, 4)),
    "index_add source dtype": lambda L: _x(L).index_add(0, L.tensor([0]), L.ones(1, 3, dtype=L.float64)),
    "index_add_ source dtype": lambda L: _x(L).index_add_(0, L.tensor([0]), L.ones(1, 3, dtype=L.float64)),
    "index_add index out of range": lambda L: _x(L).index_add(0, L.tensor([5]), L.ones(1, 3)),
    "index_add dim out of range": lambda L: _x(L).index_add(5, L.tensor([0]), L.ones(1, 3)),
    # masked_fill
    "masked_fill float mask": lambda L: _x(L).masked_fill(L.zeros(2, 3), 1.0),
    "masked_fill int64 mask": lambda L: _x(L).masked_fill(L.zeros(2, 3, dtype=L.long), 1.0),
    "masked_fill uint8 mask": lambda L: _x(L).masked_fill(L.zeros(2, 3, dtype=L.uint8), 1.0),
    "masked_fill mask of wrong shape": lambda L: _x(L).masked_fill(_b(L, 4), 1.0),
    "masked_fill 1-d value": lambda L: _x(L).masked_fill(_b(L, 2, 3), L.tensor([1.0])),
    "masked_fill 2-element value": lambda L: _x(L).masked_fill(_b(L, 2, 3), L.tensor([1.0, 2.0])),
    "masked_fill complex into float": lambda L: _x(L).masked_fill(_b(L, 2, 3), 1j),
    "masked_fill float into int64": lambda L: L.zeros(2, dtype=L.long).masked_fill(
        L.ones(2, dtype=L.bool), 1.5
    ),
    "masked_fill negative float into int64": lambda L: L.zeros(2, dtype=L.long).masked_fill(
        L.ones(2, dtype=L.bool), -2.7
    ),
    "masked_fill float tensor into int64": lambda L: L.zeros(2, dtype=L.long).masked_fill(
        L.ones(2, dtype=L.bool), L.tensor(1.5)
    ),
    "masked_fill int into bool": lambda L: _b(L, 2).masked_fill(L.ones(2, dtype=L.bool), 2),
    "masked_fill True into int64": lambda L: L.zeros(2, dtype=L.long).masked_fill(
        L.ones(2, dtype=L.bool), True
    ),
    "masked_fill float64 0-d into float32": lambda L: _x(L).masked_fill(
        L.ones(2, 3, dtype=L.bool), L.tensor(1.5, dtype=L.float64)
    ),
    "masked_fill str": lambda L: _x(L).masked_fill(_b(L, 2, 3), "a"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_arguments_match_pytorch(case: str) -> None:
    expected = _outcome(lambda: CASES[case](torch))
    actual = _outcome(lambda: CASES[case](ember))
    if isinstance(expected, tuple):
        assert actual == expected
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), actual
        assert str(actual.dtype) == str(expected.dtype)
        np.testing.assert_array_equal(actual, expected)
    else:
        assert not isinstance(actual, tuple), actual


ARANGE: dict[str, Callable[[Any], Any]] = {
    "bool": lambda L: L.arange(5, dtype=L.bool),
    "bool and zero step": lambda L: L.arange(0, 5, 0, dtype=L.bool),
    "too many elements": lambda L: L.arange(0, 1e20, 1e-5),
    "tiny step": lambda L: L.arange(0, 5, 1e-30),
}


@pytest.mark.parametrize("case", sorted(ARANGE))
def test_arange_refusals_match_pytorch(case: str) -> None:
    assert _outcome(lambda: ARANGE[case](ember)) == _outcome(lambda: ARANGE[case](torch))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize(
    "args",
    [(1.7, 5.2, 1.2), (-3.5, 3, 1), (5.5, 0, -1.5), (0.9,), (2.5,), (-2.5,), (0, 2.5, 0.5), (0, 5, 0.3)],
)
def test_arange_with_float_bounds_into_ints(dtype: str, args: tuple) -> None:
    """int64 truncates the bounds and step first (a step that truncates to 0 is refused);
    the other int types count the elements in double."""
    expected = _outcome(lambda: torch.arange(*args, dtype=getattr(torch, dtype)))
    actual = _outcome(lambda: ember.arange(*args, dtype=getattr(ember, dtype)))
    if isinstance(expected, tuple):
        assert actual == expected
    else:
        assert str(actual.dtype) == str(expected.dtype)
        np.testing.assert_array_equal(actual, expected)


TENSOR_DATA: dict[str, Callable[[Any], Any]] = {
    "None": lambda L: L.tensor(None),
    "ragged: a number where a list was": lambda L: L.tensor([[1, 2], 3]),
    "ragged: a number after two lists": lambda L: L.tensor([[1, 2], [3, 4], 5]),
    "ragged: a list where an int was": lambda L: L.tensor([1, [2]]),
    "ragged: a list where a float was": lambda L: L.tensor([1.5, [2]]),
    "ragged: a tuple where an int was": lambda L: L.tensor([1, (2,)]),
    "ragged: a list deeper in": lambda L: L.tensor([[1, 2], [3, [4]]]),
    "ragged: shorter": lambda L: L.tensor([[1, 2], [3]]),
    "ragged: longer": lambda L: L.tensor([[1], [3, 4]]),
    "ragged: longer at dim 1 of 3": lambda L: L.tensor([[[1]], [[3], [4]]]),
    "None in a list": lambda L: L.tensor([1, None]),
    "None after a float": lambda L: L.tensor([1.5, None]),
    "None nested": lambda L: L.tensor([[1, 2], [None, 3]]),
    "dict": lambda L: L.tensor({1: 2}),
    "set": lambda L: L.tensor({1, 2}),
    "object": lambda L: L.tensor(object()),
    "str": lambda L: L.tensor("a"),
    "list of str": lambda L: L.tensor(["a"]),
    "number and str": lambda L: L.tensor([1, "a"]),
    "int8 overflow": lambda L: L.tensor([300], dtype=L.int8),
    "int32 overflow": lambda L: L.tensor([2**31], dtype=L.int32),
    "int64 overflow": lambda L: L.tensor([2**63]),
    "uint8 negative wraps": lambda L: L.tensor([-1], dtype=L.uint8),
    "complex into float32": lambda L: L.tensor([1j], dtype=L.float32),
    "complex into int64": lambda L: L.tensor([1j], dtype=L.int64),
    "0-d complex into float32": lambda L: L.tensor(1j, dtype=L.float32),
    "complex into bool": lambda L: L.tensor([1j, 0j], dtype=L.bool),
    "inf into int64": lambda L: L.tensor([float("inf")], dtype=L.int64),
    "float beyond int32": lambda L: L.tensor([1e10], dtype=L.int32),
    "float beyond uint8": lambda L: L.tensor([255.5], dtype=L.uint8),
    "negative float into uint8": lambda L: L.tensor([-1.0], dtype=L.uint8),
    "float beyond int64": lambda L: L.tensor([9.3e18], dtype=L.int64),
    "2**63 as a float into int64": lambda L: L.tensor([2.0**63], dtype=L.int64),
    "float truncates into int8": lambda L: L.tensor([-128.0, 127.0, 1.5], dtype=L.int8),
}


@pytest.mark.parametrize("case", sorted(TENSOR_DATA))
def test_tensor_inference_matches_pytorch(case: str) -> None:
    expected = _outcome(lambda: TENSOR_DATA[case](torch))
    actual = _outcome(lambda: TENSOR_DATA[case](ember))
    if isinstance(expected, tuple):
        assert actual == expected
    else:
        assert str(actual.dtype) == str(expected.dtype)
        np.testing.assert_array_equal(actual, expected)


_MORE_ERRORS = {
    "einsum_sizes": lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(2, 3)),
    "einsum_repeated": lambda lib: lib.einsum("ii->i", lib.ones(2, 3)),
    "einsum_ellipsis": lambda lib: lib.einsum("...j,...j->...", lib.ones(2, 3), lib.ones(4, 3)),
    "multinomial_zero_sum": lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    "multinomial_negative": lambda lib: lib.multinomial(lib.tensor([-1.0, 2.0]), 1),
    "multinomial_nan": lambda lib: lib.multinomial(lib.tensor([float("nan"), 2.0]), 1),
    "multinomial_no_samples": lambda lib: lib.multinomial(lib.tensor([1.0, 1.0]), 0),
    "multinomial_3d": lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    "narrow_0d": lambda lib: lib.tensor(1.0).narrow(0, 0, 1),
    "chunk_0d": lambda lib: lib.tensor(1.0).chunk(2),
    "split_0d": lambda lib: lib.tensor(1.0).split(1),
    "unbind_0d": lambda lib: lib.tensor(1.0).unbind(),
    "flatten_0d_dim1": lambda lib: lib.tensor(1.0).flatten(1),
    "matmul_bool_1d": lambda lib: lib.tensor([True]) @ lib.tensor([True]),
}


@pytest.mark.parametrize("name", list(_MORE_ERRORS))
def test_more_errors_match_torch(name: str) -> None:
    def outcome(lib: Any) -> Any:
        try:
            return tuple(_MORE_ERRORS[name](lib).shape)
        except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
            return type(e).__name__, str(e).split("\n")[0].replace("torch.", "ember.")

    assert outcome(ember) == outcome(torch)


def test_movedim_of_a_0d_tensor_is_itself() -> None:
    assert tuple(ember.tensor(1.0).movedim(0, 0).shape) == tuple(torch.tensor(1.0).movedim(0, 0).shape) == ()
