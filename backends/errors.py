"""Errors shared by the contract, the frontend and backends.

Each subclasses the builtin PyTorch raises in the same situation, so ``except RuntimeError``
in user code keeps working.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BackendUnavailableError",
    "ContractError",
    "FallbackError",
    "UnsupportedDTypeError",
]


class BackendError(RuntimeError):
    """A backend could not be loaded or used."""


class BackendUnavailableError(BackendError):
    """The backend is installed but its hardware or driver is missing."""


class ContractError(BackendError):
    """A plugin broke the contract: wrong version, unknown op name, duplicate name."""


class FallbackError(NotImplementedError):
    """An op has no kernel on a backend and the fallback policy is ``error``."""


class UnsupportedDTypeError(TypeError):
    """A backend was asked for a dtype it does not declare."""
