"""Recurrent and attention layers against PyTorch's recorded outputs and gradients (float64).

The module's state_dict is loaded from the recording, so this also checks parameter names.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _nnrefs import MODULE_REFS
from ember import nn


@pytest.mark.parametrize("name", sorted(MODULE_REFS))
def test_module_matches_torch(name: str) -> None:
    case = MODULE_REFS[name]
    m = eval(case["ctor"], {"nn": nn}).double()
    state = {
        k: ember.tensor(v, dtype=ember.float64 if isinstance(_first(v), float) else None)
        for k, v in case["state"].items()
    }
    m.load_state_dict(state)
    env = {k: ember.tensor(v, dtype=ember.float64, requires_grad=True) for k, v in case["inputs"].items()}
    out = eval(case["call"], {"lib": ember, "m": m}, dict(env))
    np.testing.assert_allclose(out.detach().cpu().numpy(), np.array(case["out"]), rtol=1e-9, atol=1e-12)
    (out * ember.tensor(case["g"], dtype=ember.float64)).sum().backward()
    for k, expected in case["grads"].items():
        np.testing.assert_allclose(
            env[k].grad.cpu().numpy(), np.array(expected), rtol=1e-8, atol=1e-12, err_msg=k
        )
    params = dict(m.named_parameters())
    for k, expected in case["param_grads"].items():
        np.testing.assert_allclose(
            params[k].grad.cpu().numpy(), np.array(expected), rtol=1e-8, atol=1e-12, err_msg=k
        )


def _first(v: object) -> object:
    while isinstance(v, list):
        if not v:
            return 0.0
        v = v[0]
    return v
