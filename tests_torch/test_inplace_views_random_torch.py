"""In-place view/shape ops and in-place random fills against PyTorch.

View ops: shapes, strides, offsets, values, version counts, grad_fn names, gradients and
errors equal torch's. Random fills: ember's Philox values are its own, so these compare
parameter checks, messages, dtypes and shapes with torch, and moments with the analytic ones.
"""

import math
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DT = {
    "float16": (ember.float16, torch.float16),
    "bfloat16": (ember.bfloat16, torch.bfloat16),
    "float32": (ember.float32, torch.float32),
    "float64": (ember.float64, torch.float64),
    "int8": (ember.int8, torch.int8),
    "uint8": (ember.uint8, torch.uint8),
    "int16": (ember.int16, torch.int16),
    "int32": (ember.int32, torch.int32),
    "int64": (ember.int64, torch.int64),
    "bool": (ember.bool, torch.bool),
    "complex64": (ember.complex64, torch.complex64),
}


def _outcome(fn):
    """``("ok", value)`` or ``(exception type name, message)``."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return (type(e).__name__, str(e))


def _geometry(t):
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t._version)


# -- in-place view ops ------------------------------------------------------------------------
VIEW_CALLS = [
    ((2, 3), "unsqueeze_", (0,)),
    ((2, 3), "unsqueeze_", (-1,)),
    ((2, 3), "unsqueeze_", (3,)),
    ((1, 2, 1), "squeeze_", ()),
    ((1, 2, 1), "squeeze_", (0,)),
    ((1, 2, 1), "squeeze_", (1,)),
    ((1, 2, 1), "squeeze_", ((0, 2),)),
    ((2, 3), "squeeze_", (5,)),
    ((), "squeeze_", (0,)),
    ((), "unsqueeze_", (0,)),
    ((2, 3), "t_", ()),
    ((3,), "t_", ()),
    ((), "t_", ()),
    ((2, 3, 4), "t_", ()),
    ((2, 3, 4), "transpose_", (0, 2)),
    ((2, 3, 4), "transpose_", (-1, 1)),
    ((2, 3), "transpose_", (0, 2)),
    ((2, 3, 4), "swapdims_", (0, 1)),
    ((2, 3, 4), "swapaxes_", (2, 0)),
    ((2, 3), "as_strided_", ((3,), (1,), 1)),
    ((2, 3), "as_strided_", ((2, 2), (1, 2))),
    ((2, 3), "as_strided_", ((3,), (2,))),
    ((2, 3), "as_strided_", ((30,), (1,))),
    ((2, 3), "as_strided_", ((3,), (-1,))),
    ((2, 3), "as_strided_", ((3,), (1, 1))),
    ((2, 3), "as_strided_", ((3,), (1,), -1)),
    ((2, 3), "as_strided_", ((0,), (1,), 6)),
    ((2, 3), "as_strided_", (3, 1)),
    ((2, 3), "unsqueeze_", (1.5,)),
]


@pytest.mark.parametrize(("shape", "name", "args"), VIEW_CALLS)
def test_view_op_geometry_values_version_and_errors(shape, name, args):
    n = math.prod(shape)
    et = ember.arange(float(n)).reshape(shape)
    tt = torch.arange(float(n)).reshape(shape)
    e = _outcome(lambda: getattr(et, name)(*args))
    t = _outcome(lambda: getattr(tt, name)(*args))
    assert e[0] == t[0], (e, t)
    if t[0] != "ok":
        assert e[1] == t[1]
        return
    assert e[1] is et and t[1] is tt
    assert _geometry(et) == _geometry(tt)
    assert et.tolist() == tt.tolist()


def test_view_op_keeps_identity_and_aliases_its_storage():
    base_e, base_t = ember.zeros(2, 3), torch.zeros(2, 3)
    for b in (base_e, base_t):
        b.t_().unsqueeze_(0).squeeze_(0)[0, 1] = 5.0
    assert base_e.tolist() == base_t.tolist() == [[0.0, 5.0], [0.0, 0.0], [0.0, 0.0]]
    assert _geometry(base_e) == _geometry(base_t)
    # a view changed in place still writes its base; its own geometry is what changed
    for b in (ember.arange(6.0), torch.arange(6.0)):
        v = b[1:]
        v.as_strided_((2,), (2,))
        v.fill_(-1.0)
        assert b.tolist() == [0.0, -1.0, 2.0, -1.0, 4.0, 5.0]
        assert v._base is b


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("unsqueeze_", (1,)),
        ("squeeze_", ()),
        ("squeeze_", (0,)),
        ("squeeze_", ((0,),)),
        ("t_", ()),
        ("transpose_", (0, 1)),
        ("swapdims_", (0, 1)),
        ("swapaxes_", (1, 0)),
    ],
)
def test_view_op_on_non_leaf_records_pytorch_node_and_gradient(name, args):
    w = np.arange(1.0, 7.0).reshape(2, 3)
    ae = ember.tensor(w, requires_grad=True)
    at = torch.tensor(w, requires_grad=True)
    be, bt = ae * 2, at * 2
    getattr(be, name)(*args)
    getattr(bt, name)(*args)
    assert be.grad_fn.name() == bt.grad_fn.name()
    assert be._version == bt._version == 1
    we = ember.arange(6.0, dtype=ember.float64).reshape(tuple(bt.shape))
    (be * we).sum().backward()
    (bt * torch.arange(6.0, dtype=torch.float64).reshape(bt.shape)).sum().backward()
    assert ae.grad.tolist() == at.grad.tolist()


@pytest.mark.parametrize("call", ["unsqueeze_(0)", "t_()", "squeeze_()", "as_strided_((3,), (1,))"])
def test_view_op_on_leaf_or_view_of_leaf_raises_as_torch(call):
    e = _outcome(lambda: eval("ember.zeros(2, 3, requires_grad=True)." + call))
    t = _outcome(lambda: eval("torch.zeros(2, 3, requires_grad=True)." + call))
    assert e == t and e[0] == "RuntimeError"
    e = _outcome(
        lambda: eval("ember.zeros(2, 3, requires_grad=True)[0]." + call.replace("(3,), (1,)", "(1,), (1,)"))
    )
    t = _outcome(
        lambda: eval("torch.zeros(2, 3, requires_grad=True)[0]." + call.replace("(3,), (1,)", "(1,), (1,)"))
    )
    assert e == t and "view of a leaf" in e[1]
    with ember.no_grad():
        leaf = ember.zeros(2, 3, requires_grad=True)
        leaf.unsqueeze_(0)
    assert leaf.shape == (1, 2, 3) and leaf.is_leaf and leaf.requires_grad


# -- resize_ / resize_as_ ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("start", "sizes"),
    [
        ((6,), ((2, 2),)),
        ((6,), (2, 3)),
        ((6,), ([3, 2],)),
        ((6,), (6,)),
        ((2, 3), (3, 3)),
        ((6,), (0,)),
        ((6,), (-1,)),
        ((6,), (2, -1)),
        ((6,), ("a",)),
        ((6,), (2.5,)),
        ((6,), ()),
    ],
)
def test_resize_shape_strides_version_prefix_and_errors(start, sizes):
    n = math.prod(start)
    et, tt = ember.arange(float(n)).reshape(start), torch.arange(float(n)).reshape(start)
    e = _outcome(lambda: et.resize_(*sizes))
    t = _outcome(lambda: tt.resize_(*sizes))
    assert e[0] == t[0], (e, t)
    if t[0] != "ok":
        assert e[1] == t[1]
        return
    assert _geometry(et) == _geometry(tt)
    kept = min(n, tt.numel())  # beyond the old elements PyTorch's values are unspecified
    assert et.reshape(-1)[:kept].tolist() == tt.reshape(-1)[:kept].tolist()


def test_resize_keeps_storage_when_it_fits_and_strides_when_shape_is_unchanged():
    for mod in (ember, torch):
        base = mod.arange(6.0)
        v = base.view(2, 3)
        v.resize_(3)
        v.fill_(7.0)
        assert base.tolist() == [7.0, 7.0, 7.0, 3.0, 4.0, 5.0]
        tr = mod.arange(6.0).reshape(2, 3).t()
        tr.resize_(3, 2)
        assert tuple(tr.stride()) == (1, 3) and tr._version == 0
        tr.resize_(2, 3)
        assert tuple(tr.stride()) == (3, 1) and tr.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        grown = mod.arange(6.0)
        grown.resize_(2, 2).as_strided_((2,), (1,), 1).resize_(9)  # the storage's 6 stay
        assert grown[:5].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and grown.storage_offset() == 1


def test_resize_as_and_grad_errors_match_torch():
    et, tt = ember.arange(6.0), torch.arange(6.0)
    assert tuple(et.resize_as_(ember.zeros(3, 1)).shape) == tuple(tt.resize_as_(torch.zeros(3, 1)).shape)
    assert _geometry(et) == _geometry(tt)
    assert _outcome(lambda: et.resize_as_(3)) == _outcome(lambda: tt.resize_as_(3))
    for mod in (ember, torch):
        a = mod.zeros(3, requires_grad=True)
        for fn in (
            lambda a=a: a.resize_(4),
            lambda a=a: (a * 1).resize_(4),
            lambda a=a: (a * 1).resize_as_(a),
        ):
            assert _outcome(fn) == ("RuntimeError", "cannot resize variables that require grad")
        with mod.no_grad():
            assert _outcome(lambda a=a: a.resize_(4))[1] == "cannot resize variables that require grad"


# -- random fills: checks and dtypes -----------------------------------------------------------
RANDOM_CALLS = [
    "uniform_()",
    "uniform_(1, 0)",
    "uniform_(0, float('inf'))",
    "uniform_(float('nan'), 1)",
    "uniform_(-1e308, 1e308)",
    "uniform_(-3e38, 3e38)",
    "uniform_('a')",
    "uniform_(**{'from': -2, 'to': 3})",
    "uniform_(0, 1, 2)",
    "normal_()",
    "normal_(0, -1)",
    "normal_(mean=1, std=2)",
    "exponential_()",
    "exponential_(0)",
    "exponential_(-1)",
    "exponential_(lambd=float('nan'))",
    "geometric_(0.5)",
    "geometric_(0)",
    "geometric_(1)",
    "geometric_(1.5)",
    "cauchy_()",
    "cauchy_(0, 0)",
    "cauchy_(median=0, sigma=-1)",
    "log_normal_()",
    "log_normal_(0, 0)",
    "log_normal_(0, -1)",
    "bernoulli_()",
    "bernoulli_(0.3)",
    "bernoulli_(1.5)",
    "bernoulli_(-0.1)",
    "bernoulli_(float('nan'))",
    "bernoulli_(p=0.5)",
    "random_()",
    "random_(10)",
    "random_(-5, 5)",
    "random_(0, 300)",
    "random_(-200, 0)",
    "random_(5, 2)",
    "random_(0)",
    "random_(-1)",
    "random_(5, None)",
    "random_(0, to=3)",
    "random_(**{'from': 1, 'to': 4})",
]


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("call", RANDOM_CALLS)
def test_random_fill_checks_dtype_and_shape_match_torch(call, dt):
    edt, tdt = DT[dt]
    et, tt = ember.zeros(2, 3, dtype=edt), torch.zeros(2, 3, dtype=tdt)
    ns = {"et": et, "tt": tt}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's precision warnings: tested below
        e = _outcome(lambda: eval("et." + call, ns))
        t = _outcome(lambda: eval("tt." + call, ns))
    assert e[0] == t[0], (e, t)
    if t[0] != "ok":
        if t[0] != "TypeError":  # Python's wording of argument errors differs in places
            assert e[1] == t[1]
        return
    assert e[1] is et and tuple(et.shape) == (2, 3) and et.dtype is edt


def test_random_fill_tensor_p_checks_match_torch():
    cases = [
        "ember.zeros(2, 3).bernoulli_(ember.tensor([0.0, 1.0, 1.0]))",
        "ember.zeros(3).bernoulli_(ember.zeros(2, 3))",
        "ember.zeros(3).bernoulli_(ember.tensor([0, 1, 1]))",
        "ember.zeros(3, dtype=ember.int64).bernoulli_(ember.tensor([0.0, 1, 1], dtype=ember.float64))",
        "ember.zeros(3).bernoulli_(ember.tensor([True, False, True]))",
        "ember.zeros(3).bernoulli_(ember.tensor([0.5, 2.0, 0.5]))",
    ]
    for c in cases:
        e = _outcome(lambda c=c: eval(c, {"ember": ember}))
        t = _outcome(lambda c=c: eval(c.replace("ember", "torch"), {"torch": torch}))
        assert e[0] == t[0] and (e[0] == "ok" or e[1] == t[1]), (c, e, t)
        if e[0] == "ok":
            assert e[1].tolist() == t[1].tolist()  # p of 0 and 1 leave nothing to chance


def test_random_float_out_of_precision_range_warns_as_torch():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]") as rec:
        ember.zeros(3).random_(2**25)
    with pytest.warns(UserWarning) as trec:
        torch.zeros(3).random_(2**25)
    assert str(rec[0].message) == str(trec[0].message).split(" (Triggered internally")[0]


@pytest.mark.parametrize("call", ["uniform_()", "normal_()", "bernoulli_()", "exponential_()", "random_()"])
def test_random_fill_autograd_matches_torch(call):
    e = _outcome(lambda: eval("ember.zeros(3, requires_grad=True)." + call))
    t = _outcome(lambda: eval("torch.zeros(3, requires_grad=True)." + call))
    assert e == t and e[0] == "RuntimeError"
    ae, at = ember.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    be, bt = ae * 2, at * 2
    eval("be." + call, {"be": be})
    eval("bt." + call, {"bt": bt})
    assert be.grad_fn.name() == bt.grad_fn.name() and be._version == bt._version
    (be * 3).sum().backward()
    (bt * 3).sum().backward()
    assert ae.grad.tolist() == at.grad.tolist() == [0.0, 0.0, 0.0]


# -- random fills: streams and moments ----------------------------------------------------------
def test_uniform_and_normal_use_rand_and_randn_streams():
    ember.manual_seed(7)
    u = ember.empty(4, 5).uniform_()
    ember.manual_seed(7)
    assert u.tolist() == ember.rand(4, 5).tolist()
    ember.manual_seed(7)
    z = ember.empty(10, dtype=ember.float64).normal_()
    ember.manual_seed(7)
    assert z.tolist() == ember.randn(10, dtype=ember.float64).tolist()
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    a = ember.empty(100).exponential_(generator=g1)
    b = ember.empty(100).exponential_(generator=g2)
    assert a.tolist() == b.tolist()
    assert ember.empty(100).exponential_(generator=g1).tolist() != a.tolist()


N = 100_000


def _moments(x):
    a = np.asarray(x.double().tolist() if x.dtype is not ember.bool else x.int().tolist(), dtype=np.float64)
    return a, a.mean(), a.var()


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_continuous_moments(dt):
    edt = DT[dt][0]
    ember.manual_seed(1)
    # mean and variance within ~6 standard errors of the analytic values
    a, m, v = _moments(ember.empty(N, dtype=edt).uniform_(-2, 3))
    assert a.min() >= -2 and a.max() < 3
    assert abs(m - 0.5) < 6 * math.sqrt(25 / 12 / N) and abs(v - 25 / 12) < 0.05
    _, m, v = _moments(ember.empty(N, dtype=edt).normal_(1.5, 2.0))
    assert abs(m - 1.5) < 6 * 2 / math.sqrt(N) and abs(v - 4.0) < 0.1
    a, m, v = _moments(ember.empty(N, dtype=edt).exponential_(4.0))
    assert a.min() >= 0 and abs(m - 0.25) < 6 * 0.25 / math.sqrt(N) and abs(v - 1 / 16) < 0.004
    a, m, _ = _moments(ember.empty(N, dtype=edt).log_normal_(0.5, 0.25))
    assert a.min() > 0 and abs(m - math.exp(0.5 + 0.25**2 / 2)) < 0.01
    assert abs(np.log(a).std() - 0.25) < 0.005
    a, _, _ = _moments(ember.empty(N, dtype=edt).cauchy_(2.0, 0.5))
    q1, med, q3 = np.quantile(a, [0.25, 0.5, 0.75])  # Cauchy has no moments: its quartiles
    assert abs(med - 2.0) < 0.02 and abs(q1 - 1.5) < 0.02 and abs(q3 - 2.5) < 0.02


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_uniform_never_reaches_to(dt):
    ember.manual_seed(8)
    a = np.asarray(ember.empty(N, dtype=DT[dt][0]).uniform_().float().tolist())
    assert a.min() >= 0 and a.max() < 1 and abs(a.mean() - 0.5) < 0.01


@pytest.mark.parametrize("dt", ["float32", "int64", "int8"])
def test_discrete_moments(dt):
    edt = DT[dt][0]
    ember.manual_seed(2)
    a, m, v = _moments(ember.empty(N, dtype=edt).geometric_(0.25))
    assert a.min() >= 1 and (a == np.round(a)).all()
    assert abs(m - 4.0) < 6 * math.sqrt(12 / N) and abs(v - 12.0) < 0.8
    assert abs((a == 1).mean() - 0.25) < 0.01
    a, m, _ = _moments(ember.empty(N, dtype=edt).bernoulli_(0.3))
    assert set(np.unique(a)) == {0.0, 1.0} and abs(m - 0.3) < 0.01
    a, m, v = _moments(ember.empty(N, dtype=edt).random_(-5, 7))
    assert set(np.unique(a)) == set(range(-5, 7))
    assert abs(m - 0.5) < 0.05 and abs(v - (144 - 1) / 12) < 0.3


def test_random_default_ranges_per_dtype():
    ember.manual_seed(3)
    for edt, top in [(ember.uint8, 255), (ember.int8, 127), (ember.float16, 2048), (ember.bfloat16, 256)]:
        a = np.asarray(ember.empty(N, dtype=edt).random_().double().tolist())
        assert a.min() == 0 and a.max() == top
    b = ember.empty(1000, dtype=ember.bool).random_()
    assert 400 < int(b.sum()) < 600
    big = np.asarray(ember.empty(N, dtype=ember.int64).random_().tolist(), dtype=np.int64)
    assert big.min() >= 0 and big.max() > 2**62  # 63 random bits
    full = np.asarray(ember.empty(N, dtype=ember.int64).random_(-(2**63), None).tolist(), dtype=np.int64)
    assert full.min() < -(2**62) and full.max() > 2**62 and abs((full < 0).mean() - 0.5) < 0.01
    # a span between 2**63 and 2**64: 64 bits modulo the span (PyTorch's method and its bias)
    wide = np.asarray(ember.empty(N, dtype=ember.int64).random_(-(2**63), 2**62).tolist(), dtype=object)
    assert min(wide) >= -(2**63) and max(wide) < 2**62 and max(wide) > 2**61
    assert abs(np.mean(wide < -(2**61)) - 0.625) < 0.01


def test_bernoulli_tensor_p_moments_and_complex_fills():
    ember.manual_seed(4)
    p = ember.tensor([0.1, 0.5, 0.9])
    a = np.asarray(ember.empty(N // 3, 3).bernoulli_(p).tolist())
    assert np.abs(a.mean(0) - [0.1, 0.5, 0.9]).max() < 0.015
    c = ember.empty(N, dtype=ember.complex64).normal_(0.0, 2.0)
    re, im = np.asarray(c.real.tolist()), np.asarray(c.imag.tolist())
    assert abs(re.var() - 2.0) < 0.05 and abs(im.var() - 2.0) < 0.05  # var split between parts
    assert abs(np.corrcoef(re, im)[0, 1]) < 0.02
    u = ember.empty(N, dtype=ember.complex64).uniform_(1, 2)
    re, im = np.asarray(u.real.tolist()), np.asarray(u.imag.tolist())
    assert re.min() >= 1 and im.max() < 2 and abs(im.mean() - 1.5) < 0.01


@pytest.mark.parametrize("call", ["normal_()", "bernoulli_(0.5)", "geometric_(0.5)"])
def test_random_fill_through_a_view_zeroes_only_that_part_of_the_base_gradient(call):
    grads = []
    for mod in (ember, torch):
        a = mod.ones(2, 3, requires_grad=True)
        b = a * 2
        eval("b[0]." + call, {"b": b})
        (b * 3).sum().backward()
        grads.append(a.grad.tolist())
        assert b._version == 1
    assert grads[0] == grads[1] == [[0.0, 0.0, 0.0], [6.0, 6.0, 6.0]]


def test_view_op_version_is_shared_with_views_and_saved_tensors_notice_it():
    for mod in (ember, torch):
        base = mod.zeros(2, 3)
        v = base[0]
        v.unsqueeze_(0)
        assert base._version == v._version == 1
    outcomes = []
    for mod in (ember, torch):
        x = mod.ones(2, 3, requires_grad=True) * 1
        y = x.sin()  # saves x
        x.t_()
        outcomes.append(_outcome(lambda y=y: y.sum().backward())[0])
    assert outcomes == ["RuntimeError", "RuntimeError"]


def test_as_strided_on_a_non_leaf_view_reaches_its_base_storage():
    grads, names = [], []
    for mod in (ember, torch):
        a = mod.arange(1.0, 7.0, dtype=mod.float64).requires_grad_()
        b = a * 1
        v = b[2:4]
        v.as_strided_((2, 3), (3, 1), 0)  # wider than v, inside b's storage
        assert v.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        names.append(v.grad_fn.name())
        (v * mod.arange(6.0, dtype=mod.float64).reshape(2, 3)).sum().backward()
        grads.append(a.grad.tolist())
    assert names[0] == names[1] == "AsStridedBackward1"
    assert grads[0] == grads[1]
