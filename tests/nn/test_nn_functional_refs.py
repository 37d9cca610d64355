"""nn.functional against PyTorch's recorded outputs and gradients (float64, ``torch_refs.json``).

Each case runs twice: on ``cpu`` (the CPU backend's conv/pool/softmax kernels) and on
``cpu_prims`` (primitives only, so the frontend's decompositions run).
"""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from _nnrefs import REFS


@pytest.fixture(params=["cpu", "prims"])
def device(request: pytest.FixtureRequest) -> str:
    return "cpu" if request.param == "cpu" else request.getfixturevalue("cpu_prims")


@pytest.mark.parametrize("name", sorted(REFS))
def test_matches_torch(name: str, device: str) -> None:
    case = REFS[name]
    req = set(case["grads"])
    env = {}
    for k, v in case["inputs"].items():
        if k == "i":
            env[k] = ember.tensor(v, device=device)
        else:
            env[k] = ember.tensor(v, dtype=ember.float64, device=device, requires_grad=k in req)
    previous = ember.get_default_device()
    ember.set_default_device(device)  # tensors the expression makes (targets, offsets) go there too
    try:
        out = eval(case["expr"], {"F": F, "lib": ember}, dict(env))
    finally:
        ember.set_default_device(previous)
    np.testing.assert_allclose(out.detach().cpu().numpy(), np.array(case["out"]), rtol=1e-9, atol=1e-10)
    (out * ember.tensor(case["g"], dtype=ember.float64, device=device)).sum().backward()
    for k, expected in case["grads"].items():
        got = env[k].grad.cpu().numpy()
        np.testing.assert_allclose(got, np.array(expected), rtol=1e-9, atol=1e-10, err_msg=f"grad of {k}")
