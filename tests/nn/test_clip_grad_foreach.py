"""clip_grad_norm_ with ``foreach`` (the default) takes each (device, dtype) group's norms in
one ``norm_foreach`` kernel call and scales the group with one ``mul_foreach`` call, giving the
numbers of the per-gradient path; layer_norm is one kernel call forward and one backward."""

from __future__ import annotations

from collections import Counter
from typing import Any

import ember
import pytest
from ember._dispatch import DispatchMode
from ember.backends import graph


class Count(DispatchMode):
    def __init__(self) -> None:
        self.ops: Counter[str] = Counter()

    def __ember_dispatch__(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict) -> Any:
        self.ops[op] += 1
        return run(*args, **kwargs)


@pytest.fixture
def fused_mul(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mul_foreach`` declared a writing kernel (the contract's table), so clipping uses it."""
    monkeypatch.setattr(graph, "WRITES_FIRST", graph.WRITES_FIRST | {"mul_foreach"})


def _params(dtype: Any = ember.float64, device: Any = None) -> list[ember.Tensor]:
    """Gradients (3, 4) and (12,): norms 5 and 12, total 13. The kernel counts take ``cpu``
    (whose backend has the kernels) under any ``--ember-test-backend``."""
    kw = {"dtype": dtype, "device": device}
    ps = [ember.zeros(2, requires_grad=True, **kw), ember.zeros(1, requires_grad=True, **kw)]
    ps[0].grad = ember.tensor([3.0, 4.0], **kw)
    ps[1].grad = ember.tensor([12.0], **kw)
    return ps


@pytest.mark.usefixtures("fused_mul")
def test_one_norm_call_per_group_and_one_scaling_call() -> None:
    ps = _params(device="cpu")
    with Count() as c:
        total = ember.nn.utils.clip_grad_norm_(ps, 6.5)
    assert total.item() == 13.0
    assert c.ops["norm_foreach"] == 2  # the group's norms, then the norm of those
    assert c.ops["mul_foreach"] == 1
    coef = 6.5 / (13.0 + 1e-6)
    assert ps[0].grad.tolist() == [3.0 * coef, 4.0 * coef]
    assert ps[1].grad.tolist() == [12.0 * coef]


@pytest.mark.usefixtures("fused_mul")
def test_foreach_false_takes_one_norm_per_gradient_with_the_same_numbers() -> None:
    a, b = _params(device="cpu"), _params()
    with Count() as c:
        ember.nn.utils.clip_grad_norm_(a, 6.5, foreach=False)
    assert c.ops["norm_foreach"] == 1 and c.ops["mul_foreach"] == 0  # the total's norm only
    ember.nn.utils.clip_grad_norm_(b, 6.5)
    for p, q in zip(a, b):
        assert p.grad.tolist() == q.grad.tolist()


@pytest.mark.usefixtures("fused_mul")
def test_two_dtypes_are_two_groups_and_the_total_promotes() -> None:
    ps = [ember.zeros(2, device="cpu", requires_grad=True), ember.zeros(1, dtype=ember.float64, device="cpu")]
    ps[1].requires_grad_()
    ps[0].grad = ember.tensor([3.0, 4.0], dtype=ember.float32, device="cpu")
    ps[1].grad = ember.tensor([12.0], dtype=ember.float64, device="cpu")
    with Count() as c:
        total = ember.nn.utils.clip_grad_norm_(ps, 1e9)
    assert total.dtype == ember.float64 and total.item() == 13.0
    assert c.ops["norm_foreach"] == 3 and c.ops["mul_foreach"] == 2
    assert ps[0].grad.tolist() == [3.0, 4.0]  # coefficient clamped to 1


@pytest.mark.usefixtures("fused_mul")
def test_the_scaling_bumps_each_gradients_version() -> None:
    ps = _params()
    before = [p.grad._version for p in ps]
    ember.nn.utils.clip_grad_norm_(ps, 1.0)
    assert [p.grad._version for p in ps] == [v + 1 for v in before]


@pytest.mark.parametrize(
    ("ord", "want"), [(1.0, 19.0), (float("inf"), 12.0), (float("-inf"), 3.0), (0.0, 2.0)]
)
@pytest.mark.parametrize("foreach", [None, False])
def test_other_orders(ord: float, want: float, foreach: Any) -> None:
    assert ember.nn.utils.get_total_norm([p.grad for p in _params()], ord, foreach=foreach).item() == want


def test_infinity_norm_of_an_empty_gradient_is_pytorchs_error() -> None:
    g = [ember.ones(2), ember.zeros(0)]
    with pytest.raises(
        RuntimeError, match="^_foreach_norm cannot compute the infinity norm on an empty tensor"
    ):
        ember.nn.utils.get_total_norm(g, float("inf"))


def test_layer_norm_is_one_kernel_call_each_way() -> None:
    x = ember.randn(4, 3, 8, device="cpu", requires_grad=True)
    w, b = ember.ones(8, device="cpu", requires_grad=True), ember.randn(8, device="cpu", requires_grad=True)
    with Count() as c:
        y = ember.nn.functional.layer_norm(x, (8,), w, b)
    assert c.ops["layer_norm"] == 1 and sum(c.ops.values()) == 1
    assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
    with Count() as c:
        y.backward(ember.ones(4, 3, 8, device="cpu"))
    assert c.ops["layer_norm_backward"] == 1
    assert c.ops["mean"] == 0 and c.ops["sum"] == 0  # no reductions outside the kernel
    # a constant gradient under a unit weight: none for the input, one per row (4*3) for the bias
    assert x.grad.abs().max().item() < 1e-5
    assert b.grad.tolist() == [12.0] * 8
