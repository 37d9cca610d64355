"""Every bad call of ``_error_cases.CASES`` raises in ember what it raises in PyTorch 2.13: the
same exception type (or a subclass of it, so ``except`` clauses catch both) and the same message
with ``torch.`` read as ``ember.``.

Where a message cannot match word for word, the case names its normalisation in ``NORMALISE``
(applied to both libraries' outcomes, each written out, none blanket). A case ember does not
follow on purpose is in ``NOT_FOLLOWED`` with the reason and ember's exact outcome, which the
test asserts (and that PyTorch still differs, so a stale entry fails).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from typing import Any

import ember
import pytest
from _error_cases import CASES

torch = pytest.importorskip("torch")

# some bad calls warn before they raise (or, in PyTorch, instead); the outcome is what is compared
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# PyTorch's exception classes that are not builtins, and ember's class for each
_TYPE_ALIASES = {"_LinAlgError": "LinAlgError"}


def _outcome(lib: Any, case: Callable[[Any], Any]) -> tuple[tuple[str, ...], str]:
    """(the exception's class names, most derived first; its message) or ("OK", ...) for a
    result: a tensor's shape and dtype, else nothing."""
    try:
        result = case(lib)
    except Exception as error:  # noqa: BLE001 - the exception is the outcome compared
        names = tuple(c.__name__ for c in type(error).__mro__)
        return names, str(error).replace("torch.", "ember.")
    if hasattr(result, "shape") and hasattr(result, "dtype"):
        return ("OK",), f"{tuple(result.shape)} {str(result.dtype).replace('torch.', 'ember.')}"
    return ("OK",), ""


def _first_line(message: str) -> str:
    """PyTorch's "received an invalid combination of arguments" lists its overloads' signatures
    (out=, layout=, pin_memory=); ember's first line is PyTorch's, then points at its help."""
    return message.split("\n")[0]


def _first_two_lines(message: str) -> str:
    """A C++ error rethrown with its location and stack frames after the two lines that say it."""
    return "\n".join(message.split("\n")[:2])


_DEVICES = re.compile(r"^Expected one of .+ device type at start of device string: ")


def _device_types(message: str) -> str:
    """PyTorch enumerates its fixed list of device types; ember, the backends installed."""
    return _DEVICES.sub("Expected one of <device types> device type at start of device string: ", message)


NORMALISE: dict[str, Callable[[str], str]] = {
    "where of floats": _first_line,
    "clamp str min": _first_line,
    "pow str exponent": _first_line,
    "lerp str weight": _first_line,
    "isin str": _first_line,
    "masked_fill str": _first_line,
    "view float size": _first_line,
    "view dtype str": _first_line,
    "squeeze float dim": _first_line,
    "sum float dim (function)": _first_line,
    "sum str dim (function)": _first_line,
    "sum dtype str": _first_line,
    "mean float dim (function)": _first_line,
    "prod dtype str (function)": _first_line,
    "arange dtype str": _first_line,
    "linspace float steps": _first_line,
    "randint no size": _first_line,
    "unflatten two -1": _first_two_lines,
    "to unknown device": _device_types,
    "zeros unknown device": _device_types,
}


def _method_position(L: Any, call: str) -> Any:
    x = L.zeros(2, 3)
    return {
        "flatten": lambda: x.flatten(0.0),
        "unsqueeze": lambda: x.unsqueeze(0.5),
        "mul": lambda: x.mul("a"),
    }[call]()


# case: (why ember differs, ember's outcome as "ExceptionType: message")
NOT_FOLLOWED: dict[str, tuple[str, str, Callable[[Any], Any]]] = {
    "method form x.flatten(0.0)": (
        (
            "Tensor methods are the ember functions bound as they are, so a type error names the "
            "function form's position (the tensor is position 1); PyTorch's method form does not count self"
        ),
        "TypeError: flatten(): argument 'start_dim' (position 2) must be int, not float",
        lambda L: _method_position(L, "flatten"),
    ),
    "method form x.unsqueeze(0.5)": (
        "as for flatten: the function form's position",
        "TypeError: unsqueeze(): argument 'dim' (position 2) must be int, not float",
        lambda L: _method_position(L, "unsqueeze"),
    ),
    "method form x.mul('a')": (
        "as for flatten: the function form's position",
        "TypeError: mul(): argument 'other' (position 2) must be Tensor, not str",
        lambda L: _method_position(L, "mul"),
    ),
    "sum unexpected keyword": (
        (
            "ember's ops are Python functions: Python's own TypeError names the unknown keyword, "
            "where PyTorch's parser lists its overloads"
        ),
        "TypeError: sum() got an unexpected keyword argument 'axis_x'",
        lambda L: L.sum(L.zeros(2, 3), axis_x=0),
    ),
    "cumsum without dim": (
        "Python's own missing-argument wording (PyTorch's parser says 'arguments: \"dim\"')",
        "TypeError: cumsum() missing 1 required positional argument: 'dim'",
        lambda L: L.cumsum(L.zeros(2, 3)),
    ),
}


def _compare(case: str, expected: tuple, actual: tuple) -> None:
    norm = NORMALISE.get(case, lambda m: m)
    (want_names, want), (got_names, got) = expected, actual
    want_type = _TYPE_ALIASES.get(want_names[0], want_names[0])
    assert want_type in got_names, f"{case}: raised {got_names[0]}: {got}; PyTorch: {want_names[0]}: {want}"
    assert norm(got) == norm(want), case


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_call_matches_pytorch(case: str) -> None:
    _compare(case, _outcome(torch, CASES[case]), _outcome(ember, CASES[case]))


@pytest.mark.parametrize("case", sorted(NOT_FOLLOWED))
def test_not_followed_cases_keep_embers_outcome(case: str) -> None:
    _why, said, call = NOT_FOLLOWED[case]
    names, message = _outcome(ember, call)
    assert f"{_builtin(names)}: {message}" == said
    theirs = _outcome(torch, call)
    assert f"{_builtin(theirs[0])}: {theirs[1]}" != said, f"{case}: PyTorch now agrees; move it to CASES"


def _builtin(names: tuple[str, ...]) -> str:
    """The most derived builtin exception class: what an ``except`` clause names."""
    return next(n for n in names if isinstance(getattr(builtins, n, None), type))


def test_cases_do_not_overlap() -> None:
    assert not set(NOT_FOLLOWED) & set(CASES)
    assert set(NORMALISE) <= set(CASES)
