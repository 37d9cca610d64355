"""Each op's public names, declared once, in a table at the top of the module that defines it::

    PUBLIC = public(__name__, {
        "add": op(method=True, inplace=True),         # ember.add, Tensor.add, Tensor.add_
        "sub": op("subtract", method=True, inplace=True),
        "contiguous": op(function=False, method=True),  # a Tensor method only
    })
    __all__ = [*PUBLIC]

From these tables come ember's namespace and ``__all__`` (``_namespace.py``, written by
``python -m ember._gen_api``, which CI checks is current), the Tensor methods
(``_methods.bind``) and their type declarations (``_tensor_api.py``). Methods that are not
ops (``float()``, ``new_zeros``, ``backward``, operators, properties) are declared in
``_methods.py``'s tables instead.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["REGISTRY", "Names", "Spec", "op", "public"]


class Spec(NamedTuple):
    """What ``op(...)`` says, before the table's key is known."""

    aliases: tuple[str, ...]
    method: bool | tuple[str, ...]
    inplace: bool | tuple[str, ...]
    function: bool


class Names(NamedTuple):
    """An op's public names: in ember's namespace, as Tensor methods, as in-place methods."""

    ember: tuple[str, ...]
    methods: tuple[str, ...]
    inplace: tuple[str, ...]  # the methods whose ``<name>_`` form is bound


def op(
    *aliases: str,
    method: bool | tuple[str, ...] = False,
    inplace: bool | tuple[str, ...] = False,
    function: bool = True,
) -> Spec:
    """The public names of one op: ``ember.<key>`` (unless ``function=False``) and
    ``ember.<alias>``; Tensor methods of the same names (``method=True``) or exactly the ones
    given; the in-place ``Tensor.<key>_`` (``inplace=True``) or ``<m>_`` for each ``m`` given."""
    return Spec(aliases, method, inplace, function)


# module name -> {attribute: its public names}, filled as the op modules import.
REGISTRY: dict[str, dict[str, Names]] = {}


def public(module: str, table: dict[str, Spec]) -> dict[str, Names]:
    """Register ``module``'s table (resolving each spec against its key) and return it."""
    out = {}
    for key, spec in table.items():
        names = ((key,) if spec.function else ()) + spec.aliases
        if spec.method is True:
            methods = names if spec.function else (key, *spec.aliases)
        else:
            methods = spec.method or ()
        if spec.inplace is True:
            inplace: tuple[str, ...] = (key,)
        else:
            inplace = spec.inplace or ()
        if set(inplace) - set(methods):
            raise ValueError(f"{module}.{key}: in-place forms {inplace} need the methods {methods}")
        out[key] = Names(names, methods, inplace)
    REGISTRY[module] = out
    return out
