"""Indices never wrap silently: every op that takes indices refuses a bad one as PyTorch 2.13 does.

The expected exception types and messages were probed in PyTorch 2.13.0 (``.venv-torch``);
``tests_torch/test_indices_torch.py`` compares the same ops against PyTorch directly. Each case
runs on ``cpu`` and on ``cpu_prims`` (the frontend's decompositions, see conftest.py).
"""

from __future__ import annotations

import re

import ember
import ember.nn.functional as F
import pytest

# x is arange(12.).reshape(3, 4) on the device; t() builds an int64 index there.
# Which ops accept negative indices in PyTorch 2.13: advanced indexing, index_put_, take,
# put_, index_fill_ (within [-size, size)); index_select, embedding, embedding_bag, gather,
# scatter*, index_add_/index_copy_/index_reduce_ refuse them.
REFUSED = [
    # the original finding: -1 used to return / write the last row
    (
        "index_select -1",
        lambda x, t: ember.index_select(x, 0, t([-1])),
        IndexError,
        "index out of range in self",
    ),
    ("embedding -1", lambda x, t: F.embedding(t([-1]), x), IndexError, "index out of range in self"),
    (
        "nn.Embedding -1",
        lambda x, t: _embedding_module(x)(t([0, -1])),
        IndexError,
        "index out of range in self",
    ),
    (
        "index_add_ -1",
        lambda x, t: x.clone().index_add_(0, t([-1]), ember.ones(1, 4, device=x.device)),
        RuntimeError,
        "index -1 is out of bounds for dimension 0 with size 3",
    ),
    (
        "index_add_ 1-d 4",
        lambda x, t: x[0].clone().index_add_(0, t([4]), ember.ones(1, device=x.device)),
        IndexError,
        "index out of range in self",
    ),
    (
        "index_copy_ -1",
        lambda x, t: x.clone().index_copy_(0, t([-1]), ember.ones(1, 4, device=x.device)),
        IndexError,
        "index_copy_(): index -1 is out of bounds for dimension 0 with size 3",
    ),
    (
        "index_reduce_ 3",
        lambda x, t: x.clone().index_reduce_(0, t([3]), ember.ones(1, 4, device=x.device), "prod"),
        IndexError,
        "index out of range in self",
    ),
    (
        "index_reduce_ sum",
        lambda x, t: x.clone().index_reduce_(0, t([0]), ember.ones(1, 4, device=x.device), "sum"),
        RuntimeError,
        "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum.",
    ),
    (
        "index_reduce_ float64 source",
        lambda x, t: x.clone().index_reduce_(0, t([0]), ember.ones(1, 4, device=x.device).double(), "prod"),
        RuntimeError,
        "index_reduce_(): self (Float) and source (Double) must have the same scalar type",
    ),
    (
        "index_fill_ -4",
        lambda x, t: x.clone().index_fill_(1, t([-5]), 0.0),
        IndexError,
        "index -5 is out of bounds for dimension 1 with size 4",
    ),
    (
        "index_select dim 1",
        lambda x, t: ember.index_select(x, 1, t([4])),
        RuntimeError,
        "INDICES element is out of DATA bounds, id=4 axis_dim=4",
    ),
    (
        "gather -1",
        lambda x, t: ember.gather(x, 1, t([[-1]])),
        RuntimeError,
        "index -1 is out of bounds for dimension 1 with size 4",
    ),
    (
        "scatter_add 4",
        lambda x, t: ember.scatter_add(x, 1, t([[4]]), ember.ones(1, 1, device=x.device)),
        RuntimeError,
        "index 4 is out of bounds for dimension 1 with size 4",
    ),
    (
        "scatter_reduce -1",
        lambda x, t: ember.scatter_reduce(x, 0, t([[-1]]), ember.ones(1, 1, device=x.device), "amax"),
        RuntimeError,
        "index -1 is out of bounds for dimension 0 with size 3",
    ),
    (
        "embedding_bag -1",
        lambda x, t: F.embedding_bag(t([0, 1, -1]), x, t([0]), mode="sum"),
        RuntimeError,
        "Index 2 of input takes value -1 which is not in the valid range [0, 3)",
    ),
    (
        "embedding_bag max 3",
        lambda x, t: F.embedding_bag(t([[0, 3]]), x, mode="max"),
        RuntimeError,
        "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 3",
    ),
    (
        "take 12",
        lambda x, t: ember.take(x, t([12])),
        IndexError,
        "out of range: tried to access index 12 on a tensor of 12 elements.",
    ),
    (
        "put_ -13",
        lambda x, t: x.clone().put_(t([-13]), ember.ones(1, device=x.device)),
        IndexError,
        "out of range: tried to access index -13 on a tensor of 12 elements.",
    ),
    (
        "getitem [:, 7]",
        lambda x, t: x[:, [7]],
        IndexError,
        "index 7 is out of bounds for dimension 0 with size 4",
    ),
    (
        "index_put_ second index",
        lambda x, t: x.clone().index_put_((t([0]), t([-5])), ember.tensor(1.0, device=x.device)),
        IndexError,
        "index -5 is out of bounds for dimension 1 with size 4",
    ),
    (
        "take_along_dim no dim -1",
        lambda x, t: ember.take_along_dim(x, t([-1])),
        RuntimeError,
        "index -1 is out of bounds for dimension 0 with size 12",
    ),
]

DTYPES = [
    (
        "index_select float",
        lambda x, t: ember.index_select(x, 0, t([0]).float()),
        RuntimeError,
        "index_select(): Expected dtype int32 or int64 for index",
    ),
    (
        "gather bool",
        lambda x, t: ember.gather(x, 0, t([[0]]).bool()),
        RuntimeError,
        "gather(): Expected dtype int32/int64 for index",
    ),
    (
        "scatter_reduce int16",
        lambda x, t: ember.scatter_reduce(x, 0, t([[0]]).short(), ember.ones(1, 1, device=x.device), "sum"),
        RuntimeError,
        "scatter(): Expected dtype int32/int64 for index",
    ),
    (
        "index_add_ float",
        lambda x, t: x.clone().index_add_(0, t([0]).float(), ember.ones(1, 4, device=x.device)),
        RuntimeError,
        "index_add_(): Expected dtype int32/int64 for index but got: Float",
    ),
    (
        "index_copy_ int32",
        lambda x, t: x.clone().index_copy_(0, t([0]).int(), ember.ones(1, 4, device=x.device)),
        RuntimeError,
        "index_copy_(): Expected a long tensor for index, but got Int",
    ),
    (
        "index_fill_ int32",
        lambda x, t: x.clone().index_fill_(0, t([0]).int(), 1.0),
        IndexError,
        "index_fill_(): Expected dtype int64 for index.",
    ),
    (
        "take int32",
        lambda x, t: ember.take(x, t([0]).int()),
        RuntimeError,
        "take(): Expected a long tensor for index, but got Int",
    ),
    (
        "put_ int32",
        lambda x, t: x.clone().put_(t([0]).int(), ember.ones(1, device=x.device)),
        RuntimeError,
        "put_(): Expected a long tensor for index, but got Int",
    ),
    (
        "index_put_ float",
        lambda x, t: x.clone().index_put_((t([0]).float(),), ember.tensor(1.0, device=x.device)),
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    ),
    (
        "getitem int16",
        lambda x, t: x[t([0]).short()],
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    ),
    (
        "embedding float",
        lambda x, t: F.embedding(t([0]).float(), x),
        RuntimeError,
        (
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            "but got ember.FloatTensor instead (while checking arguments for embedding)"
        ),
    ),
    (
        "embedding_bag float",
        lambda x, t: F.embedding_bag(t([0]).float(), x, t([0])),
        RuntimeError,
        (
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            "but got ember.FloatTensor instead (while checking arguments for embedding_bag)"
        ),
    ),
]


def _embedding_module(x):
    return ember.nn.Embedding(3, 4).to(x.device)


@pytest.fixture(params=["cpu", "prims"])
def device(request, cpu_prims):
    return "cpu" if request.param == "cpu" else cpu_prims


def _setup(device):
    x = ember.arange(12.0, device=device).reshape(3, 4)
    return x, lambda v: ember.tensor(v, dtype=ember.int64, device=device)


@pytest.mark.parametrize(
    ("case", "call", "exc", "message"), REFUSED + DTYPES, ids=[c[0] for c in REFUSED + DTYPES]
)
def test_bad_index_raises_pytorch_error(device, case, call, exc, message):
    x, t = _setup(device)
    with pytest.raises(exc, match="^" + re.escape(message) + "$"):
        call(x, t)


def test_refused_index_leaves_the_tensor_unchanged(device):
    x, t = _setup(device)
    y = x.clone()
    with pytest.raises(RuntimeError):
        y.index_add_(0, t([1, -1]), ember.ones(2, 4, device=device))
    with pytest.raises(IndexError):
        y.index_copy_(0, t([0, 3]), ember.ones(2, 4, device=device))
    assert y.tolist() == x.tolist()


# -- what PyTorch accepts ------------------------------------------------------------------
def test_int32_index_accepted_where_pytorch_accepts_it(device):
    x, t = _setup(device)
    i = t([[2, 0, 1, 0]]).int()
    assert ember.gather(x, 0, i).tolist() == [[8.0, 1.0, 6.0, 3.0]]
    assert ember.scatter(x, 0, i, 0.0).tolist() == [
        [0.0, 0.0, 2.0, 0.0],
        [4.0, 5.0, 0.0, 7.0],
        [0.0, 9.0, 10.0, 11.0],
    ]
    assert ember.scatter_add(x, 0, i, ember.ones(1, 4, device=device)).tolist() == [
        [0.0, 2.0, 2.0, 4.0],
        [4.0, 5.0, 7.0, 7.0],
        [9.0, 9.0, 10.0, 11.0],
    ]
    assert ember.index_select(x, 1, t([3]).int()).tolist() == [[3.0], [7.0], [11.0]]
    assert F.embedding(t([2]).int(), x).tolist() == [[8.0, 9.0, 10.0, 11.0]]
    assert x[t([-1]).int(), t([0]).int()].tolist() == [8.0]
    assert ember.take_along_dim(x, t([0, 11]).int()).tolist() == [0.0, 11.0]


def test_negative_indices_count_from_the_end_where_pytorch_allows_it(device):
    x, t = _setup(device)
    assert ember.take(x, t([-1, -12])).tolist() == [11.0, 0.0]
    assert x[t([-1])].tolist() == [[8.0, 9.0, 10.0, 11.0]]
    assert x.clone().index_fill_(1, t([-1]), 0.0)[:, 3].tolist() == [0.0, 0.0, 0.0]
    y = x.clone()
    y[t([-3]), t([-4])] = -1.0
    assert y[0, 0].item() == -1.0
    z = x.clone().put_(t([-1]), ember.tensor([5.0], device=device), accumulate=True)
    assert z[2, 3].item() == 16.0


def test_take_along_dim_with_dim_wraps_as_pytorch_does(device):
    # PyTorch 2.13 reduces indices modulo the size when ``dim`` is given (and raises without it).
    x, t = _setup(device)
    assert ember.take_along_dim(x, t([[100]]), 0).tolist() == [[4.0, 5.0, 6.0, 7.0]]
    assert ember.take_along_dim(x, t([[-1]]), 1).tolist() == [[3.0], [7.0], [11.0]]


def test_ellipsis_twice_is_accepted_as_in_pytorch(device):
    x3 = ember.arange(24.0, device=device).reshape(2, 3, 4)
    assert x3[..., ...].shape == (2, 3, 4)
    assert x3[..., 0, ...].tolist() == [[0.0, 4.0, 8.0], [12.0, 16.0, 20.0]]
    assert x3[0, ..., 1, ...].tolist() == [1.0, 5.0, 9.0]
    assert x3[..., None, ...].shape == (2, 3, 4, 1)
    assert ember.tensor(5.0, device=device)[..., ...].item() == 5.0
    y = x3.clone()
    y[..., 0, ...] = 0.0
    assert y.sum().item() == 276.0 - 60.0
    with pytest.raises(IndexError):
        x3[..., ..., 0]


def test_list_of_floats_is_truncated_as_in_pytorch(device):
    x, _ = _setup(device)
    assert x[[1.5]].tolist() == [[4.0, 5.0, 6.0, 7.0]]


def test_bool_index_put_is_a_mask(device):
    x, _ = _setup(device)
    m = ember.tensor([True, False, True], device=device)
    assert x.clone().index_put_((m,), ember.tensor(0.0, device=device)).sum().item() == 22.0


def test_empty_and_zero_dim_indices(device):
    x, t = _setup(device)
    assert ember.index_select(x, 0, t(1)).tolist() == [[4.0, 5.0, 6.0, 7.0]]
    assert ember.index_select(x, 0, t([])).shape == (0, 4)
    assert F.embedding(t([]), x).shape == (0, 4)
    assert F.embedding_bag(t([]), x, t([0]), mode="sum").tolist() == [[0.0, 0.0, 0.0, 0.0]]
    assert ember.take(x, t(-1)).item() == 11.0
    with pytest.raises(RuntimeError, match=r"^index_select\(\): self indexing axis dim should be positive$"):
        F.embedding(t([0]), ember.zeros(0, 4, device=device))
    with pytest.raises(IndexError, match=r"^take\(\): tried to take from an empty tensor$"):
        ember.take(ember.zeros(0, device=device), t([0]))
