"""``linalg.*_ex`` against PyTorch 2.13: per-matrix ``info`` (int32, the batch's shape; 0 on
success, else LAPACK's 1-based failing minor or zero pivot), the successful matrices' results,
and ``check_errors=True`` raising PyTorch's error type and message."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest

# not yet exported as ember.linalg.ldl_factor(_ex): core/linalg/__init__.py is the lead's to edit
from ember.linalg import ldl_factor, ldl_factor_ex

torch = pytest.importorskip("torch")

SINGULAR = [
    [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]],  # zero pivot at 3
    [[1.0, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[0.0, 0, 0], [0, 0, 0], [0, 0, 0]],  # zero pivot at 1
    [[2.0, 1, 0], [1, 3, 1], [0, 1, 4]],
]
NOT_PD = [
    [[4.0, 2, 0], [2, 1, 0], [0, 0, 1]],  # leading minor 2 singular
    [[1.0, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[1.0, 0, 0], [0, -1, 0], [0, 0, -1]],  # leading minor 2 negative
    [[4.0, 2, 2], [2, 5, 3], [2, 3, 6]],
    [[1.0, 0, 0], [0, 2, 0], [0, 0, -3]],  # fails at the last minor
]


def _check(e: Any, t: Any) -> None:
    """Same fields, dtypes and shapes; equal info; equal results where info is 0."""
    assert len(e) == len(t)
    e_info, t_info = e.info.numpy(), t.info.numpy()
    assert e.info.dtype == ember.int32 and e_info.shape == t_info.shape
    np.testing.assert_array_equal(e_info, t_info)
    first = t[0].detach().numpy()
    ok = t_info == 0
    if first.shape[: ok.ndim] == ok.shape:
        np.testing.assert_allclose(e[0].detach().numpy()[ok], first[ok], rtol=1e-6, atol=1e-6)


def _both(fn: Any, data: Any, *rest: Any, **kw: Any) -> tuple[Any, Any]:
    e = fn(ember)(ember.tensor(data), *(ember.tensor(r) for r in rest), **kw)
    t = fn(torch)(torch.tensor(data), *(torch.tensor(r) for r in rest), **kw)
    return e, t


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_ex_reports_the_first_failing_minor_per_matrix(upper: bool, dtype: str) -> None:
    e = ember.linalg.cholesky_ex(ember.tensor(NOT_PD).to(getattr(ember, dtype)), upper=upper)
    t = torch.linalg.cholesky_ex(torch.tensor(NOT_PD).to(getattr(torch, dtype)), upper=upper)
    assert t.info.tolist() == [2, 0, 2, 0, 3]
    _check(e, t)


def test_cholesky_ex_partial_factor_and_nan() -> None:
    """A failed matrix returns its partial factor (finished columns, the failing pivot in place)."""
    e, t = _both(lambda lib: lib.linalg.cholesky_ex, NOT_PD[0])
    assert e.info.ndim == 0 and int(e.info) == int(t.info) == 2
    np.testing.assert_allclose(e.L.numpy(), t.L.numpy())
    e, t = _both(lambda lib: lib.linalg.cholesky_ex, [[1.0, 0.0], [0.0, float("nan")]])
    assert int(e.info) == int(t.info) == 2


def test_inv_ex_and_lu_factor_ex_report_the_first_zero_pivot() -> None:
    for fn in (lambda lib: lib.linalg.inv_ex, lambda lib: lib.linalg.lu_factor_ex):
        e, t = _both(fn, SINGULAR)
        assert t.info.tolist() == [3, 0, 1, 0]
        _check(e, t)
    e, t = _both(lambda lib: lib.linalg.lu_factor_ex, SINGULAR)
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())


@pytest.mark.parametrize(
    ("b_shape", "left"),
    [((4, 3, 2), True), ((3,), True), ((2, 4, 3, 1), True), ((4, 2, 3), False)],
)
def test_solve_ex_info_has_as_batch_shape(b_shape: tuple, left: bool) -> None:
    e = ember.linalg.solve_ex(ember.tensor(SINGULAR), ember.ones(b_shape), left=left)
    t = torch.linalg.solve_ex(torch.tensor(SINGULAR), torch.ones(b_shape), left=left)
    assert e.result.shape == t.result.shape
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    ok = t.info.numpy() == 0
    if len(b_shape) == 4:
        np.testing.assert_allclose(e.result.numpy()[:, ok], t.result.numpy()[:, ok], rtol=1e-6)
    else:
        np.testing.assert_allclose(e.result.numpy()[ok], t.result.numpy()[ok], rtol=1e-6)


def test_success_gives_zero_info_of_the_batch_shape() -> None:
    spd = NOT_PD[3]
    for fn, data in [
        (lambda lib: lib.linalg.cholesky_ex, [spd, spd]),
        (lambda lib: lib.linalg.inv_ex, [spd]),
        (lambda lib: lib.linalg.lu_factor_ex, spd),
    ]:
        e, t = _both(fn, data, check_errors=True)
        _check(e, t)


CASES = [
    ("cholesky_ex", NOT_PD, ()),
    ("cholesky_ex", NOT_PD[2], ()),
    ("cholesky_ex", NOT_PD[2:3], ()),
    ("inv_ex", SINGULAR, ()),
    ("inv_ex", SINGULAR[0], ()),
    ("lu_factor_ex", SINGULAR, ()),
    ("lu_factor_ex", SINGULAR[2], ()),
    ("solve_ex", SINGULAR, ([1.0, 1.0, 1.0],)),
    ("solve_ex", SINGULAR[0], ([1.0, 1.0, 1.0],)),
]


@pytest.mark.parametrize(("name", "data", "rest"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_check_errors_raises_pytorchs_error(name: str, data: Any, rest: tuple) -> None:
    with pytest.raises(RuntimeError) as t_err:
        getattr(torch.linalg, name)(torch.tensor(data), *(torch.tensor(r) for r in rest), check_errors=True)
    with pytest.raises(RuntimeError) as e_err:
        getattr(ember.linalg, name)(ember.tensor(data), *(ember.tensor(r) for r in rest), check_errors=True)
    assert str(e_err.value) == str(t_err.value).replace("torch.", "ember.")
    t_is_linalg = isinstance(t_err.value, torch.linalg.LinAlgError)
    assert isinstance(e_err.value, ember.linalg.LinAlgError) == t_is_linalg


_RNG = np.random.default_rng(7)
_M = _RNG.standard_normal((6, 5, 5))
LDL_CASES = [
    np.array([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]]),  # 2x2 pivot with an interchange
    np.array([[4.0, 1, 2], [1, 5, 3], [2, 3, 6]]),  # 1x1 pivots only
    np.array([[1.0, 2], [2, 1]]),
    np.array([[0.0, 0, 1], [0, 0, 0], [1, 0, 0]]),
    np.zeros((3, 3)),  # D singular: info 1
    _M + _M.swapaxes(-1, -2),  # a batch of indefinite symmetric matrices
    _M,  # only the lower triangle is read
]


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("case", range(len(LDL_CASES)))
def test_ldl_factor_ex_matches_lapacks_sytrf(case: int, dtype: str, hermitian: bool) -> None:
    a = LDL_CASES[case].astype(dtype)
    if dtype == "complex128":
        a = a + 0.5j * np.random.default_rng(case).standard_normal(a.shape)
    t = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    e = ldl_factor_ex(ember.tensor(a), hermitian=hermitian)
    assert e.pivots.dtype == e.info.dtype == ember.int32
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), rtol=1e-9, atol=1e-12)


def test_ldl_factor_errors_as_pytorch() -> None:
    for bad in ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [1.0, 2.0]):
        with pytest.raises(RuntimeError) as t_err:
            torch.linalg.ldl_factor_ex(torch.tensor(bad))
        with pytest.raises(RuntimeError) as e_err:
            ldl_factor_ex(ember.tensor(bad))
        assert str(e_err.value) == str(t_err.value).replace("torch.", "ember.")
    with pytest.raises(RuntimeError, match=r"^ember\.linalg\.ldl_factor: Unknown error code: 1\.$"):
        ldl_factor(ember.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="torch.linalg.ldl_factor"):
        torch.linalg.ldl_factor(torch.zeros(2, 2, 2))  # PyTorch words it as an internal assert
