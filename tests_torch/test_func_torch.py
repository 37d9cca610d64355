"""ember.func against torch.func: values of every transform, their compositions, the
model-ensembling and per-sample-gradient tutorials' patterns, and the argument errors."""

import ember
import ember.func as ef
import ember.nn as enn
import ember.nn.functional as eF
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = torch.func
tnn = torch.nn
tF = torch.nn.functional


def _t(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def _e(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    return np.asarray(x.detach().tolist() if hasattr(x, "detach") else x, dtype=np.float64)


def _same(e, t, tol=1e-10):
    """Same structure (tuples, lists, dicts), same shapes, same values."""
    if isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, tol)
    elif isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t)
        for k in t:
            _same(e[k], t[k], tol)
    elif not hasattr(t, "shape"):
        assert e == t
    else:
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(e), _np(t), rtol=tol, atol=tol)


X = [0.5, -1.25, 2.0]
Y = [1.5, 0.25, -0.75]
M = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]


def f_scalar(lib):
    return lambda x: (lib.sin(x) * x * x).sum()


def f_two(lib):
    return lambda x, y: (lib.exp(x) * y + x * y * y).sum()


def f_vec(lib):
    return lambda x: lib.stack([(x * x).sum(), lib.sin(x).prod(), x[0] * x[2]])


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,), -1])
def test_grad_argnums(argnums):
    got = ef.grad(f_two(ember), argnums=argnums)(_e(X), _e(Y))
    want = tf.grad(f_two(torch), argnums=argnums)(_t(X), _t(Y))
    _same(got, want)


def test_grad_has_aux_and_grad_and_value():
    def f(lib):
        return lambda x: ((x * x).sum(), {"half": x / 2})

    _same(ef.grad(f(ember), has_aux=True)(_e(X)), tf.grad(f(torch), has_aux=True)(_t(X)))
    g, (v, aux) = ef.grad_and_value(f(ember), has_aux=True)(_e(X))
    tg, (tv, taux) = tf.grad_and_value(f(torch), has_aux=True)(_t(X))
    _same((g, v, aux), (tg, tv, taux))
    assert not g.requires_grad and not v.requires_grad and not aux["half"].requires_grad


def test_grad_of_a_dict_argument_and_kwargs():
    def f(lib):
        return lambda p, x, scale=1.0: ((p["w"] * x).sum() + p["b"] ** 2) * scale

    p_e, p_t = {"w": _e(X), "b": _e(0.5)}, {"w": _t(X), "b": _t(0.5)}
    _same(ef.grad(f(ember))(p_e, _e(Y), scale=3.0), tf.grad(f(torch))(p_t, _t(Y), scale=3.0))


def test_grad_of_grad_and_third_order():
    def f(lib):
        return lambda x: lib.sin(x) * x**3

    for order in (2, 3):
        ge, gt = f(ember), f(torch)
        for _ in range(order):
            ge, gt = ef.grad(ge), tf.grad(gt)
        _same(ge(_e(0.7)), gt(_t(0.7)))


def test_grad_links_to_outside_tensors_as_pytorch():
    xe, xt = _e(X).requires_grad_(), _t(X).requires_grad_()
    ge, gt = ef.grad(f_scalar(ember))(xe), tf.grad(f_scalar(torch))(xt)
    assert ge.requires_grad and gt.requires_grad
    ge.sum().backward()
    gt.sum().backward()
    _same(xe.grad, xt.grad)
    we, wt = _e(Y).requires_grad_(), _t(Y).requires_grad_()  # captured by the function
    ce, ct = ef.grad(lambda x: (x * x * we).sum())(_e(X)), tf.grad(lambda x: (x * x * wt).sum())(_t(X))
    assert ce.requires_grad and ct.requires_grad
    ce.sum().backward()
    ct.sum().backward()
    _same(we.grad, wt.grad)


def test_grad_runs_under_no_grad():
    with ember.no_grad():
        got = ef.grad(f_scalar(ember))(_e(X))
    with torch.no_grad():
        want = tf.grad(f_scalar(torch))(_t(X))
    _same(got, want)


def test_grad_of_unused_and_constant_inputs_is_zero():
    _same(
        ef.grad(lambda x, y: (x * 2).sum(), argnums=1)(_e(X), _e(Y)),
        tf.grad(lambda x, y: (x * 2).sum(), argnums=1)(_t(X), _t(Y)),
    )
    _same(ef.grad(lambda x: _e(3.0))(_e(X)), tf.grad(lambda x: _t(3.0))(_t(X)))


def test_vjp_tuple_outputs_and_aux():
    def f(lib):
        return lambda x, y: ((lib.sin(x) * y, (x * y).sum()), x.detach() + 1)

    oe, fe, ae = ef.vjp(f(ember), _e(X), _e(Y), has_aux=True)
    ot, ft, at = tf.vjp(f(torch), _t(X), _t(Y), has_aux=True)
    _same((oe, ae), (ot, at))
    ct = ([1.0, 2.0, -1.0], 0.5)
    _same(fe((_e(ct[0]), _e(ct[1]))), ft((_t(ct[0]), _t(ct[1]))))
    _same(fe((_e(ct[1] * 0 + 1).expand(3).clone(), _e(0.0))), ft((_t(1.0).expand(3).clone(), _t(0.0))))
    assert not oe[0].requires_grad


def test_jvp_values_and_aux():
    def f(lib):
        return lambda x, y: (lib.sin(x) * y, (x * y * y).sum())

    _same(ef.jvp(f(ember), (_e(X), _e(Y)), (_e(Y), _e(X))), tf.jvp(f(torch), (_t(X), _t(Y)), (_t(Y), _t(X))))

    def g(lib):
        return lambda x: (lib.exp(x), {"n": x.sum()})

    _same(
        ef.jvp(g(ember), (_e(X),), (_e(Y),), has_aux=True), tf.jvp(g(torch), (_t(X),), (_t(Y),), has_aux=True)
    )
    _same(ef.jvp(lambda x: _e(X), (_e(Y),), (_e(Y),)), tf.jvp(lambda x: _t(X), (_t(Y),), (_t(Y),)))


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobians(which):
    je, jt = getattr(ef, which), getattr(tf, which)
    _same(je(f_vec(ember))(_e(X)), jt(f_vec(torch))(_t(X)))
    _same(je(f_two(ember), argnums=(0, 1))(_e(X), _e(Y)), jt(f_two(torch), argnums=(0, 1))(_t(X), _t(Y)))

    def tree(lib):
        return lambda p: {"a": p["w"] @ p["x"], "b": (p["x"] ** 2, p["w"].sum())}

    _same(je(tree(ember))({"w": _e(M), "x": _e(X)}), jt(tree(torch))({"w": _t(M), "x": _t(X)}))

    def aux(lib):
        return lambda x: (lib.sin(x), x.sum())

    _same(je(aux(ember), has_aux=True)(_e(X)), jt(aux(torch), has_aux=True)(_t(X)))


def test_hessian_and_jacrev_of_jacrev():
    _same(ef.hessian(f_scalar(ember))(_e(X)), tf.hessian(f_scalar(torch))(_t(X)))
    _same(
        ef.hessian(f_two(ember), argnums=(0, 1))(_e(X), _e(Y)),
        tf.hessian(f_two(torch), argnums=(0, 1))(_t(X), _t(Y)),
    )
    _same(ef.jacrev(ef.jacrev(f_vec(ember)))(_e(X)), tf.jacrev(tf.jacrev(f_vec(torch)))(_t(X)))
    _same(ef.jacfwd(ef.jacrev(f_vec(ember)))(_e(X)), tf.jacfwd(tf.jacrev(f_vec(torch)))(_t(X)))


def test_vmap_compositions():
    B = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3], [-2.0, 1.0, 0.0]]
    _same(ef.vmap(ef.grad(f_scalar(ember)))(_e(B)), tf.vmap(tf.grad(f_scalar(torch)))(_t(B)))
    _same(ef.vmap(ef.jacrev(f_vec(ember)))(_e(B)), tf.vmap(tf.jacrev(f_vec(torch)))(_t(B)))
    _same(ef.vmap(ef.hessian(f_scalar(ember)))(_e(B)), tf.vmap(tf.hessian(f_scalar(torch)))(_t(B)))
    _same(
        ef.grad(lambda x: ef.vmap(f_scalar(ember))(x).sum())(_e(B)),
        tf.grad(lambda x: tf.vmap(f_scalar(torch))(x).sum())(_t(B)),
    )
    _same(ef.jacrev(ef.vmap(ember.sin))(_e(X)), tf.jacrev(tf.vmap(torch.sin))(_t(X)))


@pytest.mark.parametrize(
    ("in_dims", "out_dims", "shapes"),
    [
        (0, 0, [(4, 3), (4, 3)]),
        (1, 0, [(3, 4), (3, 4)]),
        ((0, None), 1, [(4, 3), (3,)]),
        ((-1, 0), -1, [(3, 4), (4, 3)]),
        ((None, 2), 0, [(3,), (2, 3, 4)]),
    ],
)
def test_vmap_dims(in_dims, out_dims, shapes):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]

    def f(a, b):
        return a * 2 + b.sum(0, keepdim=True) if b.dim() > 1 else a * b

    got = ef.vmap(f, in_dims=in_dims, out_dims=out_dims)(*map(_e, arrays))
    want = tf.vmap(f, in_dims=in_dims, out_dims=out_dims)(*map(_t, arrays))
    _same(got, want)


def test_vmap_trees_nested_and_kwargs():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 2))

    def f(lib):
        return lambda p, k=1.0: {"s": p["b"] @ p["a"] * k, "t": (p["a"].sum(0), k * 3)}

    got = ef.vmap(f(ember), in_dims=({"a": 1, "b": 0},), out_dims={"s": 0, "t": (1, None)})(
        {"a": _e(a), "b": _e(b)}, k=2.0
    )
    want = tf.vmap(f(torch), in_dims=({"a": 1, "b": 0},), out_dims={"s": 0, "t": (1, None)})(
        {"a": _t(a), "b": _t(b)}, k=2.0
    )
    _same(got, want)
    outer = rng.standard_normal((2, 3, 4))
    _same(
        ef.vmap(ef.vmap(lambda x: x.sum() * x))(_e(outer)), tf.vmap(tf.vmap(lambda x: x.sum() * x))(_t(outer))
    )
    _same(
        ef.vmap(ef.vmap(lambda a, b: a * b + a.sum(), in_dims=(None, 0)), in_dims=(0, None))(_e(M), _e(X)),
        tf.vmap(tf.vmap(lambda a, b: a * b + a.sum(), in_dims=(None, 0)), in_dims=(0, None))(_t(M), _t(X)),
    )


def test_vmap_out_dims_none_for_unbatched_outputs():
    w_e, w_t = _e(Y), _t(Y)
    got = ef.vmap(lambda x: (x * 2, w_e), out_dims=(0, None))(_e(M))
    want = tf.vmap(lambda x: (x * 2, w_t), out_dims=(0, None))(_t(M))
    _same(got, want)
    assert ef.vmap(lambda x: (x, 3), out_dims=(0, None))(_e(M))[1] == 3


def test_vmap_empty_batch_and_chunks():
    _same(
        ef.vmap(lambda x: x.sum(0))(ember.zeros(0, 3, 2, dtype=ember.float64)),
        tf.vmap(lambda x: x.sum(0))(torch.zeros(0, 3, 2, dtype=torch.float64)),
    )
    _same(ef.vmap(ember.sin, chunk_size=2)(_e(M)), tf.vmap(torch.sin, chunk_size=2)(_t(M)))


def test_vmap_randomness():
    x = ember.zeros(3, 4)
    same = ef.vmap(lambda r: r + ember.rand(4), randomness="same")(x)
    assert bool((same == same[0]).all())
    different = ef.vmap(lambda r: r + ember.rand(4), randomness="different")(x)
    assert not bool((different == different[0]).all())


_NETS = {}


def _model(nn):
    if nn in _NETS:
        return _NETS[nn]()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.fc2 = nn.Linear(4, 2)
            self.register_buffer("shift", torch.zeros(2) if nn is tnn else ember.zeros(2))

        def forward(self, x):
            return self.fc2(self.fc1(x).tanh()) + self.shift

    _NETS[nn] = Net
    return Net()


def _pair(seed):
    torch.manual_seed(seed)
    t = _model(tnn).double()
    e = _model(enn).double()
    e.load_state_dict({k: _e(v.numpy()) for k, v in t.state_dict().items()})
    with torch.no_grad():
        t.shift.fill_(0.1 * seed)
    e.shift.fill_(0.1 * seed)
    return e, t


def test_functional_call_dicts_and_restores():
    e, t = _pair(0)
    rng = np.random.default_rng(3)
    params = {k: rng.standard_normal(tuple(v.shape)) for k, v in t.named_parameters()}
    x = rng.standard_normal((5, 3))
    got = ef.functional_call(e, {k: _e(v) for k, v in params.items()}, (_e(x),))
    want = tf.functional_call(t, {k: _t(v) for k, v in params.items()}, (_t(x),))
    _same(got, want)
    buf = {"shift": _e([1.0, -1.0])}, {"shift": _t([1.0, -1.0])}
    _same(
        ef.functional_call(e, ({"fc1.bias": _e([0.0] * 4)}, buf[0]), _e(x)),
        tf.functional_call(t, ({"fc1.bias": _t([0.0] * 4)}, buf[1]), _t(x)),
    )
    _same(e(_e(x)), t(_t(x)))  # the module's own weights are back


def test_functional_call_tied_weights():
    def tied(nn):
        m = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False))
        m[1].weight = m[0].weight
        return m

    e, t = tied(enn).double(), tied(tnn).double()
    e[0].weight.data = _e(t[0].weight.detach().numpy())
    e[1].weight = e[0].weight
    w, x = [[1.0, 2.0], [3.0, 4.0]], [[1.0, -1.0]]
    for tie in (True, False):
        got = ef.functional_call(e, {"0.weight": _e(w)}, _e(x), tie_weights=tie)
        want = tf.functional_call(t, {"0.weight": _t(w)}, _t(x), tie_weights=tie)
        _same(got, want)


def test_ensembling_tutorial():
    pairs = [_pair(s) for s in range(3)]
    p_e, b_e = ef.stack_module_state([e for e, _ in pairs])
    p_t, b_t = tf.stack_module_state([t for _, t in pairs])
    _same(p_e, p_t)
    _same(b_e, b_t)
    assert all(v.requires_grad and v.grad_fn is None for v in p_e.values())
    base_e, base_t = pairs[0]
    x = np.random.default_rng(4).standard_normal((6, 3))

    def fmodel(module, fc):
        return lambda params, buffers, x: fc(module, (params, buffers), (x,))

    got = ef.vmap(fmodel(base_e, ef.functional_call), in_dims=(0, 0, None))(p_e, b_e, _e(x))
    want = tf.vmap(fmodel(base_t, tf.functional_call), in_dims=(0, 0, None))(p_t, b_t, _t(x))
    _same(got, want)
    xs = np.random.default_rng(5).standard_normal((3, 6, 3))  # a minibatch per model
    got_each = ef.vmap(fmodel(base_e, ef.functional_call))(p_e, b_e, _e(xs))
    _same(got_each, tf.vmap(fmodel(base_t, tf.functional_call))(p_t, b_t, _t(xs)))
    for i, (e, _) in enumerate(pairs):
        _same(got[i], e(_e(x)))
    got.sum().backward()
    want.sum().backward()
    _same({k: v.grad for k, v in p_e.items()}, {k: v.grad for k, v in p_t.items()})


def test_per_sample_gradients_tutorial():
    e, t = _pair(5)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((4, 3)), np.array([0, 1, 1, 0])

    def loss_fn(model, fc, F):
        def compute_loss(params, buffers, sample, target):
            pred = fc(model, (params, buffers), (sample.unsqueeze(0),))
            return F.cross_entropy(pred, target.unsqueeze(0))

        return compute_loss

    pe = {k: v.detach() for k, v in e.named_parameters()}
    be = {k: v.detach() for k, v in e.named_buffers()}
    pt = {k: v.detach() for k, v in t.named_parameters()}
    bt = {k: v.detach() for k, v in t.named_buffers()}
    got = ef.vmap(ef.grad(loss_fn(e, ef.functional_call, eF)), in_dims=(None, None, 0, 0))(
        pe, be, _e(x), ember.tensor(y)
    )
    want = tf.vmap(tf.grad(loss_fn(t, tf.functional_call, tF)), in_dims=(None, None, 0, 0))(
        pt, bt, _t(x), torch.tensor(y)
    )
    _same(got, want)
    for i in range(4):  # each row is that sample's own gradient
        e.zero_grad()
        eF.cross_entropy(e(_e(x[i : i + 1])), ember.tensor(y[i : i + 1])).backward()
        _same({k: got[k][i] for k in got}, {k: p.grad for k, p in e.named_parameters()})


# -- errors: PyTorch's types and messages ---------------------------------------------------


def _err(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the exception itself is under test
        return type(exc), str(exc).replace("torch.", "ember.")
    raise AssertionError("no error")


def _cases(lib, F):
    x = lib.zeros(2, 3)
    v = lib.zeros(3)

    def ident(x):
        return x

    return {
        "vmap sizes": lambda: F.vmap(lambda a, b: a + b)(x, lib.zeros(3, 3)),
        "vmap in_dims list": lambda: F.vmap(ident, in_dims=[0])(x),
        "vmap in_dims float": lambda: F.vmap(ident, in_dims=(1.5,))(x),
        "vmap in_dims range": lambda: F.vmap(ident, in_dims=5)(x),
        "vmap in_dims structure": lambda: F.vmap(lambda a, b: a, in_dims=(0,))(x, x),
        "vmap in_dims dict keys": lambda: F.vmap(lambda p: p, in_dims=({"b": 0},))({"a": x}),
        "vmap non-tensor": lambda: F.vmap(ident)(2.0),
        "vmap no inputs": lambda: F.vmap(ident)(),
        "vmap returns int": lambda: F.vmap(lambda a: 3)(x),
        "vmap out_dims structure": lambda: F.vmap(lambda a: (a, a), out_dims=(0, 1, 2))(x),
        "vmap out_dims str": lambda: F.vmap(ident, out_dims="a")(x),
        "vmap out_dims range": lambda: F.vmap(ident, out_dims=3)(x),
        "vmap batched out None": lambda: F.vmap(lambda a: a * 2, out_dims=None)(
            lib.arange(6.0).reshape(2, 3)
        ),
        "vmap chunk_size": lambda: F.vmap(ident, chunk_size=0),
        "vmap randomness": lambda: F.vmap(ident, randomness="foo"),
        "vmap random op": lambda: F.vmap(lambda a: a + lib.rand(3))(x),
        "grad vector": lambda: F.grad(ident)(v),
        "grad float": lambda: F.grad(lambda a: 1.0)(v),
        "grad aux": lambda: F.grad(lambda a: a.sum(), has_aux=True)(v),
        "grad argnum": lambda: F.grad(lambda a: a.sum(), argnums=2)(v),
        "grad argnums empty": lambda: F.grad(lambda a: a.sum(), argnums=())(v),
        "grad argnums repeat": lambda: F.grad(lambda a, b: a.sum(), argnums=(0, 0))(v, v),
        "grad argnums float": lambda: F.grad(lambda a: a.sum(), argnums=1.0)(v),
        "grad non-tensor": lambda: F.grad(lambda a: a.sum())(3.0),
        "grad integer": lambda: F.grad(lambda a: a.sum())(lib.ones(3, dtype=lib.int64)),
        "jvp primals": lambda: F.jvp(lib.sin, v, v),
        "jvp structure": lambda: F.jvp(lib.sin, (v,), (v, v)),
        "jvp tangent not tensor": lambda: F.jvp(lib.sin, (v,), (1.0,)),
        "jvp no primals": lambda: F.jvp(lambda: v, (), ()),
        "jvp size": lambda: F.jvp(lib.sin, (v,), (v[:2],)),
        "jvp returns int": lambda: F.jvp(lambda a: 3, (v,), (v,)),
        "jvp aux": lambda: F.jvp(lambda a: a, (v,), (v,), has_aux=True),
        "jvp strict": lambda: F.jvp(lambda a: lib.ones(2), (v,), (v,), strict=True),
        "vjp shape": lambda: F.vjp(lib.sin, v)[1](v[:2]),
        "vjp structure": lambda: F.vjp(lib.sin, v)[1]((v, v)),
        "vjp integer output": lambda: F.vjp(lambda a: a.long(), v),
        "vjp returns int": lambda: F.vjp(lambda a: 3, v),
        "jacrev chunk": lambda: F.jacrev(lib.sin, chunk_size=0),
        "jacrev returns int": lambda: F.jacrev(lambda a: 3)(v),
        "jacfwd returns int": lambda: F.jacfwd(lambda a: 3)(v),
        "jacrev non-tensor": lambda: F.jacrev(lib.sin)(3.0),
        "jacrev aux": lambda: F.jacrev(lambda a: a.sum(), has_aux=True)(v),
        "jacfwd aux": lambda: F.jacfwd(lambda a: a.sum(), has_aux=True)(v),
        "jacrev complex": lambda: F.jacrev(lib.sin)(lib.ones(2, dtype=lib.complex64)),
        "grad aux not tensors": lambda: F.grad(lambda a: (a.sum(), "note"), has_aux=True)(v),
        "vjp aux not tensors": lambda: F.vjp(lambda a: (a, 1), v, has_aux=True),
        "jvp aux not tensors": lambda: F.jvp(lambda a: (a, None), (v,), (v,), has_aux=True),
        "jacrev aux not tensors": lambda: F.jacrev(lambda a: (a, 1), has_aux=True)(v),
        "jacrev integer input": lambda: F.jacrev(lambda a: a)(lib.ones(3, dtype=lib.int64)),
        "vmap in_dims None": lambda: F.vmap(ident, in_dims=None)(x),
        "vmap returns None": lambda: F.vmap(lambda a: None)(x),
        "stack no models": lambda: F.stack_module_state([]),
    }


CASES = list(_cases(torch, tf))


@pytest.mark.parametrize("name", CASES)
def test_errors_match_pytorch(name):
    want = _err(_cases(torch, tf)[name])
    got = _err(_cases(ember, ef)[name])
    assert got[0].__name__ == want[0].__name__
    assert got[1] == want[1]


def test_module_errors_match_pytorch():
    e, t = _pair(0)
    cases = [
        lambda F, m, lib: F.functional_call(m, {"nope": lib.zeros(1)}, lib.zeros(1, 3), strict=True),
        lambda F, m, lib: F.functional_call(
            m, ({"fc1.bias": lib.zeros(4)}, {"fc1.bias": lib.zeros(4)}), lib.zeros(1, 3)
        ),
        lambda F, m, lib: F.functional_call(m, ({"fc1.bias": lib.zeros(4)}, 3), lib.zeros(1, 3)),
        lambda F, m, lib: F.functional_call(m, 3, lib.zeros(1, 3)),
        lambda F, m, lib: F.functional_call(m, {"fc1.weight": 3}, lib.zeros(1, 3)),
        lambda F, m, lib: F.functional_call(m, {"nope.weight": lib.zeros(1)}, lib.zeros(1, 3)),
        lambda F, m, lib: F.stack_module_state([m, m.__class__().eval()]),
    ]
    for case in cases:
        want = _err(lambda c=case: c(tf, t, torch))
        got = _err(lambda c=case: c(ef, e, ember))
        assert got[0].__name__ == want[0].__name__
        assert got[1] == want[1]


def test_tied_values_error_matches_pytorch():
    def tied(nn):
        m = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False))
        m[1].weight = m[0].weight
        return m

    def call(F, m, lib):
        return F.functional_call(
            m, {"0.weight": lib.zeros(2, 2), "1.weight": lib.ones(2, 2)}, lib.zeros(1, 2)
        )

    assert _err(lambda: call(ef, tied(enn), ember)) == _err(lambda: call(tf, tied(tnn), torch))


def _cnn(nn, F):
    class SimpleCNN(nn.Module):  # the per-sample-gradients tutorial's model, smaller
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 2, 3, 1)
            self.fc1 = nn.Linear(2 * 3 * 3, 4)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            return F.log_softmax(self.fc1(x.flatten(1)), dim=1)

    return SimpleCNN()


def test_per_sample_gradients_of_a_cnn():
    torch.manual_seed(7)
    t = _cnn(tnn, tF).double()
    e = _cnn(enn, eF).double()
    e.load_state_dict({k: _e(v.numpy()) for k, v in t.state_dict().items()})
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((3, 1, 8, 8)), np.array([1, 0, 3])

    def compute_loss(model, fc, F):
        def loss(params, buffers, sample, target):
            pred = fc(model, (params, buffers), (sample.unsqueeze(0),))
            return F.nll_loss(pred, target.unsqueeze(0))

        return loss

    def state(m):
        return {k: v.detach() for k, v in m.named_parameters()}, {k: v.detach() for k, v in m.named_buffers()}

    got = ef.vmap(ef.grad(compute_loss(e, ef.functional_call, eF)), in_dims=(None, None, 0, 0))(
        *state(e), _e(x), ember.tensor(y)
    )
    want = tf.vmap(tf.grad(compute_loss(t, tf.functional_call, tF)), in_dims=(None, None, 0, 0))(
        *state(t), _t(x), torch.tensor(y)
    )
    _same(got, want, tol=1e-9)
