"""Devices and backends: parsing, the second logical CPU device, mixing errors, fallback policy."""

from __future__ import annotations

import warnings

import ember
import pytest
from ember.backends import FallbackError


def test_device_parsing_and_repr():
    cases = [
        ("cpu", "device(type='cpu')", "cpu", None),
        ("cpu:1", "device(type='cpu', index=1)", "cpu", 1),
        ("cuda:1", "device(type='cuda', index=1)", "cuda", 1),
        ("opencl:0", "device(type='opencl', index=0)", "opencl", 0),
    ]
    for s, r, typ, idx in cases:
        d = ember.device(s)
        assert repr(d) == r and str(d) == s and d.type == typ and d.index == idx
    assert str(ember.device("cuda", 2)) == "cuda:2"
    assert ember.device("cpu") == ember.device("cpu") and ember.device("cpu", 0) != ember.device("cpu")
    for bad in ("cuda:x", "cpu:-1", ""):
        with pytest.raises(RuntimeError, match="Invalid device string: '"):
            ember.device(bad)


def test_unknown_device_type_raises_naming_it():
    with pytest.raises(
        RuntimeError, match="Expected one of cpu, .* device type at start of device string: foo$"
    ):
        ember.zeros(1, device="foo")
    with pytest.raises(RuntimeError, match="Invalid device 'cpu:2': backend 'cpu' has 2 device"):
        ember.zeros(1, device="cpu:2")


def test_cpu1_is_a_second_logical_device():
    t = ember.arange(3.0, device="cpu:1")
    assert str(t.device) == "cpu:1" and t.device.index == 1 and t.is_cpu
    assert (t * 2).device == t.device and t.sum().device == t.device
    assert t.to("cpu").device == ember.device("cpu")
    assert ember.zeros(2, device=ember.device("cpu", 1)).device == t.device


@pytest.mark.parametrize(
    "op, name",
    [
        (lambda a, b: a + b, "add"),
        (lambda a, b: a * b, "mul"),
        (lambda a, b: a @ b, "matmul"),
        (lambda a, b: ember.where(a > 0, a, b), "where"),
        (lambda a, b: ember.cat([a, b]), "cat"),
    ],
)
def test_mixing_cpu_and_cpu1_raises_naming_both(op, name):
    a, b = ember.ones(2), ember.ones(2, device="cpu:1")
    with pytest.raises(RuntimeError) as e:
        op(a, b)
    msg = str(e.value)
    assert msg.startswith("Expected all tensors to be on the same device, but found at least two devices, ")
    assert "cpu and cpu:1" in msg or "cpu:1 and cpu" in msg


def test_default_device(monkeypatch):
    assert ember.get_default_device() == ember.device("cpu")
    try:
        ember.set_default_device("cpu:1")
        assert ember.zeros(1).device == ember.device("cpu", 1)
        assert ember.tensor([1.0]).device == ember.device("cpu", 1)
    finally:
        ember.set_default_device("cpu")
    assert ember.zeros(1).device == ember.device("cpu")


def test_backends_available_and_accelerator():
    names = ember.backends.available()
    assert "cpu" in names
    rows = {r["name"]: r for r in ember.backends.status()}
    assert rows["cpu"]["available"] and rows["cpu"]["distribution"] == "ember-cpu"
    assert all(rows[n]["available"] for n in names)
    assert all(r["reason"] for r in rows.values() if not r["available"])  # unavailable says why
    others = [n for n in names if n != "cpu"]
    assert ember.accelerator.is_available() == bool(others)
    acc = ember.accelerator.current_accelerator()
    assert (acc is None) == (not others)
    if acc is not None:
        assert acc.type in others and ember.accelerator.device_count() >= 1


def test_in_process_backend_registration_errors(cpu_prims):
    with pytest.raises(ember.backends.ContractError, match="backend name 'cpu' is already registered"):
        ember.backends.register("cpu", object())
    assert cpu_prims in ember.backends.available()


def test_fallback_policy_error_names_op_and_backend(backend_without, fallback_policy):
    dev = backend_without("cumsum")
    fallback_policy("error")
    t = ember.arange(4.0, device=dev)
    with pytest.raises(FallbackError) as e:
        t.cumsum(0)
    assert "cumsum" in str(e.value) and f"backend '{dev}'" in str(e.value) and "'error'" in str(e.value)
    assert isinstance(e.value, NotImplementedError)  # FallbackError subclasses what PyTorch raises
    assert ember.backends.get_fallback_policy() == "error"


def test_fallback_policy_warn_once_per_op_and_result_is_right(backend_without, fallback_policy):
    dev = backend_without("cumsum")
    fallback_policy("warn")
    t = ember.arange(4.0, device=dev)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = t.cumsum(0)
        second = (t * 2).cumsum(0)
    msgs = [str(w.message) for w in caught if "cumsum" in str(w.message)]
    assert len(msgs) == 1 and f"backend '{dev}'" in msgs[0]
    assert first.device.type == dev and first.tolist() == [0.0, 1.0, 3.0, 6.0]
    assert second.tolist() == [0.0, 2.0, 6.0, 12.0]


def test_fallback_policy_silent_and_bad_policy(backend_without, fallback_policy):
    dev = backend_without("erf")
    fallback_policy("silent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = ember.tensor([0.5], device=dev).erf()
    assert r.tolist() == pytest.approx([0.5204998778], abs=1e-7)
    with pytest.raises(ValueError, match="fallback policy must be one of"):
        ember.backends.set_fallback_policy("sometimes")


def test_view_primitives_cannot_fall_back(backend_without):
    dev = backend_without("permute")
    t = ember.zeros(2, 3, device=dev)
    with pytest.raises(
        FallbackError, match="permute: backend 'cpu_no_permute' has no kernel and this op cannot fall back"
    ):
        t.permute(1, 0)
