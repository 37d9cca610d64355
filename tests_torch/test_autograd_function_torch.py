"""Custom ``autograd.Function`` features and the autograd switches against PyTorch: each case runs
the same code with ``lib = torch`` and ``lib = ember`` and must give the same values, or the same
exception type and message (``torch`` read as ``ember``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import pytest

torch = pytest.importorskip("torch")


def _outcome(case: Callable[[Any], Any], lib: Any) -> Any:
    try:
        return ("ok", _plain(case(lib)))
    except Exception as e:  # noqa: BLE001 - the exception itself is the result compared
        return (type(e).__name__, str(e).replace("torch", "ember"))


def _plain(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def _same(case: Callable[[Any], Any]) -> Any:
    want, got = _outcome(case, torch), _outcome(case, ember)
    assert got == want
    return got


def _fn(lib: Any, forward: Callable, backward: Callable, **attrs: Any) -> type:
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    body.update({k: staticmethod(v) if callable(v) else v for k, v in attrs.items()})
    return type("MyFn", (lib.autograd.Function,), body)


def test_setup_context_style() -> None:
    def case(lib: Any) -> Any:
        def forward(x: Any, k: float) -> Any:
            return x * x * k

        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            ctx.k = inputs[1]
            ctx.save_for_backward(inputs[0], output)

        def backward(ctx: Any, g: Any) -> Any:
            x, out = ctx.saved_tensors
            return g * 2 * x * ctx.k + 0 * out, None

        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = _fn(lib, forward, backward, setup_context=setup_context, generate_vmap_rule=True).apply(x, 3.0)
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__

    assert _same(case)[0] == "ok"


@pytest.mark.parametrize("bad", [3, "s", [1.0]])
def test_save_for_backward_refuses_non_tensors(bad: Any) -> None:
    def case(lib: Any) -> Any:
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x, None, bad)
            return x * 2

        return _fn(lib, forward, lambda ctx, g: g).apply(lib.ones(2, requires_grad=True))

    assert _same(case)[0] == "TypeError"


def _dirty(lib: Any, returned: str = "x") -> type:
    def forward(ctx: Any, x: Any) -> Any:
        x.mul_(2)
        ctx.mark_dirty(x)
        return x if returned == "x" else x * 1

    return _fn(lib, forward, lambda ctx, g: g * 2)


def test_mark_dirty_returns_the_input_with_new_version_and_node() -> None:
    def case(lib: Any) -> Any:
        a = lib.tensor([1.0, 3.0], requires_grad=True)
        b = a * 1
        v = b._version
        y = _dirty(lib).apply(b)
        (y * y).sum().backward()
        return y is b, b._version - v, type(b.grad_fn).__name__, y, a.grad

    assert _same(case)[0] == "ok"


def test_mark_dirty_on_a_view_reaches_the_base() -> None:
    def case(lib: Any) -> Any:
        a = lib.tensor([1.0, 3.0, 5.0], requires_grad=True)
        b = a * 1
        _dirty(lib).apply(b[1:])
        (b * b).sum().backward()
        return b, a.grad

    assert _same(case)[0] == "ok"


@pytest.mark.parametrize("returned", ["x", "other"])
def test_mark_dirty_errors(returned: str) -> None:
    def case(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        return _dirty(lib, returned).apply(x if returned == "x" else x * 1)

    assert _same(case)[0] == "RuntimeError"


def _two_outputs(lib: Any, materialize: bool, calls: list) -> type:
    def forward(ctx: Any, x: Any) -> Any:
        ctx.set_materialize_grads(materialize)
        i = x.argmax()
        ctx.mark_non_differentiable(i)
        return x * 2, x * 3, i

    def backward(ctx: Any, g1: Any, g2: Any, gi: Any) -> Any:
        calls.append([None if g is None else g.tolist() for g in (g1, g2, gi)])
        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)

    return _fn(lib, forward, backward)


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("use", ["first", "both"])
def test_one_backward_call_sees_every_output_grad(materialize: bool, use: str) -> None:
    def case(lib: Any) -> Any:
        calls: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y1, y2, i = _two_outputs(lib, materialize, calls).apply(x)
        (y1.sum() + (y2.sum() if use == "both" else 0)).backward()
        return calls, x.grad, i.requires_grad, i

    assert _same(case)[0] == "ok"


def test_needs_input_grad() -> None:
    def case(lib: Any) -> Any:
        seen: list = []

        def forward(ctx: Any, x: Any, y: Any, k: float) -> Any:
            seen.append(ctx.needs_input_grad)
            return x * y * k

        def backward(ctx: Any, g: Any) -> Any:
            seen.append(ctx.needs_input_grad)
            return g, None, None

        fn = _fn(lib, forward, backward)
        fn.apply(lib.ones(2, requires_grad=True), lib.ones(2), 2.0).sum().backward()
        with lib.no_grad():
            fn.apply(lib.ones(2, requires_grad=True), lib.ones(2), 2.0)
        return seen

    assert _same(case)[0] == "ok"


@pytest.mark.parametrize("n", [1, 3])
def test_wrong_number_of_gradients(n: int) -> None:
    def case(lib: Any) -> Any:
        def backward(ctx: Any, g: Any) -> Any:
            return (g,) * n

        fn = _fn(lib, lambda ctx, x, y: x * y, backward)
        fn.apply(lib.ones(2, requires_grad=True), lib.ones(2)).sum().backward()

    assert _same(case)[0] == "RuntimeError"


def _saving(lib: Any) -> type:
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x

    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 2 * g * x

    return _fn(lib, forward, backward)


@pytest.mark.parametrize("how", ["node", "twice", "retained"])
def test_saved_tensors_after_they_were_freed(how: str) -> None:
    def case(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = _saving(lib).apply(x)
        y.sum().backward(retain_graph=how == "retained")
        if how == "node":
            return y.grad_fn.saved_tensors
        y.sum().backward()
        return x.grad

    _same(case)


def test_once_differentiable() -> None:
    def case(lib: Any) -> Any:
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * g * x

        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        once = lib.autograd.function.once_differentiable
        fn = _fn(lib, forward, once(backward))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x)
        g0 = lib.ones(2, requires_grad=True)
        (g,) = lib.autograd.grad(y, x, g0, create_graph=True)
        out = [g, g.requires_grad]
        try:
            g.sum().backward()
        except RuntimeError as e:
            out.append(str(e))
        return out

    got = _same(case)
    assert got[1][-1].startswith("trying to differentiate twice")


def test_requires_grad_false_on_a_non_leaf() -> None:
    def case(lib: Any) -> Any:
        a = lib.ones(2, requires_grad=True)
        b = a * 2
        b.requires_grad = False

    assert _same(case)[0] == "RuntimeError"


def test_anomaly_flags() -> None:
    def case(lib: Any) -> Any:
        seen = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            x = lib.tensor([0.0], requires_grad=True)
            (x.sqrt() * 0).sum().backward()  # inf * 0: a NaN gradient, not checked
            seen.append(x.grad.isnan().tolist())
        seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        return seen

    assert _same(case)[0] == "ok"


def test_set_grad_enabled_forms() -> None:
    def case(lib: Any) -> Any:
        seen = []
        for switch in (
            lib.set_grad_enabled,
            lib.autograd.set_grad_enabled,
            lib.autograd.grad_mode.set_grad_enabled,
        ):
            switch(False)
            seen.append(lib.is_grad_enabled())
            switch(True)
            with switch(False):
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())
        seen.append(lib.autograd.grad_mode.inference_mode is lib.inference_mode)
        return seen

    assert _same(case)[0] == "ok"


def test_set_grad_enabled_refuses_a_non_bool() -> None:
    assert _same(lambda lib: lib.set_grad_enabled("yes"))[0] == "TypeError"
