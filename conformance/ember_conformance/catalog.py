"""``CASES``: every op's record, keyed by op name (the contract test checks it covers ALL_OPS)."""

from __future__ import annotations

from . import (
    cases_attention,
    cases_composite,
    cases_foreach,
    cases_index,
    cases_layout,
    cases_linalg,
    cases_math,
    cases_nn,
    cases_optim,
    cases_recurrent,
    cases_reduce,
    cases_relu_backward,
    cases_softmax_backward,
    cases_special,
)
from .records import OpCase

__all__ = ["CASES"]

CASES: dict[str, OpCase] = {
    r.op: r
    for module in (
        cases_layout,
        cases_math,
        cases_reduce,
        cases_composite,
        cases_index,
        cases_nn,
        cases_optim,
        cases_foreach,
        cases_recurrent,
        cases_attention,
        cases_softmax_backward,
        cases_relu_backward,
        cases_special,
        cases_linalg,
    )
    for r in module.RECORDS
}
