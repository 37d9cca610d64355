"""pluggy hook specifications a backend plugin implements.

A plugin is the object an ``ember.backends`` entry point names (usually a module). It
implements ``ember_backend`` for the backend it provides; any plugin may implement
``ember_register_kernels`` to add kernels, including fused composites, to a backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

__all__ = ["ember_backend", "ember_register_kernels", "hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("ember")
hookimpl = pluggy.HookimplMarker("ember")


@hookspec(firstresult=True)
def ember_backend() -> Any:
    """Return this plugin's Backend object (see ``ember.backends.Backend``).

    Must be cheap and must not touch hardware: availability is asked later through
    ``Backend.unavailable_reason``.
    """


@hookspec
def ember_register_kernels(backend: str, register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Register kernels for backend ``backend``: call ``register(op_name, kernel)``.

    ``op_name`` must be a name of ``ember.backends.ops.ALL_OPS``; an unknown name is a
    ContractError at load time. Called once per backend when it is first loaded.
    """
