"""Differential tests against PyTorch's CPU build. They run only in the ``torch-differential``
tox environment, which installs both ``torch`` and ``ember``; ember itself never imports torch.
Each test module imports torch at its top, so a missing torch there is an error, not a skip.

This conftest must import without torch: pytest loads the conftest of every ``test*`` folder
beside the directory it starts in, so every run from the repository root (the conformance
environments') reads this file too.
"""

import importlib

import ember
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    importlib.import_module("torch").manual_seed(0)
    ember.manual_seed(0)
