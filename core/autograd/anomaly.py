"""Anomaly mode: name the forward op whose backward produced NaN."""

from __future__ import annotations

from typing import Any

from .._public import op, public

PUBLIC = public(
    __name__,
    {
        "is_anomaly_check_nan_enabled": op(),
        "is_anomaly_enabled": op(),
    },
)
__all__ = [*PUBLIC, "check", "detect_anomaly", "set_detect_anomaly"]

_state = {"on": False, "check_nan": True}


def is_anomaly_enabled() -> bool:
    return _state["on"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode also raises at NaN gradients (``check_nan``; True by default, as in PyTorch)."""
    return _state["check_nan"]


class set_detect_anomaly:
    """Turn anomaly detection on or off (also a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_state["on"], _state["check_nan"])
        _state["on"], _state["check_nan"] = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _state["on"], _state["check_nan"] = self.prev


class detect_anomaly(set_detect_anomaly):
    """``with ember.autograd.detect_anomaly(): loss.backward()`` raises at the first NaN gradient."""

    def __init__(self, check_nan: bool = True) -> None:
        super().__init__(True, check_nan)


def check(node: Any, grads: tuple) -> None:
    """Raise if any gradient ``node`` returned contains NaN (unless ``check_nan`` is off)."""
    if not _state["check_nan"]:
        return
    for i, g in enumerate(grads):
        if g is not None and hasattr(g, "isnan") and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
