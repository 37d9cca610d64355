"""Loads ``torch_refs.json`` (PyTorch's recorded outputs and gradients; see make_torch_refs.py)."""

from __future__ import annotations

import json
import os

with open(os.path.join(os.path.dirname(__file__), "torch_refs.json")) as _f:
    _DOC = json.load(_f)

REFS: dict = _DOC["refs"]
MODULE_REFS: dict = _DOC["modules"]
