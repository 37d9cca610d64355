"""Differential tests against PyTorch's CPU build. They run only in the ``torch-differential``
tox environment, which installs both ``torch`` and ``ember``; ember itself never imports torch,
and a missing torch here is an error, not a skip."""

import numpy as np
import pytest
import torch

import ember


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    torch.manual_seed(0)
    ember.manual_seed(0)
