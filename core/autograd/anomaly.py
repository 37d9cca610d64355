"""Anomaly mode: name the forward op whose backward produced NaN."""

from __future__ import annotations

from typing import Any

__all__ = ["check", "detect_anomaly", "is_anomaly_enabled", "set_detect_anomaly"]

_state = {"on": False}


def is_anomaly_enabled() -> bool:
    return _state["on"]


class set_detect_anomaly:
    """Turn anomaly detection on or off (also a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _state["on"]
        _state["on"] = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _state["on"] = self.prev


class detect_anomaly(set_detect_anomaly):
    """``with ember.autograd.detect_anomaly(): loss.backward()`` raises at the first NaN gradient."""

    def __init__(self, check_nan: bool = True) -> None:
        super().__init__(True, check_nan)


def check(node: Any, grads: tuple) -> None:
    """Raise if any gradient ``node`` returned contains NaN."""
    for i, g in enumerate(grads):
        if g is not None and hasattr(g, "isnan") and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
