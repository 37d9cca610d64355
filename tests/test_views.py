"""Views alias their base: writes show through both ways, versions are shared; strides."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_equal


def _base():
    return ember.arange(24.0).reshape(2, 3, 4)


VIEWS = [
    ("view", lambda t: t.view(6, 4), (1, 0), (0, 1, 0)),
    ("view_minus1", lambda t: t.view(-1), (5,), (0, 1, 1)),
    ("reshape", lambda t: t.reshape(4, 6), (0, 5), (0, 1, 1)),
    ("permute", lambda t: t.permute(2, 0, 1), (3, 1, 2), (1, 2, 3)),
    ("transpose", lambda t: t.transpose(0, 2), (1, 2, 0), (0, 2, 1)),
    ("t", lambda t: t[0].t(), (2, 1), (0, 1, 2)),
    ("T", lambda t: t[1].T, (0, 2), (1, 2, 0)),
    ("squeeze", lambda t: t[:, :1].squeeze(1), (1, 2), (1, 0, 2)),
    ("unsqueeze", lambda t: t.unsqueeze(1), (1, 0, 2, 3), (1, 2, 3)),
    ("flatten", lambda t: t.flatten(1), (1, 7), (1, 1, 3)),
    ("narrow", lambda t: t.narrow(2, 1, 2), (0, 1, 1), (0, 1, 2)),
    ("select", lambda t: t.select(1, 2), (1, 3), (1, 2, 3)),
    ("slice_step", lambda t: t[:, ::2, 1::2], (1, 1, 1), (1, 2, 3)),
    ("int_index", lambda t: t[1], (2, 0), (1, 2, 0)),
    ("ellipsis_none", lambda t: t[..., None, 2], (0, 1, 0), (0, 1, 2)),
    ("unbind", lambda t: t.unbind(2)[3], (1, 2), (1, 2, 3)),
    ("split", lambda t: t.split(2, dim=2)[1], (0, 2, 1), (0, 2, 3)),
    ("chunk", lambda t: t.chunk(3, dim=1)[2], (1, 0, 0), (1, 2, 0)),
    ("diagonal", lambda t: t[0].diagonal(), (2,), (0, 2, 2)),
    ("unflatten", lambda t: t.unflatten(2, (2, 2)), (1, 2, 1, 0), (1, 2, 2)),
    ("movedim", lambda t: t.movedim(0, -1), (2, 1, 0), (0, 2, 1)),
    ("view_as", lambda t: t.view_as(ember.zeros(4, 6)), (3, 5), (1, 2, 3)),
]


@pytest.mark.parametrize("name, make, vidx, bidx", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_write_through_both_ways(name, make, vidx, bidx):
    base = _base()
    v = make(base)
    assert v._base is not None or v.data_ptr() == base.data_ptr() or v.storage_offset() >= 0
    # the view element vidx is the base element bidx
    assert v[vidx].item() == base[bidx].item()
    v[vidx] = -1.0
    assert base[bidx].item() == -1.0
    base[bidx] = -2.0
    assert v[vidx].item() == -2.0


@pytest.mark.parametrize("name, make, vidx, bidx", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_the_version_counter(name, make, vidx, bidx):
    base = _base()
    v = make(base)
    v0 = base._version
    assert v._version == v0
    base.add_(1)
    assert v._version == base._version == v0 + 1
    v.mul_(2)
    assert base._version == v._version == v0 + 2


def test_expand_aliases_and_refuses_overlapping_writes():
    base = ember.arange(4.0).reshape(1, 4)
    v = base.expand(3, 4)
    assert v.stride() == (0, 1) and v._version == base._version
    base[0, 1] = 10.0
    assert v[:, 1].tolist() == [10.0, 10.0, 10.0]
    msg = "unsupported operation: more than one element of the written-to tensor refers to a single memory"
    with pytest.raises(RuntimeError, match=msg):
        v.add_(1)
    with pytest.raises(RuntimeError, match=msg):
        v[:, 0] = 5.0


def test_inplace_ops_bump_version():
    t = ember.zeros(3)
    versions = [t._version]
    for op in (lambda: t.add_(1), lambda: t.mul_(2), lambda: t.zero_(), lambda: t.fill_(2.0)):
        op()
        versions.append(t._version)
    t[0] = 5.0
    versions.append(t._version)
    t += 1
    versions.append(t._version)
    assert versions == sorted(set(versions)) and len(versions) == 7
    t.add(1)
    assert t._version == versions[-1]


def test_view_on_transposed_tensor_raises_pytorch_message():
    msg = (
        r"^view size is not compatible with input tensor's size and stride \(at least one dimension spans "
        r"across two contiguous subspaces\). Use .reshape\(...\) instead.$"
    )
    with pytest.raises(RuntimeError, match=msg):
        ember.arange(6.0).reshape(2, 3).t().view(6)
    r = ember.arange(6.0).reshape(2, 3).t().reshape(6)
    assert r.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_reshape_of_non_viewable_copies():
    a = ember.arange(6.0).reshape(2, 3)
    r = a.t().reshape(6)
    r[0] = 100.0
    assert a[0, 0].item() == 0.0


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda a: a.view(4), RuntimeError, "shape '[4]' is invalid for input of size 6"),
        (lambda a: a.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
        (lambda a: a.reshape(4), RuntimeError, "shape '[4]' is invalid for input of size 6"),
        (
            lambda a: a.unsqueeze(3),
            IndexError,
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
        ),
        (
            lambda a: a.transpose(0, 2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (lambda a: a.permute(0, 0), RuntimeError, "permute(): duplicate dims are not allowed."),
        (
            lambda a: a.expand(3, 3),
            RuntimeError,
            (
                "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
                "dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"
            ),
        ),
        (
            lambda a: a.unsqueeze(0).t(),
            RuntimeError,
            "t() expects a tensor with <= 2 dimensions, but self is 3D",
        ),
        (lambda a: a.narrow(1, 2, 3), RuntimeError, "start (2) + length (3) exceeds dimension size (3)."),
        (
            lambda a: a.select(1, 3),
            IndexError,
            "select(): index 3 out of range for tensor of size [2, 3] at dimension 1",
        ),
        (
            lambda a: a.split([1, 3], 1),
            RuntimeError,
            (
                "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at "
                "dimension 1), but got split_sizes=[1, 3]"
            ),
        ),
    ],
)
def test_view_errors(fn, exc, msg):
    with pytest.raises(exc) as e:
        fn(ember.arange(6.0).reshape(2, 3))
    assert str(e.value) == msg


def test_strides_offsets_and_contiguity_match_pytorch():
    a = ember.arange(6.0).reshape(2, 3)
    assert a.stride() == (3, 1) and a.t().stride() == (1, 3) and a[:, 1].stride() == (3,)
    assert a[:, ::2].stride() == (3, 2) and a.expand(3, 2, 3).stride() == (0, 3, 1)
    assert a.unsqueeze(1).stride() == (3, 3, 1) and a.stride(0) == 3 and a.stride(-1) == 1
    assert (a[1].storage_offset(), a[:, 1].storage_offset(), a[1, 1:].storage_offset()) == (3, 1, 4)
    assert a.is_contiguous() and not a.t().is_contiguous() and not a[:, ::2].is_contiguous()
    assert a[:1].is_contiguous()
    c = a.t().contiguous()
    assert c.is_contiguous() and c.stride() == (2, 1) and c.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    c[0, 0] = 9.0
    assert a[0, 0].item() == 0.0  # contiguous() of a non-contiguous tensor copies
    assert a.contiguous() is a


def test_shapes_of_shape_ops():
    z = ember.zeros(1, 2, 1)
    assert z.squeeze().shape == (2,) and z.squeeze(0).shape == (2, 1) and z.squeeze(1).shape == (1, 2, 1)
    assert z.squeeze((0, 2)).shape == (2,)
    assert ember.zeros(2, 3, 4).flatten(1).shape == (2, 12) and ember.zeros(2, 3, 4).flatten().shape == (24,)
    assert ember.arange(6).unflatten(0, (2, 3)).shape == (2, 3)
    assert ember.zeros(2, 3, 4).movedim(0, -1).shape == (3, 4, 2)
    assert [t.tolist() for t in ember.arange(5).split(2)] == [[0, 1], [2, 3], [4]]
    assert [t.tolist() for t in ember.arange(5).split([1, 4])] == [[0], [1, 2, 3, 4]]
    assert [t.tolist() for t in ember.arange(5).chunk(3)] == [[0, 1], [2, 3], [4]]
    assert [t.tolist() for t in ember.arange(6).chunk(4)] == [[0, 1], [2, 3], [4, 5]]
    assert [t.tolist() for t in ember.arange(6.0).reshape(2, 3).unbind(1)] == [
        [0.0, 3.0],
        [1.0, 4.0],
        [2.0, 5.0],
    ]
    assert_equal(ember.arange(10).narrow(0, 2, 3), [2, 3, 4])


def test_views_match_numpy_values():
    a = np.arange(60).reshape(3, 4, 5)
    t = ember.tensor(a)
    assert_equal(t.permute(2, 0, 1), a.transpose(2, 0, 1))
    assert_equal(t.transpose(0, 1)[:, 1:, ::2], a.transpose(1, 0, 2)[:, 1:, ::2])
    assert_equal(t.permute(1, 2, 0).reshape(20, 3), a.transpose(1, 2, 0).reshape(20, 3))
    assert_equal(t[1:, ::3].flatten(), a[1:, ::3].flatten())
