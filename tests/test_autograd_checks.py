"""The engine checks what user code hands it as gradients, as PyTorch does: custom Function
backward results, tensor / node / module backward hooks, and grad_outputs / gradient."""

from __future__ import annotations

import functools
import re

import ember
import pytest

COMPLEX_GRAD = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, "
    "but got false.  (Could this error message be improved?  If so, please report an enhancement "
    "request to ember.)"
)


def _raises(exc: type, message: str) -> pytest.RaisesContext:
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


class Returns(ember.autograd.Function):
    """``forward(x, y) = 2x + y``; ``backward`` returns whatever ``Returns.make(g)`` gives."""

    make = staticmethod(lambda g: (2 * g, g))

    @staticmethod
    def forward(ctx, x, y):
        return x * 2 + y

    @staticmethod
    def backward(ctx, g):
        return Returns.make(g)


def _function_grads(make, x_shape=(3,), y=None, dtype=ember.float32):
    Returns.make = staticmethod(make)
    x = ember.ones(x_shape, dtype=dtype, requires_grad=True)
    y = ember.ones(x_shape, dtype=dtype, requires_grad=True) if y is None else y
    out = Returns.apply(x, y)
    out.backward(ember.ones_like(out))
    return x.grad, (y.grad if isinstance(y, ember.Tensor) else None)


# ---- custom Function: how many gradients


def test_function_too_many_gradients():
    with _raises(
        RuntimeError, "function ReturnsBackward returned an incorrect number of gradients (expected 2, got 3)"
    ):
        _function_grads(lambda g: (g, g, g))


def test_function_extra_nones_are_dropped():
    gx, gy = _function_grads(lambda g: (2 * g, g, None, None))
    assert gx.tolist() == [2.0, 2.0, 2.0] and gy.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "make", [lambda g: g, lambda g: (g,), lambda g: [g, g]], ids=["bare", "tuple", "list"]
)
def test_function_too_few_gradients(make):
    # A list is one value, as in PyTorch: only a tuple spreads over the inputs.
    with _raises(
        RuntimeError, "function ReturnsBackward returned an incorrect number of gradients (expected 2, got 1)"
    ):
        _function_grads(make)


@pytest.mark.parametrize(("value", "name"), [(3.0, "float"), ("g", "str"), ((None,), "tuple")])
def test_function_gradient_not_a_tensor(value, name):
    with _raises(RuntimeError, f"expected Variable or None (got {name})"):
        _function_grads(lambda g: (value, g))


def test_function_gradient_for_a_non_tensor_argument():
    with _raises(
        RuntimeError,
        "function ReturnsBackward returned a gradient different than None at position 2, but the "
        "corresponding forward input was not a Variable",
    ):
        _function_grads(lambda g: (g, g), y=1.0)


def test_function_none_means_zero_and_skipped_inputs_are_not_checked():
    gx, gy = _function_grads(lambda g: (None, g))
    assert gx is None and gy.tolist() == [1.0, 1.0, 1.0]
    # y does not require grad: whatever is returned for it is dropped unchecked, as in PyTorch.
    gx, _ = _function_grads(lambda g: (2 * g, ember.ones(5)), y=ember.ones(3))
    assert gx.tolist() == [2.0, 2.0, 2.0]


# ---- custom Function: shapes


@pytest.mark.parametrize(
    ("x_shape", "grad_shape", "index"),
    [
        ((3,), (5,), 0),
        ((3,), (1,), 0),
        ((3,), (), 0),
        ((3,), (3, 1), 0),
        ((2, 3), (3,), 0),
        ((1, 3), (3,), 1),
    ],
)
def test_function_gradient_of_incompatible_shape(x_shape, grad_shape, index):
    def make(g):
        bad = ember.ones(grad_shape)
        return (bad, g) if index == 0 else (g, bad)

    with _raises(
        RuntimeError,
        f"Function ReturnsBackward returned an invalid gradient at index {index} - got {list(grad_shape)} "
        f"but expected shape compatible with {list(x_shape)}",
    ):
        _function_grads(make, x_shape)


@pytest.mark.parametrize(
    ("x_shape", "grad", "expected"),
    [
        ((3,), [[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], [11.0, 22.0, 33.0]),
        ((3,), [[1.0, 2.0, 3.0]], [1.0, 2.0, 3.0]),
        ((1, 3), [[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], [[11.0, 22.0, 33.0]]),
        ((2, 1), [[1.0, 2.0], [3.0, 4.0]], [[3.0], [7.0]]),
        ((), [[1.0, 2.0], [3.0, 4.0]], 10.0),
    ],
)
def test_function_gradient_expandable_from_the_input_is_summed_to_it(x_shape, grad, expected):
    gx, _ = _function_grads(lambda g: (ember.tensor(grad), g), x_shape)
    assert gx.shape == x_shape and gx.tolist() == expected


# ---- custom Function: dtypes and devices


@pytest.mark.parametrize("dtype", [ember.float64, ember.float16, ember.int64, ember.bool])
def test_function_gradient_is_cast_to_the_input_dtype(dtype):
    gx, _ = _function_grads(lambda g: (ember.ones(3, dtype=dtype), g))
    assert gx.dtype == ember.float32 and gx.tolist() == [1.0, 1.0, 1.0]


def test_function_real_gradient_for_a_complex_input_is_cast():
    gx, _ = _function_grads(lambda g: (ember.ones(3), g), dtype=ember.complex64)
    assert gx.dtype == ember.complex64 and gx.tolist() == [1 + 0j, 1 + 0j, 1 + 0j]


@pytest.mark.parametrize(
    ("x_dtype", "grad_dtype"), [(ember.float32, ember.complex64), (ember.complex64, ember.int64)]
)
def test_function_complex_gradient_for_a_real_input_or_integer_for_complex(x_dtype, grad_dtype):
    Returns.make = staticmethod(lambda g: (ember.ones(3, dtype=grad_dtype), None))
    x = ember.ones(3, dtype=x_dtype, requires_grad=True)
    y = ember.ones(3, dtype=x_dtype)
    out = Returns.apply(x, y)
    with _raises(RuntimeError, COMPLEX_GRAD):
        out.backward(ember.ones_like(out))


def test_function_gradient_on_another_device():
    with _raises(
        RuntimeError,
        "Function ReturnsBackward returned an invalid gradient at index 1 - expected device cpu but got cpu:1",
    ):
        _function_grads(lambda g: (g, ember.ones(3, device="cpu:1")))


def test_function_zero_dim_gradient_is_moved_to_the_input_device():
    gx, _ = _function_grads(lambda g: (ember.tensor(5.0, device="cpu:1"), g), x_shape=())
    assert str(gx.device) == "cpu" and gx.item() == 5.0


# ---- tensor hooks


def _hooked(hook, leaf: bool, use_grad: bool = False):
    x = ember.ones(3, requires_grad=True)
    t = x if leaf else x * 1
    t.register_hook(hook)
    y = (t * 2).sum()
    if use_grad:
        return ember.autograd.grad(y, x)[0]
    y.backward()
    return x.grad


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize("shape", [(5,), (1,), (), (1, 3)])
def test_hook_changing_the_size(leaf, shape):
    def hook(g):
        return ember.ones(shape)

    with _raises(RuntimeError, "hook 'hook' has changed the size of value"):
        _hooked(hook, leaf)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize(
    ("dtype", "name"),
    [
        (ember.float64, "ember.DoubleTensor"),
        (ember.float16, "ember.HalfTensor"),
        (ember.int64, "ember.LongTensor"),
        (ember.uint8, "ember.ByteTensor"),
        (ember.bool, "CPUBoolType"),
        (ember.bfloat16, "CPUBFloat16Type"),
        (ember.complex64, "CPUComplexFloatType"),
    ],
)
def test_hook_changing_the_type(leaf, dtype, name):
    with _raises(
        RuntimeError, f"hook '<lambda>' has changed the type of value (was ember.FloatTensor got {name})"
    ):
        _hooked(lambda g: g.to(dtype), leaf)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize(("value", "name"), [(3.0, "float"), ((None,), "tuple"), ([1.0], "list")])
def test_hook_returning_a_non_tensor(leaf, value, name):
    with _raises(TypeError, f"expected Variable, but hook returned '{name}'"):
        _hooked(lambda g: value, leaf)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_hook_moving_the_gradient_to_another_device_of_the_same_type(leaf):
    # PyTorch's type check lets cuda:1 pass for cuda:0; ember refuses, naming both devices.
    with _raises(RuntimeError, "hook '<lambda>' has changed the device of value (was cpu got cpu:1)"):
        _hooked(lambda g: g.to("cpu:1"), leaf)


class _CallableHook:
    def __call__(self, g):
        return ember.ones(5)


@pytest.mark.parametrize("hook", [_CallableHook(), functools.partial(lambda k, g: ember.ones(k), 5)])
def test_hook_without_a_name(hook):
    with _raises(RuntimeError, "hook '<unknown>' has changed the size of value"):
        _hooked(hook, leaf=True)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_hook_replacing_or_observing_the_gradient(leaf):
    assert _hooked(lambda g: g * 10, leaf).tolist() == [20.0, 20.0, 20.0]
    assert _hooked(lambda g: None, leaf).tolist() == [2.0, 2.0, 2.0]


def test_leaf_hook_runs_and_is_checked_under_autograd_grad():
    assert _hooked(lambda g: g * 10, leaf=True, use_grad=True).tolist() == [20.0, 20.0, 20.0]
    with _raises(RuntimeError, "hook '<lambda>' has changed the size of value"):
        _hooked(lambda g: ember.ones(2), leaf=True, use_grad=True)


def test_leaf_hook_of_an_unrequested_leaf_does_not_run_under_autograd_grad():
    seen = []
    x = ember.ones(3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    w.register_hook(lambda g: seen.append(g))
    ember.autograd.grad((x * w).sum(), x)
    assert seen == []


def test_node_prehook_changing_the_size():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda g: ember.ones(4))
    with _raises(RuntimeError, "hook '<lambda>' has changed the size of value"):
        y.sum().backward()


# ---- node hooks: hook(grad_inputs, grad_outputs) may return replacement grad_inputs


def _node_hooked(hook):
    x = ember.ones(3, requires_grad=True)
    y = x * 2  # MulBackward0 has two edges: x and the constant (None)
    y.grad_fn.register_hook(hook)
    y.sum().backward()
    return x.grad


def test_node_hook_replaces_grad_inputs():
    assert _node_hooked(lambda gi, go: (gi[0] * 5, None)).tolist() == [10.0, 10.0, 10.0]
    assert _node_hooked(lambda gi, go: None).tolist() == [2.0, 2.0, 2.0]


def test_node_hook_returning_the_wrong_number_of_values():
    with _raises(
        RuntimeError, "hook '<lambda>' has returned an incorrect number of values (got 1, but expected 2)"
    ):
        _node_hooked(lambda gi, go: (gi[0],))


def test_node_hook_returning_a_non_tuple():
    with _raises(TypeError, "expected tuple, but hook returned 'list'"):
        _node_hooked(lambda gi, go: list(gi))


def test_node_hook_filling_a_none_gradient():
    with _raises(RuntimeError, "can't replace a None gradient with a non-None value"):
        _node_hooked(lambda gi, go: (gi[0], gi[0]))


def test_node_hook_changing_the_type():
    with _raises(
        RuntimeError,
        "hook '<lambda>' has changed the type of value (was ember.FloatTensor got ember.DoubleTensor)",
    ):
        _node_hooked(lambda gi, go: (gi[0].double(), None))


# ---- module full backward hooks


class _Mul(ember.nn.Module):
    def forward(self, a, b):
        return a * b


def _module_hooked(make):
    m = _Mul()
    m.register_full_backward_hook(lambda mod, gin, gout: make(gin))
    a = ember.ones(3, requires_grad=True)
    b = ember.full((3,), 2.0, requires_grad=True)
    m(a, b).sum().backward()
    return a.grad, b.grad


@pytest.mark.parametrize(("make", "got"), [(lambda gi: gi[:1], 1), (lambda gi: gi + gi[:1], 3)])
def test_module_hook_returning_the_wrong_number_of_grad_input(make, got):
    with _raises(
        RuntimeError, f"Backward hook returned an invalid number of grad_input, got {got}, but expected 2"
    ):
        _module_hooked(make)


def test_module_hook_changing_a_grad_input_size():
    with _raises(RuntimeError, "hook 'hook' has changed the size of value"):
        _module_hooked(lambda gi: (ember.ones(1), gi[1]))


def test_module_hook_replacing_grad_input():
    ga, gb = _module_hooked(lambda gi: [gi[0] * 3, gi[1]])
    assert ga.tolist() == [6.0, 6.0, 6.0] and gb.tolist() == [1.0, 1.0, 1.0]


# ---- grad_outputs / gradient


def _grad_of_double(g, dtype=ember.float32, shape=(3,)):
    x = ember.ones(shape, dtype=dtype, requires_grad=True)
    return ember.autograd.grad(x * 2, x, g)[0]


@pytest.mark.parametrize("bad", [ember.ones(2), ember.ones(1), ember.tensor(1.0)])
def test_grad_output_of_another_shape(bad):
    with _raises(
        RuntimeError,
        f"Mismatch in shape: grad_output[0] has a shape of ember.Size({list(bad.shape)}) and output[0] has "
        "a shape of ember.Size([3]).",
    ):
        _grad_of_double([bad])


@pytest.mark.parametrize(("value", "name"), [(2.0, "float"), ("a", "str")])
def test_grad_output_not_a_tensor(value, name):
    with _raises(TypeError, f"gradients can be either Tensors or None, but got {name}"):
        _grad_of_double([value])


@pytest.mark.parametrize(
    ("grad_dtype", "out_dtype"), [(ember.complex64, ember.float32), (ember.float32, ember.complex64)]
)
def test_grad_output_complex_mismatch(grad_dtype, out_dtype):
    with _raises(
        RuntimeError,
        "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in "
        f"dtype: grad_output[0] has a dtype of {grad_dtype} and output[0] has a dtype of {out_dtype}.",
    ):
        _grad_of_double(ember.ones(3, dtype=grad_dtype), dtype=out_dtype)


@pytest.mark.parametrize("dtype", [ember.float64, ember.int64, ember.bool])
def test_grad_output_is_cast_to_the_output_dtype(dtype):
    g = _grad_of_double(ember.ones(3, dtype=dtype))
    assert g.dtype == ember.float32 and g.tolist() == [2.0, 2.0, 2.0]


def test_gradient_of_a_leaf_is_cast_to_its_dtype():
    x = ember.ones(3, requires_grad=True)
    x.backward(ember.full((3,), 4.0, dtype=ember.float64))
    assert x.grad.dtype == ember.float32 and x.grad.tolist() == [4.0, 4.0, 4.0]


def test_grad_output_on_another_device():
    with _raises(RuntimeError, "invalid gradient at index 0 - expected device cpu but got cpu:1"):
        _grad_of_double(ember.ones(3, device="cpu:1"))
    x = ember.ones(3, requires_grad=True)
    with _raises(RuntimeError, "invalid gradient at index 0 - expected device cpu but got cpu:1"):
        (x * 2).backward(ember.ones(3, device="cpu:1"))


def test_zero_dim_grad_output_is_moved_to_the_output_device():
    g = _grad_of_double(ember.tensor(3.0, device="cpu:1"), shape=())
    assert str(g.device) == "cpu" and g.item() == 6.0


@pytest.mark.parametrize("api", ["backward", "grad"])
def test_fewer_grad_outputs_than_outputs(api):
    x = ember.ones(3, requires_grad=True)
    outs = [x * 2, x * 3]
    with _raises(RuntimeError, "got 2 tensors and 1 gradients"):
        if api == "backward":
            ember.autograd.backward(outs, [ember.ones(3)])
        else:
            ember.autograd.grad(outs, x, [ember.ones(3)])


@pytest.mark.parametrize("api", ["backward", "grad"])
def test_empty_grad_outputs_are_not_none(api):
    x = ember.ones(3, requires_grad=True)
    with _raises(RuntimeError, "got 1 tensors and 0 gradients"):
        if api == "backward":
            ember.autograd.backward([x.sum()], [])
        else:
            ember.autograd.grad([x.sum()], x, [])


def test_grad_output_shape_is_checked_before_the_count():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Mismatch in shape: grad_output\\[0\\]"):
        ember.autograd.backward([x * 2, x * 3], [ember.ones(2)])
