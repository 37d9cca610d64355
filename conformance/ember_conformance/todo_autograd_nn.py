"""TODO — checks the suite does not run yet, because autograd and nn are not written.

Nothing here is a test and nothing is faked: the list is printed in every report under
"Not yet in the suite" so a green run is not mistaken for more than it proves. When
autograd lands, each entry becomes a record field (``grad_order`` is already on every
OpCase) or a module of its own.
"""

from __future__ import annotations

__all__ = ["PENDING"]

PENDING = [
    (
        "gradients: first-order gradient of every differentiable op against finite differences in float64 "
        "(records' grad_order=1), through the backend's kernels"
    ),
    "second-order: a create_graph=True case (e.g. tanh, mul, matmul) against float64 finite differences",
    "in-place + autograd: the version counter refuses a backward that reads a tensor modified in place",
    "nn: Linear/Conv2d/LayerNorm forward and backward against the CPU backend",
    "training: a small MLP trained for a fixed number of steps must converge to the CPU backend's loss",
]
