"""CTC loss: values and gradients against PyTorch's recorded results, gradcheck, errors."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from _param_cases import CASES, CTC_TARGETS, CTC_X
from _param_refs import REFS
from ember import nn
from ember.autograd import gradcheck

NAMES = [n for n in REFS if n.startswith("ctc")]


@pytest.mark.parametrize("name", NAMES)
def test_matches_pytorch(name: str) -> None:
    got = CASES[name](ember)
    assert set(got) == set(REFS[name])
    tol = 2e-6 if name.endswith("float32") else 1e-9
    for key, (values, shape) in REFS[name].items():
        assert list(got[key].shape) == shape, (name, key)
        np.testing.assert_allclose(got[key].ravel(), values, rtol=tol, atol=tol, err_msg=f"{name}.{key}")


def test_float32_stays_float32() -> None:
    x = ember.tensor(CTC_X, dtype=ember.float32).log_softmax(2)
    loss = F.ctc_loss(x, ember.tensor(CTC_TARGETS), (6, 5, 4), (3, 2, 1))
    assert loss.dtype == ember.float32


def test_gradcheck_float64() -> None:
    targets = ember.tensor(CTC_TARGETS)

    def f(x: ember.Tensor) -> ember.Tensor:
        return F.ctc_loss(x.log_softmax(2), targets, (6, 5, 4), (3, 2, 1), reduction="sum")

    x = ember.tensor(CTC_X, requires_grad=True)
    assert gradcheck(f, (x,))


def test_module_repr_and_defaults() -> None:
    m = nn.CTCLoss()
    assert (m.blank, m.reduction, m.zero_infinity) == (0, "mean", False)
    assert repr(m) == "CTCLoss()"


def test_errors() -> None:
    x = ember.tensor(CTC_X).log_softmax(2)
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 6"):
        F.ctc_loss(x, ember.tensor(CTC_TARGETS), (7, 5, 4), (3, 2, 1))
    with pytest.raises(ValueError, match="nope is not a valid value for reduction"):
        F.ctc_loss(x, ember.tensor(CTC_TARGETS), (6, 5, 4), (3, 2, 1), reduction="nope")
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(x, ember.tensor(CTC_TARGETS), (6, 5), (3, 2, 1))
    with pytest.raises(RuntimeError, match="target_lengths must be of size batch_size"):
        F.ctc_loss(x, ember.tensor(CTC_TARGETS), (6, 5, 4), (3, 2))


def test_zero_length_input() -> None:
    x = ember.tensor(CTC_X).log_softmax(2)
    loss = F.ctc_loss(x, ember.tensor(CTC_TARGETS), (0, 5, 4), (3, 2, 1), reduction="none")
    assert loss[0].item() == float("inf")
    np.testing.assert_allclose(loss[1:].cpu().numpy(), REFS["ctc_none"]["loss"][0][1:], rtol=1e-12)
