"""The autograd engine: graph names, backward/grad semantics, hooks, versions, custom Functions.

Error texts were recorded with PyTorch 2.13 (``torch.`` printed as ``ember.``).
"""

from __future__ import annotations

import ember
import pytest
from _helpers import assert_close


def _x():
    return ember.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_seed_program():
    x = _x()
    L = x * x + x
    assert L.grad_fn.name() == "AddBackward0" and type(L.grad_fn).__name__ == "AddBackward0"
    assert L.grad_fn.next_functions[0][0].name() == "MulBackward0"
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        L.backward()
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]  # accumulated over two calls
    z = (x * x).sum()
    z.backward()
    msg = (
        "Trying to backward through the graph a second time (or directly access saved tensors after they "
        "have already been freed). Saved intermediate values of the graph are freed when you call "
        ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
        "graph a second time or if you need to access saved tensors after calling backward."
    )
    with pytest.raises(RuntimeError) as e:
        z.backward()
    assert str(e.value) == msg
    w = _x()
    (-(w * w)).sum().backward()
    assert w.grad.tolist() == [-2.0, -4.0, -6.0]
    v = ember.tensor(2.0, requires_grad=True)
    (g,) = ember.autograd.grad(v**3, v, create_graph=True)
    (gg,) = ember.autograd.grad(g, v)
    assert g.item() == 12.0 and gg.item() == 12.0  # 3x^2 and 6x at x = 2


def test_node_names_match_pytorch():
    x = _x()
    names = [
        (x * 2, "MulBackward0"),
        (x / 2, "DivBackward0"),
        (x - 1, "SubBackward0"),
        (x**2, "PowBackward0"),
        (x**x, "PowBackward1"),
        (x.sum(), "SumBackward0"),
        (x.mean(), "MeanBackward0"),
        (x.exp(), "ExpBackward0"),
        (x.view(3), "ViewBackward0"),
        (x[0], "SelectBackward0"),
        (x[[0, 1]], "IndexBackward0"),
        (x.unsqueeze(0), "UnsqueezeBackward0"),
        (-x, "NegBackward0"),
        (x.max(), "MaxBackward1"),
        (x.reshape(3, 1), "ViewBackward0"),
        (x.expand(2, 3), "ExpandBackward0"),
        (x.clone(), "CloneBackward0"),
        (x.to(ember.float64), "ToCopyBackward0"),
        (ember.matmul(x, x), "DotBackward0"),
        (x.abs(), "AbsBackward0"),
        (x.sum(0), "SumBackward1"),
        (x.prod(), "ProdBackward0"),
    ]
    for t, name in names:
        assert t.grad_fn.name() == name
    assert x.grad_fn is None and x.is_leaf and not (x * 2).is_leaf
    assert (x * 2).grad_fn.next_functions[0][0].name() == "AccumulateGrad"


def test_backward_error_messages():
    with pytest.raises(
        RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn$"
    ):
        ember.tensor([1.0]).sum().backward()
    with pytest.raises(RuntimeError) as e:
        (_x() * 1).backward(ember.ones(2))
    assert str(e.value) == (
        "Mismatch in shape: grad_output[0] has a shape of ember.Size([2]) and output[0] has a shape of ember.Size([3])."
    )
    with pytest.raises(RuntimeError, match="^can't retain_grad on Tensor that has requires_grad=False$"):
        ember.ones(1).retain_grad()
    with pytest.raises(
        RuntimeError, match="^cannot register a hook on a tensor that doesn't require gradient$"
    ):
        ember.ones(1).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="^you can only change requires_grad flags of leaf variables."):
        (_x() * 2).requires_grad_(False)
    with pytest.raises(
        RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place operation.$"
    ):
        _x().add_(1)


def test_autograd_grad_errors():
    a = _x()
    with pytest.raises(RuntimeError) as e:
        ember.autograd.grad((a * 2).sum(), [a, ember.ones(1, requires_grad=True)])
    assert str(e.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )
    g = ember.autograd.grad((a * 2).sum(), [a, ember.ones(1, requires_grad=True)], allow_unused=True)
    assert g[0].tolist() == [2.0, 2.0, 2.0] and g[1] is None
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors does not require grad$"):
        ember.autograd.grad((a * 2).sum(), [ember.ones(1)])
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be empty.$"):
        ember.autograd.grad((a * 2).sum(), [])
    assert a.grad is None  # grad() returns, it does not accumulate


def test_backward_with_gradient_and_inputs():
    x = _x()
    y = x * ember.tensor([1.0, 10.0, 100.0])
    y.backward(ember.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [1.0, 20.0, 300.0]
    a, b = _x(), _x()
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [1.0, 2.0, 3.0] and b.grad is None


def test_inplace_modification_of_saved_tensor_raises_version_error():
    a = _x()
    b = a * 2
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError) as e:
        c.sum().backward()
    assert str(e.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[ember.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0 instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "ember.autograd.set_detect_anomaly(True, check_nan=False)."
    )
    a2 = _x()
    b2 = a2.exp()
    b2.mul_(2)
    with pytest.raises(
        RuntimeError, match=r"\[ember.FloatTensor \[3\]\], which is output 0 of Exp, is at version 1"
    ):
        b2.sum().backward()


def test_inplace_on_non_saved_tensors_is_fine():
    a = _x()
    b = a + 1  # AddBackward0 saves nothing
    b.mul_(3)
    b.sum().backward()
    assert a.grad.tolist() == [3.0, 3.0, 3.0]
    x = _x()
    y = x.clone()
    y[1] = 0.0
    (y * y).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 6.0]


def test_retain_grad_and_hooks():
    x = _x()
    h = x * 2
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 8.0, 12.0] and x.grad.tolist() == [8.0, 16.0, 24.0]
    x = _x()
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0, 30.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0] and len(seen) == 1
    y = _x()
    mid = y * 2
    mid.register_hook(lambda g: g + 1)
    mid.sum().backward()
    assert y.grad.tolist() == [4.0, 4.0, 4.0]


def test_detach_and_requires_grad_():
    x = _x()
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None and d.tolist() == [2.0, 4.0, 6.0]
    d2 = x.detach()
    d2[0] = 100.0  # detach shares storage
    assert x[0].item() == 100.0
    t = ember.tensor([1.0, 2.0])
    assert t.requires_grad_() is t and t.requires_grad and t.is_leaf
    t.requires_grad_(False)
    assert not t.requires_grad
    x = _x()
    with pytest.raises(RuntimeError, match=r"^Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().cpu().numpy().tolist() == [1.0, 2.0, 3.0]


def test_grad_accumulates_and_can_be_reset():
    x = _x()
    for _ in range(3):
        (x * x).sum().backward()
    assert x.grad.tolist() == [6.0, 12.0, 18.0]
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(
        RuntimeError, match=r"^attempting to assign a gradient of size '\[2\]' to a tensor of size '\[3\]'"
    ):
        x.grad = ember.zeros(2)


def test_gradient_through_broadcasting_sums_back():
    a = ember.ones(2, 1, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    (a * b * ember.tensor([[1.0], [2.0]])).sum().backward()
    assert a.grad.tolist() == [[3.0], [6.0]] and b.grad.tolist() == [3.0, 3.0, 3.0]
    s = ember.tensor(2.0, requires_grad=True)
    (s * ember.ones(4)).sum().backward()
    assert s.grad.item() == 4.0 and s.grad.shape == ()


def test_clamp_with_tensor_bounds_differentiates_the_bounds():
    # Recorded with PyTorch 2.13 (one position has min > max: max wins there).
    x = ember.tensor([0.0, 1.0, 2.0, 3.0], requires_grad=True)
    lo = ember.tensor([1.0, 1.0, 1.0, 1.0], requires_grad=True)
    hi = ember.tensor([2.5, 0.5, 2.5, 2.5], requires_grad=True)
    y = x.clamp(lo, hi)
    assert y.grad_fn.name() == "ClampBackward0"
    (y * ember.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 3.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0, 0.0] and hi.grad.tolist() == [0.0, 2.0, 0.0, 4.0]


def test_second_order_through_create_graph():
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = (x.sin() * x**2).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    xs = x.detach()
    # d2/dx2 (x^2 sin x) = 2 sin x + 4 x cos x - x^2 sin x
    assert_close(x.grad, (2 * xs.sin() + 4 * xs * xs.cos() - xs * xs * xs.sin()).cpu().numpy(), rtol=1e-6)


# (expression over x, y of shape (2, 3); the grad_fn name PyTorch 2.13 gives it)
NODE_NAMES = [
    ("x + y", "AddBackward0"),
    ("x + 1", "AddBackward0"),
    ("1 + x", "AddBackward0"),
    ("x - y", "SubBackward0"),
    ("1 - x", "RsubBackward1"),
    ("x * y", "MulBackward0"),
    ("x * 2", "MulBackward0"),
    ("x / y", "DivBackward0"),
    ("x / 2", "DivBackward0"),
    ("2 / x", "MulBackward0"),
    ("x ** 2", "PowBackward0"),
    ("y.abs() ** x", "PowBackward1"),
    ("2 ** x", "PowBackward2"),
    ("-x", "NegBackward0"),
    ("x.exp()", "ExpBackward0"),
    ("x.abs().log()", "LogBackward0"),
    ("x.abs().sqrt()", "SqrtBackward0"),
    ("x.sin()", "SinBackward0"),
    ("x.cos()", "CosBackward0"),
    ("x.tanh()", "TanhBackward0"),
    ("x.sigmoid()", "SigmoidBackward0"),
    ("x.erf()", "ErfBackward0"),
    ("x.abs()", "AbsBackward0"),
    ("x.relu()", "ReluBackward0"),
    ("x.floor()", "FloorBackward0"),
    ("x.round()", "RoundBackward0"),
    ("x.sign()", "SignBackward0"),
    ("x.clamp(0, 1)", "ClampBackward1"),
    ("x.clamp(min=0)", "ClampBackward1"),
    ("T.maximum(x, y)", "MaximumBackward0"),
    ("T.minimum(x, y)", "MinimumBackward0"),
    ("T.where(x > 0, x, y)", "WhereBackward0"),
    ("x.sum()", "SumBackward0"),
    ("x.sum(1)", "SumBackward1"),
    ("x.mean()", "MeanBackward0"),
    ("x.mean(0)", "MeanBackward1"),
    ("x.prod()", "ProdBackward0"),
    ("x.prod(1)", "ProdBackward1"),
    ("x.amax(1)", "AmaxBackward0"),
    ("x.amin()", "AminBackward0"),
    ("x.max()", "MaxBackward1"),
    ("x.max(1).values", "MaxBackward0"),
    ("x.min(0).values", "MinBackward0"),
    ("x.var()", "VarBackward0"),
    ("x.var(1)", "VarBackward0"),
    ("x.std()", "StdBackward0"),
    ("x.cumsum(1)", "CumsumBackward0"),
    ("x.sort(1).values", "SortBackward0"),
    ("x.topk(2).values", "TopkBackward0"),
    ("x @ y.t()", "MmBackward0"),
    ("x @ y[0]", "MvBackward0"),
    ("x[0] @ y[0]", "DotBackward0"),
    ("T.mm(x, y.t())", "MmBackward0"),
    ("x.view(6)", "ViewBackward0"),
    ("x.reshape(3, 2)", "ViewBackward0"),
    ("x.permute(1, 0)", "PermuteBackward0"),
    ("x.t()", "TBackward0"),
    ("x.T", "PermuteBackward0"),
    ("x.transpose(0, 1)", "TransposeBackward0"),
    ("x[:1].expand(3, 3)", "ExpandBackward0"),
    ("x[:1].squeeze(0)", "SqueezeBackward1"),
    ("x[:1].squeeze()", "SqueezeBackward0"),
    ("x.unsqueeze(1)", "UnsqueezeBackward0"),
    ("x.flatten()", "ViewBackward0"),
    ("x.narrow(1, 0, 2)", "SliceBackward0"),
    ("x[0]", "SelectBackward0"),
    ("x[:, 1:]", "SliceBackward0"),
    ("x[:, ::2]", "SliceBackward0"),
    ("x[[0, 1], [1, 2]]", "IndexBackward0"),
    ("x[x > 0]", "IndexBackward0"),
    ("x.gather(1, T.tensor([[0], [1]]))", "GatherBackward0"),
    ("x.scatter(1, T.tensor([[0], [1]]), y[:, :1])", "ScatterBackward0"),
    ("x.scatter_add(1, T.tensor([[0], [1]]), y[:, :1])", "ScatterAddBackward0"),
    ("x.index_select(1, T.tensor([0, 2]))", "IndexSelectBackward0"),
    ("T.cat([x, y])", "CatBackward0"),
    ("T.stack([x, y])", "StackBackward0"),
    ("x.clone()", "CloneBackward0"),
    ("x.t().contiguous()", "CloneBackward0"),
    ("x.to(T.float64)", "ToCopyBackward0"),
    ("x.double()", "ToCopyBackward0"),
    ("x.masked_fill(x > 0, 0.0)", "MaskedFillBackward0"),
    ("x.detach() * y", "MulBackward0"),
    ("x[:1].expand_as(y)", "ExpandBackward0"),
    ("x.square()", "PowBackward0"),
    ("x.reciprocal()", "ReciprocalBackward0"),
    ("x.abs().rsqrt()", "RsqrtBackward0"),
    ("x.abs().log1p()", "Log1PBackward0"),
    ("x.expm1()", "Expm1Backward0"),
    ("x[:, :2].diagonal()", "DiagonalBackward0"),
    ("x.movedim(0, 1)", "PermuteBackward0"),
    ("x.view_as(y)", "ViewBackward0"),
    ("x.mT", "TransposeBackward0"),
    ("x.softmax(1)", "SoftmaxBackward0"),
    ("x.log_softmax(1)", "LogSoftmaxBackward0"),
    ("x.norm()", "LinalgVectorNormBackward0"),
    ("x.trunc()", "TruncBackward0"),
    ("x.ceil()", "CeilBackward0"),
    ("x.index_put((T.tensor([0]),), y[:1])", "IndexPutBackward0"),
]


@pytest.mark.parametrize("expr, name", NODE_NAMES, ids=[n[0] for n in NODE_NAMES])
def test_grad_fn_names_match_pytorch(expr, name):
    x = ember.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
    y = ember.tensor([[2.0, 1.0, -1.0], [3.0, 0.5, 2.0]], requires_grad=True)
    out = eval(expr, {"T": ember, "x": x, "y": y})
    assert out.grad_fn.name() == name
