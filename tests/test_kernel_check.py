"""The frontend's kernel-result checks (``ember._kernel_check``): off by default at no cost,
on they name the op, backend, expected and got shape/dtype of a wrong kernel result."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import ember
import numpy as np
import pytest
from conftest import _register
from ember import _tensor
from ember._kernel_check import kernel_checks_enabled, set_kernel_checks
from ember_cpu.kernels import KERNELS


def _flattening_matmul(a: Any, b: Any) -> Any:
    out = KERNELS["matmul"](a, b)
    return out.reshape(-1, out.shape[-1]) if out.ndim == 3 else out  # batch dims lost


def _float64_exp(x: Any) -> Any:
    return np.exp(x.astype(np.float64))


@pytest.fixture
def bad() -> Iterator[str]:
    was = kernel_checks_enabled()  # on for the whole run under EMBER_CHECK_KERNELS=1
    name = _register("cpu_bad_kernels", {**KERNELS, "matmul": _flattening_matmul, "exp": _float64_exp})
    yield name
    set_kernel_checks(was)
    ember.backends.unregister(name)


def test_off_by_default_wrap_runs_its_own_code() -> None:
    code = (
        "from ember import _tensor; from ember._kernel_check import kernel_checks_enabled as on; "
        "print(on(), _tensor.wrap.__code__ is _tensor._plain_wrap.__code__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "EMBER_CHECK_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_off_a_wrong_shape_goes_unnoticed(bad: str) -> None:
    set_kernel_checks(False)
    assert _tensor.wrap.__code__ is _tensor._plain_wrap.__code__ and not kernel_checks_enabled()
    a, b = ember.ones(2, 3, 4, device=bad), ember.ones(2, 4, 5, device=bad)
    assert (a @ b).shape == (2, 3, 5)  # what the frontend claims, not what the kernel returned


def test_on_a_wrong_shape_names_op_backend_expected_and_got(bad: str) -> None:
    a, b = ember.ones(2, 3, 4, device=bad), ember.ones(2, 4, 5, device=bad)
    set_kernel_checks(True)
    with pytest.raises(RuntimeError) as e:
        a @ b
    assert str(e.value) == (
        "matmul (in ember._ops.matmul._core): backend 'cpu_bad_kernels' returned shape (6, 5) and "
        "dtype float32, expected shape (2, 3, 5) and dtype float32 (kernel result check)"
    )
    assert (ember.ones(3, 4, device=bad) @ ember.ones(4, 5, device=bad)).shape == (3, 5)


def test_on_a_wrong_dtype_is_named(bad: str) -> None:
    set_kernel_checks(True)
    x = ember.zeros(3, device=bad)
    with pytest.raises(
        RuntimeError, match=r"exp \(in .*\): backend 'cpu_bad_kernels' returned shape \(3,\) "
    ):
        x.exp()
    set_kernel_checks(False)
    assert x.exp().dtype == ember.float32  # unchecked again


def test_on_the_cpu_backend_everyday_ops_pass(bad: str) -> None:
    set_kernel_checks(True)
    x = ember.arange(12.0).reshape(3, 4)
    y = (x.t() @ x).softmax(1).sum(0) + ember.randn(4)
    assert y.shape == (4,) and y.dtype == ember.float32
    set_kernel_checks(False)
    assert ember.backends.get("cpu").k.__class__ is dict  # plain lookups again when off


def test_environment_variable_turns_them_on() -> None:
    code = "from ember._kernel_check import kernel_checks_enabled as on; print(on())"
    env = dict(os.environ, EMBER_CHECK_KERNELS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
