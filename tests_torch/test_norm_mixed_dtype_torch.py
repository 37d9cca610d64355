"""Norms of half-precision inputs with float32 parameters (mixed precision's usual layout), the
mixed-dtype errors, and instance norm's running statistics, against PyTorch's CPU build."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)


def _w(T: Any, dtype: str, n: int) -> Any:
    return T.arange(n, dtype=getattr(T, dtype)) * 0.5 + 1


NORMS: dict[str, Callable[[Any, Any, str], Any]] = {
    "layer_norm": lambda T, x, wd: T.nn.functional.layer_norm(x, (5,), _w(T, wd, 5), _w(T, wd, 5) - 1),
    "batch_norm_train": lambda T, x, wd: T.nn.functional.batch_norm(
        x, _w(T, wd, 3) * 0, _w(T, wd, 3), _w(T, wd, 3), _w(T, wd, 3), training=True
    ),
    "batch_norm_eval": lambda T, x, wd: T.nn.functional.batch_norm(
        x, _w(T, wd, 3) * 0.1, _w(T, wd, 3), _w(T, wd, 3), _w(T, wd, 3), training=False
    ),
    "group_norm": lambda T, x, wd: T.nn.functional.group_norm(x, 3, _w(T, wd, 3), _w(T, wd, 3)),
    "instance_norm": lambda T, x, wd: T.nn.functional.instance_norm(
        x, _w(T, wd, 3) * 0, _w(T, wd, 3), _w(T, wd, 3), _w(T, wd, 3)
    ),
    "rms_norm": lambda T, x, wd: T.nn.functional.rms_norm(x, (5,), _w(T, wd, 5)),
}


def _run(T: Any, name: str, xd: str, wd: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that rms_norm's mixed dtypes are not fused
        return NORMS[name](T, T.tensor(X).to(getattr(T, xd)), wd)


@pytest.mark.parametrize("name", list(NORMS))
@pytest.mark.parametrize("xd", ["bfloat16", "float16"])
def test_half_input_with_float32_parameters_is_bit_exact(name: str, xd: str) -> None:
    ref, got = _run(torch, name, xd, "float32"), _run(ember, name, xd, "float32")
    assert got.dtype.name == xd == str(ref.dtype).split(".")[1]
    np.testing.assert_array_equal(got.float().numpy(), ref.float().numpy())


@pytest.mark.parametrize("name", [n for n in NORMS if n != "rms_norm"])
@pytest.mark.parametrize(
    ("xd", "wd"),
    [("float32", "bfloat16"), ("float32", "float64"), ("bfloat16", "float16"), ("float64", "float32")],
)
def test_other_mixes_raise_pytorchs_error(name: str, xd: str, wd: str) -> None:
    with pytest.raises(RuntimeError) as ref:
        _run(torch, name, xd, wd)
    with pytest.raises(RuntimeError) as got:
        _run(ember, name, xd, wd)
    assert str(got.value) == str(ref.value)


def test_mixed_backward_gives_each_gradient_its_own_dtype() -> None:
    grads = []
    for T in (torch, ember):
        x = T.tensor(X).to(T.bfloat16).requires_grad_()
        w = _w(T, "float32", 5).requires_grad_()
        T.nn.functional.layer_norm(x, (5,), w).sum().backward()
        grads.append((x.grad, w.grad))
    for ref, got in zip(grads[0], grads[1]):
        assert got.dtype.name == str(ref.dtype).split(".")[1]
        np.testing.assert_allclose(got.float().numpy(), ref.float().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_statistics(use_input_stats: bool) -> None:
    res = []
    for T in (torch, ember):
        rm, rv = T.zeros(3) + 0.5, T.ones(3) * 2
        out = T.nn.functional.instance_norm(
            T.tensor(X), rm, rv, use_input_stats=use_input_stats, momentum=0.3
        )
        res.append((out.numpy(), rm.numpy(), rv.numpy()))
    for ref, got in zip(res[0], res[1]):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_instance_norm_module_tracks_running_stats_and_uses_them_in_eval() -> None:
    res = []
    for T in (torch, ember):
        m = T.nn.InstanceNorm1d(3, track_running_stats=True, affine=True)
        m(T.tensor(X))
        m.eval()
        res.append((m(T.tensor(X)).detach().numpy(), m.running_mean.numpy(), m.running_var.numpy()))
    for ref, got in zip(res[0], res[1]):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_instance_norm_without_running_stats_in_eval_mode_raises() -> None:
    msg = "Expected running_mean and running_var to be defined when use_input_stats is false"
    for T in (torch, ember):
        with pytest.raises(RuntimeError, match=msg):
            T.nn.functional.instance_norm(T.tensor(X), use_input_stats=False)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")])
def test_matrix_norm_of_half_precision(dtype: str, ord: Any) -> None:
    res = []
    for T in (torch, ember):
        x = T.tensor(X).to(getattr(T, dtype))
        try:
            res.append(T.linalg.matrix_norm(x, ord=ord))
        except RuntimeError as e:
            res.append(str(e))
    if isinstance(res[0], str):
        assert res[1] == res[0]
    else:
        assert res[1].dtype.name == dtype
        np.testing.assert_array_equal(res[1].float().numpy(), res[0].float().numpy())
