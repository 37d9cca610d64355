"""A graph's memory is released when the graph is dropped: a training loop does not grow."""

import gc
import tracemalloc

import ember
from ember.autograd.graph import Node


def _live_nodes() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, Node))


def _step(w: ember.Tensor, x: ember.Tensor, y: ember.Tensor) -> None:
    loss = (((x @ w).tanh() - y) ** 2).mean()
    loss.backward()
    with ember.no_grad():
        w -= 0.1 * w.grad
    w.grad = None


def test_training_loop_memory_does_not_grow_over_1000_steps():
    ember.manual_seed(0)
    x, y = ember.randn(32, 8), ember.randn(32, 4)
    w = ember.randn(8, 4, requires_grad=True)
    for _ in range(50):  # warm caches (kernel tables, broadcast shapes)
        _step(w, x, y)
    gc.collect()
    nodes_before = _live_nodes()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    for _ in range(1000):
        _step(w, x, y)
    gc.collect()
    grown, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert _live_nodes() <= nodes_before
    assert grown - base < 256 * 1024, f"memory grew by {grown - base} bytes over 1000 steps"


def test_saved_tensors_are_freed_after_backward():
    x = ember.randn(1000, requires_grad=True)
    y = (x.exp() * x).sum()
    node = y.grad_fn
    y.backward()
    mul = node.next_functions[0][0]
    assert mul._ctx is None  # released: the saved inputs can be collected
