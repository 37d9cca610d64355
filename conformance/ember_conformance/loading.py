"""Load the backend under test, the same way in pytest and in the worker process."""

from __future__ import annotations

import importlib

import ember  # noqa: F401 - the frontend declares its composites' decompositions on import
import ember.backends as eb
from ember.backends import LoadedBackend

__all__ = ["load_backend", "load_plugin_object"]


def load_plugin_object(spec: str) -> object:
    """Import ``module:attribute`` (``--ember-plugin``), e.g. ``my_backend:plugin``."""
    module, _, attr = spec.partition(":")
    obj: object = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


def load_backend(name: str, plugin: str | None) -> LoadedBackend:
    """``ember.backends.get(name)``, registering ``plugin`` first when given.

    Raises what the registry raises: unknown name, a plugin that failed to import or broke
    the contract, an unavailable backend.
    """
    if plugin:
        eb.register(name, load_plugin_object(plugin), dist=f"--ember-plugin {plugin}")
    return eb.get(name)
