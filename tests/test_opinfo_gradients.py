"""Every differentiable public op passes gradcheck (and gradgradcheck where PyTorch has
double backward) on float64; every public callable is in the table or says why not."""

from __future__ import annotations

import pytest
from ember.autograd import gradcheck, gradgradcheck
from opinfo import DUNDERS, KNOWN_BROKEN, NOT_DIFFERENTIABLE, TABLE, public_ops, uncovered
from opinfo.table_spec import Entry


def _param(e: Entry, *, second: bool = False) -> object:
    """The entry as a test id; a KNOWN_BROKEN entry is a strict xfail (it fails once fixed)."""
    why = KNOWN_BROKEN.get(f"{e.id}/gradgrad" if second else e.id)
    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
    return pytest.param(e, id=e.id, marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in TABLE])
def test_gradcheck(entry: Entry) -> None:
    assert gradcheck(entry.func(), entry.inputs(), eps=entry.eps, atol=entry.atol, rtol=entry.rtol)


@pytest.mark.parametrize("entry", [_param(e, second=True) for e in TABLE if e.gradgrad])
def test_gradgradcheck(entry: Entry) -> None:
    assert gradgradcheck(entry.func(), entry.inputs(), eps=entry.eps, atol=entry.atol, rtol=entry.rtol)


def test_every_public_op_is_listed_once() -> None:
    """A new public op without an entry (or a reason it has none) fails here, by name."""
    missing = uncovered()
    assert not missing, f"public ops in neither the gradient table nor NOT_DIFFERENTIABLE: {missing}"
    both = sorted({e.name for e in TABLE} & set(NOT_DIFFERENTIABLE))
    assert not both, f"ops both in the gradient table and in NOT_DIFFERENTIABLE: {both}"
    stray = sorted(({e.name for e in TABLE} | set(NOT_DIFFERENTIABLE)) - set(public_ops()) - DUNDERS)
    assert not stray, f"table names that are not public ember callables: {stray}"
    assert all(r.isidentifier() and "_" not in r for r in NOT_DIFFERENTIABLE.values())
    unknown = sorted({k.split("/")[0] for k in KNOWN_BROKEN} - {e.id for e in TABLE})
    assert not unknown, f"KNOWN_BROKEN names no table entry: {unknown}"
