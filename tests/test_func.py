"""ember.func: transforms with hand-computed values, nesting, and what the loop-vmap does."""

import ember
import ember.func as ef
import pytest
from ember import nn


def _t(v):
    return ember.tensor(v, dtype=ember.float64)


def _eq(a, b):
    assert a.tolist() == (b.tolist() if hasattr(b, "tolist") else b)


def test_grad_orders_of_a_cube():
    _eq(ef.grad(lambda x: (x**3).sum())(_t([1.0, 2.0, 3.0])), [3.0, 12.0, 27.0])
    assert ef.grad(ef.grad(lambda x: x**3))(_t(2.0)).item() == 12.0
    assert ef.grad(ef.grad(ef.grad(lambda x: x**3)))(_t(2.0)).item() == 6.0


def test_grad_results_are_detached_unless_linked_outside():
    g = ef.grad(lambda x: (x * x).sum())(_t([1.0, 2.0]))
    assert not g.requires_grad and g.grad_fn is None
    w = _t([3.0, 4.0]).requires_grad_()
    g = ef.grad(lambda x: (x * x * w).sum())(_t([1.0, 2.0]))  # 2 x w
    _eq(g, [6.0, 16.0])
    g.sum().backward()  # d/dw sum(2 x w) = 2 x
    _eq(w.grad, [2.0, 4.0])


def test_nested_grads_keep_their_variables_apart():
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x: the inner derivative must not see x.
    f = ef.grad(lambda x: x * ef.grad(lambda y: x * y)(_t(5.0)))
    assert f(_t(3.0)).item() == 6.0


def test_grad_argnums_tuple_and_aux():
    g, aux = ef.grad(lambda a, b: ((a * b).sum(), {"n": a.sum()}), argnums=(0, 1), has_aux=True)(
        _t([1.0, 2.0]), _t([3.0, 4.0])
    )
    _eq(g[0], [3.0, 4.0])
    _eq(g[1], [1.0, 2.0])
    assert aux["n"].item() == 3.0 and not aux["n"].requires_grad


def test_vjp_fn_can_be_called_again():
    out, fn = ef.vjp(lambda x: x * x, _t([1.0, 2.0]))
    _eq(out, [1.0, 4.0])
    _eq(fn(_t([1.0, 1.0]))[0], [2.0, 4.0])
    _eq(fn(_t([0.5, 2.0]))[0], [1.0, 8.0])


def test_jvp_by_double_vjp():
    out, tangent = ef.jvp(lambda x: x**2, (_t([3.0, -1.0]),), (_t([1.0, 2.0]),))
    _eq(out, [9.0, 1.0])
    _eq(tangent, [6.0, -4.0])


def test_jacobians_of_a_linear_map_are_its_matrix():
    a = _t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for jac in (ef.jacrev, ef.jacfwd):
        j = jac(lambda x: a @ x)(_t([0.5, -0.5]))
        assert tuple(j.shape) == (3, 2)
        _eq(j, a)
    j = ef.jacrev(lambda x: x * 2)(_t([[1.0, 2.0]]))
    assert tuple(j.shape) == (1, 2, 1, 2)
    _eq(j.reshape(2, 2), [[2.0, 0.0], [0.0, 2.0]])


def test_hessian_of_a_quadratic_form():
    a = _t([[1.0, 2.0], [0.0, 3.0]])
    h = ef.hessian(lambda x: x @ a @ x)(_t([1.0, 1.0]))
    _eq(h, [[2.0, 2.0], [2.0, 6.0]])
    _eq(ef.jacrev(ef.jacrev(lambda x: x @ a @ x))(_t([1.0, 1.0])), h)


def test_vmap_loops_and_stacks():
    x = _t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    _eq(ef.vmap(lambda r: r.sum())(x), [3.0, 7.0, 11.0])
    _eq(ef.vmap(lambda c: c.sum(), in_dims=1)(x), [9.0, 12.0])
    _eq(
        ef.vmap(lambda r, s: r * s, in_dims=(0, None), out_dims=1)(x, _t(2.0)),
        [[2.0, 6.0, 10.0], [4.0, 8.0, 12.0]],
    )
    _eq(ef.vmap(ef.vmap(lambda v: v * 10))(x), [[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]])
    _eq(ef.vmap(ef.grad(lambda r: (r * r).sum()))(x), [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0]])
    assert tuple(ef.vmap(ef.jacrev(lambda r: r * r))(x).shape) == (3, 2, 2)


def test_grad_through_vmap():
    g = ef.grad(lambda x: ef.vmap(lambda r: (r**2).sum())(x).sum())(_t([[1.0, 2.0], [3.0, 4.0]]))
    _eq(g, [[2.0, 4.0], [6.0, 8.0]])


def test_vmap_of_an_empty_batch_has_the_outputs_shapes():
    out = ef.vmap(lambda r: r.sum(0))(ember.zeros(0, 3, 2))
    assert tuple(out.shape) == (0, 2)


def test_vmap_randomness_modes():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ef.vmap(lambda r: r + ember.rand(4))(x)
    assert tuple(ember.rand(2).shape) == (2,)  # the error mode is gone again
    same = ef.vmap(lambda r: r + ember.rand(4), randomness="same")(x)
    assert all(same[i].tolist() == same[0].tolist() for i in range(3))
    different = ef.vmap(lambda r: r + ember.rand(4), randomness="different")(x)
    assert different[0].tolist() != different[1].tolist()


class _Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(_t([2.0]))
        self.register_buffer("b", _t([1.0]))
        self.plain = _t([0.0])

    def forward(self, x):
        return x * self.w + self.b + self.plain


def test_functional_call_swaps_and_restores():
    m = _Scale()
    x = _t([1.0, 2.0])
    _eq(ember.func.functional_call(m, {"w": _t([10.0])}, x), [11.0, 21.0])
    _eq(ef.functional_call(m, ({"w": _t([1.0])}, {"b": _t([0.0]), "plain": _t([5.0])}), (x,)), [6.0, 7.0])
    assert isinstance(m.w, nn.Parameter) and m.w.tolist() == [2.0] and m.plain.tolist() == [0.0]
    r = _Raising()
    with pytest.raises(ZeroDivisionError):
        ef.functional_call(r, {"w": _t([7.0]), "extra": _t([1.0])}, x)
    assert r.w.tolist() == [2.0] and not hasattr(r, "extra")


class _Raising(_Scale):
    def forward(self, x):
        raise ZeroDivisionError


def test_functional_call_strict_lists_the_keys():
    with pytest.raises(RuntimeError) as e:
        ef.functional_call(_Scale(), {"w": _t([1.0]), "zz": _t([1.0])}, _t([1.0]), strict=True)
    assert (
        str(e.value)
        == "Error(s) in reparametrizing for _Scale:\n\tUnexpected key(s): 'zz'.\n\tMissing key(s): 'b'."
    )


def test_stack_module_state_and_ensemble():
    models = [_Scale() for _ in range(3)]
    for i, m in enumerate(models):
        m.w.data = _t([float(i)])
    params, buffers = ef.stack_module_state(models)
    assert params["w"].requires_grad and params["w"].grad_fn is None
    _eq(params["w"], [[0.0], [1.0], [2.0]])
    _eq(buffers["b"], [[1.0], [1.0], [1.0]])
    out = ef.vmap(lambda p, b, x: ef.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, _t([1.0, 2.0])
    )
    _eq(out, [[1.0, 1.0], [2.0, 3.0], [3.0, 5.0]])
    models[1].w.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected w from each model to have the same .requires_grad"):
        ef.stack_module_state(models)


def test_per_sample_gradients():
    m = _Scale()
    params = {k: v.detach() for k, v in m.named_parameters()}
    buffers = {k: v.detach() for k, v in m.named_buffers()}

    def loss(p, b, x, y):
        return ((ef.functional_call(m, (p, b), (x,)) - y) ** 2).sum()

    # d/dw (x w + 1 - y)^2 = 2 x (x w + 1 - y), w = 2
    g = ef.vmap(ef.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, _t([1.0, 2.0]), _t([0.0, 1.0]))
    _eq(g["w"], [[6.0], [16.0]])
