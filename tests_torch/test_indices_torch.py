"""Every op that takes indices, against PyTorch 2.13: same values, or the same exception.

Each op runs over the same index cases (a valid negative, -1, -size - 1, == size, > size,
int32, int64, empty, 0-d, and float/int16/bool dtypes) in both libraries. Where PyTorch
returns, ember must return the same values and shape; where it raises, ember must raise the
same exception type, with the same message unless the op is listed in UNSTABLE_TEXT (PyTorch's
wording there depends on which CPU kernel path runs, see the comment there).

What PyTorch 2.13 does, in short (the probe behind this table is the test itself):

| op | negative | out of range | int32 | other dtypes |
| --- | --- | --- | --- | --- |
| index_select | refused: IndexError "index out of range in self" (dim 1 of a 2-d+ tensor: RuntimeError "INDICES element is out of DATA bounds, id=V axis_dim=N") | same | yes | RuntimeError |
| embedding, nn.Embedding | IndexError "index out of range in self" | same | yes | RuntimeError (legacy type name) |
| embedding_bag | RuntimeError | RuntimeError | yes | RuntimeError |
| index_add(_) | RuntimeError "index V is out of bounds for dimension D with size N" (int64, outer/inner dim of 2-d+), else IndexError "index out of range in self" | same | yes | RuntimeError "... but got: Float" |
| index_copy(_) | IndexError "index_copy_(): index V is out of bounds ..." | same | no: RuntimeError | RuntimeError |
| index_fill(_) | accepted in [-N, N) | IndexError "index V is out of bounds ..." | no: IndexError | IndexError |
| index_reduce_ | IndexError "index out of range in self" | same | yes | RuntimeError |
| gather, scatter, scatter_add, scatter_reduce | RuntimeError "index V is out of bounds for dimension D with size N" | same | yes | RuntimeError "gather()/scatter(): Expected dtype int32/int64 for index" |
| take, put_, put | accepted in [-N, N) | IndexError "out of range: tried to access index V on a tensor of N elements." | no: RuntimeError | RuntimeError |
| take_along_dim(dim) | taken modulo N (never raises) | taken modulo N | no: RuntimeError | RuntimeError |
| take_along_dim(None) | gather's rules on the flattened input | | yes | gather's |
| x[idx], x[idx] = v, index_put(_) | accepted in [-N, N) | IndexError "index V is out of bounds for dimension K with size N" (K: which index tensor) | yes | IndexError; lists of floats truncate |
"""

import re

import ember
import numpy as np
import pytest
import torch

# PyTorch's text for these depends on its kernel path (embedding_bag says "Index i of input
# takes value v ..." on one path and "Expected i < index_size to be true ..." on another).
UNSTABLE_TEXT = {"embedding_bag"}


def _index(lib, case, n):
    """The index for ``case`` into a dim of size ``n``, built by ``lib`` (torch or ember)."""
    long, i32 = lib.int64, lib.int32
    table = {
        "valid_negative": ([1, -n], long),
        "minus_one": ([-1], long),
        "below_minus_size": ([-n - 1], long),
        "equal_size": ([n], long),
        "above_size": ([n + 5], long),
        "int32": ([2, 0], i32),
        "int32_minus_one": ([-1], i32),
        "int32_equal_size": ([n], i32),
        "int64": ([2, 0], long),
        "empty": ([], long),
        "zero_d": (1, long),
        "zero_d_minus_one": (-1, long),
        "float": ([0.0, 1.0], lib.float32),
        "int16": ([0, 1], lib.int16),
        "bool": ([True] + [False] * (n - 1), lib.bool),
    }
    values, dtype = table[case]
    return lib.tensor(values, dtype=dtype)


CASES = [
    "valid_negative",
    "minus_one",
    "below_minus_size",
    "equal_size",
    "above_size",
    "int32",
    "int32_minus_one",
    "int32_equal_size",
    "int64",
    "empty",
    "zero_d",
    "zero_d_minus_one",
    "float",
    "int16",
    "bool",
]


def _col(lib, i):
    """An index for gather/scatter along dim 0 of a (3, 4) input: one column per entry."""
    return i if i.ndim == 0 else i.reshape(-1, 1)


def _rows(lib, i, d):
    """Source rows (or columns for ``d == 1``) for the index_* family."""
    k = i.numel()
    return lib.ones(k, 4) if d == 0 else lib.ones(3, k)


def _setitem(lib, x, key):
    y = x.clone()
    y[key] = -7.0
    return y


def _inplace(method, *args, **kwargs):
    return lambda lib, x, i: getattr(x.clone(), method)(*args(lib, i), **kwargs)


# op name -> (size of the indexed dim of x = arange(12.).reshape(3, 4), call(lib, x, index))
OPS = {
    "index_select_dim0": (3, lambda lib, x, i: lib.index_select(x, 0, i)),
    "index_select_dim1": (4, lambda lib, x, i: lib.index_select(x, 1, i)),
    "index_select_1d": (4, lambda lib, x, i: lib.index_select(x[0], 0, i)),
    "embedding": (3, lambda lib, x, i: lib.nn.functional.embedding(i, x)),
    "nn.Embedding": (3, lambda lib, x, i: lib.nn.Embedding.from_pretrained(x)(i)),
    "embedding_bag": (
        3,
        lambda lib, x, i: lib.nn.functional.embedding_bag(i, x, lib.tensor([0]), mode="sum"),
    ),
    "index_add_dim0": (3, _inplace("index_add_", lambda lib, i: (0, i, _rows(lib, i, 0)))),
    "index_add_dim1": (4, _inplace("index_add_", lambda lib, i: (1, i, _rows(lib, i, 1)))),
    "index_add_1d": (4, lambda lib, x, i: x[0].clone().index_add_(0, i, lib.ones(i.numel()))),
    "index_add": (3, lambda lib, x, i: lib.index_add(x, 0, i, _rows(lib, i, 0))),
    "index_copy_": (3, _inplace("index_copy_", lambda lib, i: (0, i, _rows(lib, i, 0)))),
    "index_copy": (4, lambda lib, x, i: lib.index_copy(x, 1, i, _rows(lib, i, 1))),
    "index_fill_": (4, _inplace("index_fill_", lambda lib, i: (1, i, -1.0))),
    "index_fill": (3, lambda lib, x, i: lib.index_fill(x, 0, i, -1.0)),
    "index_reduce_": (3, _inplace("index_reduce_", lambda lib, i: (0, i, _rows(lib, i, 0) * 2, "prod"))),
    "index_reduce_mean": (
        3,
        _inplace("index_reduce_", lambda lib, i: (0, i, _rows(lib, i, 0) * 3, "mean"), include_self=False),
    ),
    "gather": (3, lambda lib, x, i: lib.gather(x, 0, _col(lib, i))),
    "scatter_value": (3, lambda lib, x, i: x.clone().scatter_(0, _col(lib, i), -1.0)),
    "scatter_src": (3, lambda lib, x, i: lib.scatter(x, 0, _col(lib, i), -lib.ones(_col(lib, i).shape))),
    "scatter_add": (3, lambda lib, x, i: lib.scatter_add(x, 0, _col(lib, i), lib.ones(_col(lib, i).shape))),
    "scatter_reduce_amax": (
        3,
        lambda lib, x, i: lib.scatter_reduce(x, 0, _col(lib, i), 20 * lib.ones(_col(lib, i).shape), "amax"),
    ),
    "scatter_reduce_sum": (
        3,
        lambda lib, x, i: lib.scatter_reduce(x, 0, _col(lib, i), lib.ones(_col(lib, i).shape), "sum"),
    ),
    "take": (12, lambda lib, x, i: lib.take(x, i)),
    "put_": (12, lambda lib, x, i: x.clone().put_(i, -lib.ones(i.shape))),
    "put_accumulate": (12, lambda lib, x, i: x.clone().put_(i, lib.ones(i.shape), accumulate=True)),
    "take_along_dim": (3, lambda lib, x, i: lib.take_along_dim(x, _col(lib, i), 0)),
    "take_along_dim_none": (12, lambda lib, x, i: lib.take_along_dim(x, i)),
    "index_put_": (3, lambda lib, x, i: x.clone().index_put_((i,), lib.tensor(-1.0))),
    "index_put_accumulate": (
        3,
        lambda lib, x, i: x.clone().index_put_((i,), lib.tensor(1.0), accumulate=True),
    ),
    "index_put": (4, lambda lib, x, i: lib.index_put(x, (lib.tensor([0]), i), lib.tensor(-1.0))),
    "getitem": (3, lambda lib, x, i: x[i]),
    "getitem_dim1": (4, lambda lib, x, i: x[:, i]),
    "getitem_list": (3, lambda lib, x, i: x[i.tolist()]),
    "getitem_two": (4, lambda lib, x, i: x[lib.zeros(i.shape, dtype=lib.int64), i]),
    "setitem": (3, lambda lib, x, i: _setitem(lib, x, i)),
    "setitem_dim1": (4, lambda lib, x, i: _setitem(lib, x, (Ellipsis, i))),
}


def _outcome(lib, op, case):
    n, call = OPS[op]
    x = lib.arange(12.0).reshape(3, 4)
    try:
        return call(lib, x, _index(lib, case, n)), None
    except (IndexError, RuntimeError, TypeError, ValueError, NotImplementedError) as e:
        return None, e


def _text(e):
    return re.sub(r"\btorch\.", "ember.", str(e).splitlines()[0])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("op", list(OPS))
def test_index_op_matches_pytorch(op, case):
    want, want_err = _outcome(torch, op, case)
    got, got_err = _outcome(ember, op, case)
    if want_err is not None:
        assert got_err is not None, (
            f"PyTorch raised {type(want_err).__name__}: {want_err}; ember returned {got}"
        )
        assert type(got_err) is type(want_err), (got_err, want_err)
        if op not in UNSTABLE_TEXT and not _dtype_named(want_err):
            assert _text(got_err) == _text(want_err)
        return
    assert got_err is None, f"PyTorch returned {want}; ember raised {type(got_err).__name__}: {got_err}"
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(_numpy(got), want.numpy())


def _numpy(t):
    return np.asarray(t.tolist(), dtype=np.float64).reshape(tuple(t.shape))


def _dtype_named(e):
    """PyTorch names a dtype by its C++ type for bool ('CPUBoolType'); ember says ember.BoolTensor."""
    return "CPUBoolType" in str(e)


ELLIPSIS_KEYS = [
    (Ellipsis, Ellipsis),
    (Ellipsis, 0, Ellipsis),
    (0, Ellipsis, 1, Ellipsis),
    (Ellipsis, [0, 1], Ellipsis),
    (Ellipsis, None, Ellipsis),
    (None, Ellipsis, Ellipsis),
    (Ellipsis, slice(0, 1), Ellipsis),
    (0, 0, 0, Ellipsis, Ellipsis),
    (Ellipsis, 0, 0, Ellipsis),
    (Ellipsis, Ellipsis, 0),
    (Ellipsis, Ellipsis, None),
]


@pytest.mark.parametrize("key", ELLIPSIS_KEYS, ids=repr)
def test_several_ellipses_match_pytorch(key):
    a = np.arange(24.0).reshape(2, 3, 4)
    xt, xe = torch.tensor(a), ember.tensor(a)
    try:
        want = xt[key]
    except IndexError:
        with pytest.raises(IndexError):
            xe[key]
        return
    got = xe[key]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(_numpy(got), want.numpy())
    yt, ye = xt.clone(), xe.clone()
    yt[key] = -1.0
    ye[key] = -1.0
    np.testing.assert_array_equal(np.asarray(ye.tolist()), yt.numpy())
