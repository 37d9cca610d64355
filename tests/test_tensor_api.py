"""The generated Tensor declarations (``core/_tensor_api.py``) are current, and declaring
them did not change the runtime class: Tensor keeps its slots (no ``__dict__``)."""

from __future__ import annotations

import ember
import pytest
from ember import _gen_api
from ember._tensor import Tensor


def test_generated_tensor_api_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    status = _gen_api.check()
    assert status == 0, capsys.readouterr().out


def test_every_bound_method_is_declared() -> None:
    text = _gen_api.OUT.read_text()
    for name in ("add_", "__add__", "sum", "masked_fill_", "T", "grad"):
        assert f"def {name}(" in text


def test_tensor_has_slots_and_no_dict() -> None:
    t = ember.ones(2)
    assert not hasattr(t, "__dict__")
    with pytest.raises(AttributeError):
        t.some_new_attribute = 1  # type: ignore[attr-defined]
    assert Tensor.__mro__ == (Tensor, object)


def test_requires_grad_is_read_and_set_through_the_slot() -> None:
    t = ember.ones(2)
    assert t.requires_grad is False
    t.requires_grad = True
    assert t.requires_grad is True and t.is_leaf


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            False,
            (
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            ),
        ),
        (True, "you can only change requires_grad flags of leaf variables."),
    ],
)
def test_requires_grad_cannot_change_on_a_non_leaf(value: bool, message: str) -> None:
    b = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        b.requires_grad = value
    assert str(e.value) == message
    assert b.requires_grad is True


def test_requires_grad_must_be_a_bool() -> None:
    t = ember.ones(2)
    with pytest.raises(RuntimeError, match="^requires_grad must be a bool$"):
        t.requires_grad = 1  # type: ignore[assignment]
    assert t.requires_grad is False


def test_only_float_and_complex_tensors_can_require_grad() -> None:
    t = ember.ones(2, dtype=ember.int64)
    with pytest.raises(
        RuntimeError, match="^only Tensors of floating point and complex dtype can require gradients$"
    ):
        t.requires_grad = True
    t.requires_grad = False  # allowed, as in PyTorch
    assert t.requires_grad is False


def test_namespace_check_names_a_missing_export_and_an_unlisted_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _gen_api.namespace_problems() == []

    def shiny(x: Tensor) -> Tensor:
        return x

    shiny.__module__ = "ember._ops.shiny"
    monkeypatch.setattr(ember, "__all__", [*ember.__all__, "no_such_op"])
    monkeypatch.setattr(ember, "shiny", shiny, raising=False)
    assert _gen_api.namespace_problems() == [
        "ember.__all__ names 'no_such_op', which ember lacks",
        "ember.shiny is a public function missing from ember.__all__",
    ]


def test_a_declaration_gives_function_aliases_methods_and_inplace_forms() -> None:
    from ember import _public

    table = _public.public(
        "fake_module",
        {
            "add": _public.op("plus", method=True, inplace=True),
            "inv": _public.op("inverse", function=False),
            "contig": _public.op(function=False, method=True),
            "t": _public.op(method=("t", "transpose_2d")),
        },
    )
    _public.REGISTRY.pop("fake_module")
    assert table["add"] == _public.Names(("add", "plus"), ("add", "plus"), ("add",))
    assert table["inv"] == _public.Names(("inverse",), (), ())
    assert table["contig"] == _public.Names((), ("contig",), ())
    assert table["t"] == _public.Names(("t",), ("t", "transpose_2d"), ())


def test_an_inplace_form_needs_its_method() -> None:
    from ember import _public

    with pytest.raises(ValueError, match="in-place forms"):
        _public.public("fake_module", {"f": _public.op(inplace=True)})


def test_declared_ops_are_in_the_namespace_and_on_tensor() -> None:
    import ember
    from ember import _public

    for module, table in _public.REGISTRY.items():
        for key, names in table.items():
            for n in names.ember:
                assert n in ember.__all__, f"{module}.{key}: ember.{n}"
            for m in names.methods:
                assert hasattr(ember.Tensor, m), f"{module}.{key}: Tensor.{m}"
            for m in names.inplace:
                assert hasattr(ember.Tensor, m + "_"), f"{module}.{key}: Tensor.{m}_"
    assert ember.subtract is ember.sub and ember.Tensor.subtract is ember.Tensor.sub
