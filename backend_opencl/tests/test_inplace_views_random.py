"""In-place view/shape ops and random fills on a non-CPU backend (OpenCL, on PoCL in CI):
they are written in ember ops, so the samples are drawn and written on the tensor's device.
The differential tests against PyTorch are in tests_torch/test_inplace_views_random_torch.py."""

import ember
import numpy as np
import pytest


def test_uniform_on_opencl_is_the_cpu_stream():
    ember.manual_seed(5)
    x = ember.zeros(5, device="opencl").uniform_()
    ember.manual_seed(5)
    assert x.device.type == "opencl" and x.tolist() == ember.rand(5).tolist()


@pytest.mark.parametrize(
    ("call", "lo", "hi"),
    [
        ("normal_()", -7.0, 7.0),
        ("exponential_(2.0)", 0.0, 20.0),
        ("geometric_(0.5)", 1.0, 64.0),
        ("cauchy_()", -1e9, 1e9),
        ("log_normal_(0.0, 0.5)", 0.0, 30.0),
        ("bernoulli_(0.5)", 0.0, 1.0),
        ("uniform_(-3, -2)", -3.0, -2.0),
    ],
)
def test_random_fills_stay_on_opencl(call, lo, hi):
    ember.manual_seed(6)
    y = eval("ember.zeros(2000, device='opencl')." + call)
    a = np.asarray(y.tolist())
    assert y.device.type == "opencl" and np.isfinite(a).all() and lo <= a.min() and a.max() <= hi
    assert len(np.unique(a)) > 1


def test_random_integers_on_opencl():
    r = ember.zeros(2000, dtype=ember.int32, device="opencl").random_(3, 9)
    assert r.device.type == "opencl" and set(np.unique(r.tolist())) == set(range(3, 9))


def test_view_ops_in_place_on_opencl():
    v = ember.arange(6.0, device="opencl")
    v.resize_(2, 2).t_().unsqueeze_(0)
    assert v.tolist() == [[[0.0, 2.0], [1.0, 3.0]]] and v.stride() == (2, 1, 2)  # PyTorch's
    v.squeeze_().as_strided_((3,), (1,), 1)
    assert v.tolist() == [1.0, 2.0, 3.0]
    v.resize_(8)  # grows: a new storage that keeps the old prefix
    assert v.tolist()[:5] == [1.0, 2.0, 3.0, 4.0, 5.0]
