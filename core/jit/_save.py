"""``ember.jit.save`` / ``ember.jit.load``: a scripted module as a checkpoint plus class paths.

ember saves no code. The file is an ``ember.save`` archive (PyTorch's zip layout) of plain data:
the module tree (each module's importable class path, its plain attributes, the names of its
parameters, buffers and children), the ``state_dict``, the non-persistent buffers and
``_extra_files``. ``load`` reads it with ``weights_only=True`` (no code in the file runs), imports
each class by its path, accepts only ``ember.nn.Module`` subclasses, and rebuilds each module
as TorchScript does: from its saved attributes, without calling ``__init__`` (so no constructor
arguments are needed: ``nn.Sequential`` and modules whose arguments are not kept as attributes
load alike), then puts the saved tensors in place and returns the result scripted.

What a module may hold to be saved: parameters, buffers, submodules, and attributes that are
None, bool, int, float, str, bytes, a tensor, an ember dtype, a function of ember itself (as
``TransformerEncoderLayer.activation``), or lists, tuples and str-keyed dicts of these. Anything
else raises at save time, naming the attribute. Threat model: a crafted file cannot run code of
its own; it can name an installed module for ``load`` to import (as ``import x`` would) and
give wrong numbers or attributes.

Writing to a path is atomic (``ember.save`` uses ``ember._atomic_save``).
"""

from __future__ import annotations

import importlib
import os
import re
from collections import OrderedDict
from typing import Any

import ember
from ember._tensor import Tensor
from ember.backends import dtypes as D
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

from ._script import RecursiveScriptModule, ScriptFunction, ScriptModule, script

__all__ = ["load", "save"]

FORMAT = "ember.jit/1"
_INTERNAL = frozenset(Module().__dict__) | {"_script_cache", "_orig", "original_name"}
_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


# -- saving ----------------------------------------------------------------------------------
def _attr(value: Any, where: str) -> Any:
    """A plain-data form of an attribute, or TypeError naming it."""
    if value is None or type(value) in (bool, int, float, str, bytes):
        return value
    if isinstance(value, D.DType):
        return {"__dtype__": str(value).rsplit(".", 1)[-1]}
    if isinstance(value, Tensor):
        return {"__tensor__": value.detach()}
    if type(value) in (list, tuple):
        items = [_attr(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if type(value) is list else {"__tuple__": items}
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _attr(v, f"{where}[{k!r}]") for k, v in value.items()}}
    path = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    if callable(value) and path.startswith("ember.") and _PATH.match(path) and _resolve(path) is value:
        return {"__function__": path}
    raise TypeError(
        f"ember.jit.save: cannot save attribute {where} of type {type(value).__name__}: a scripted "
        "module is saved as data (tensors, submodules and plain values), with no code"
    )


def _class_path(m: Module, where: str) -> str:
    cls = type(m)
    path = f"{cls.__module__}.{cls.__qualname__}"
    if not _PATH.match(path) or _resolve(path) is not cls:
        raise RuntimeError(
            f"ember.jit.save: the class of {where} ({cls.__qualname__}) cannot be imported by its "
            f"path {path!r}; ember.jit.load imports it, so define it at a module's top level"
        )
    return path


def _node(m: Module, where: str, first: dict[int, str], prefix: str) -> dict[str, Any]:
    params: list[Any] = []
    for name, p in m._parameters.items():
        q = prefix + name
        if p is not None and id(p) in first:
            params.append([name, "tied", first[id(p)]])
        else:
            if p is not None:
                first[id(p)] = q
            params.append([name, None if p is None else bool(p.requires_grad), None])
    children = {}
    for name, c in m._modules.items():
        children[name] = None if c is None else _node(c, f"{where}.{name}", first, prefix + name + ".")
    attrs = {k: _attr(v, f"{where}.{k}") for k, v in m.__dict__.items() if k not in _INTERNAL}
    return {
        "class": _class_path(m, where),
        "training": bool(m.training),
        "attrs": attrs,
        "params": params,
        "buffers": [[k, b is not None] for k, b in m._buffers.items()],
        "non_persistent": sorted(m._non_persistent_buffers_set),
        "children": children,
    }


def _extra(extra: Any) -> dict[str, bytes]:
    out = {}
    for k, v in (extra or {}).items():
        out[str(k)] = v.encode() if isinstance(v, str) else bytes(v)
    return out


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Save a scripted module (``ember.jit.script(module)`` or a ``ScriptModule``) to a path or
    a binary file object; see the module docstring for what is written."""
    if isinstance(m, ScriptFunction):
        raise NotImplementedError(
            "ember.jit.save: a scripted function cannot be saved: ember saves no code, only a "
            "module's tensors and class path; save a scripted module instead"
        )
    if not isinstance(m, ScriptModule):
        raise AttributeError(  # noqa: TRY004 (PyTorch's type)
            f"'{type(m).__name__}' object has no attribute 'save' (ember.jit.save takes "
            "ember.jit.script(module); for a plain module use ember.save(module.state_dict(), f))"
        )
    root = m._orig if isinstance(m, RecursiveScriptModule) else m
    tree = _node(root, type(root).__name__, {}, "")
    buffers = {
        q: b
        for q, b in root.named_buffers()
        if q.rsplit(".", 1)[-1] in _owner(root, q)._non_persistent_buffers_set
    }
    payload = {
        "format": FORMAT,
        "scripted": isinstance(m, RecursiveScriptModule),
        "tree": tree,
        "state_dict": root.state_dict(),
        "non_persistent_buffers": buffers,
        "extra_files": _extra(_extra_files),
    }
    ember.save(payload, f)


def _owner(root: Module, qualified: str) -> Module:
    m = root
    for part in qualified.split(".")[:-1]:
        m = m._modules[part]
    return m


# -- loading ---------------------------------------------------------------------------------
def _resolve(path: str) -> Any:
    """The object at dotted ``path``: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


def _bad(label: str, why: str) -> RuntimeError:
    return RuntimeError(f"ember.jit.load: {label} is not a valid ember.jit.save archive: {why}")


def _module_class(path: Any, label: str) -> type[Module]:
    cls = _resolve(path) if isinstance(path, str) and _PATH.match(path) else None
    if not (isinstance(cls, type) and issubclass(cls, Module)):
        raise RuntimeError(  # noqa: TRY004 (a malformed archive: torch.jit.load's type)
            f"ember.jit.load: {label} names {path!r} as a module class, which is not an "
            "ember.nn.Module subclass; refusing to build it"
        )
    return cls


def _value(v: Any, label: str) -> Any:
    if isinstance(v, list):
        return [_value(x, label) for x in v]
    if not isinstance(v, dict):
        return v
    if "__tuple__" in v:
        return tuple(_value(x, label) for x in v["__tuple__"])
    if "__dict__" in v:
        return {k: _value(x, label) for k, x in v["__dict__"].items()}
    if "__tensor__" in v:
        if not isinstance(v["__tensor__"], Tensor):
            raise _bad(label, "a tensor attribute is not a tensor")
        return v["__tensor__"]
    if "__dtype__" in v:
        dt = getattr(D, str(v["__dtype__"]), None)
        if not isinstance(dt, D.DType):
            raise _bad(label, f"unknown dtype {v['__dtype__']!r}")
        return dt
    if "__function__" in v:
        path = v["__function__"]
        fn = (
            _resolve(path)
            if isinstance(path, str) and path.startswith("ember.") and _PATH.match(path)
            else None
        )
        if not callable(fn) or isinstance(fn, type):
            raise RuntimeError(f"ember.jit.load: {label} names {path!r}, which is not a function of ember")
        return fn
    raise _bad(label, "an attribute of unknown form")


def _build(
    node: Any, label: str, tensors: dict[str, Tensor], made: dict[str, Parameter], prefix: str
) -> Module:
    if not isinstance(node, dict):
        raise _bad(label, "a module entry is not a record")
    cls = _module_class(node.get("class"), label)
    m = cls.__new__(cls)
    Module.__init__(m)
    d = m.__dict__
    for k, v in node.get("attrs", {}).items():
        if not isinstance(k, str) or k.startswith("__") or k in _INTERNAL:
            raise _bad(label, f"attribute name {k!r} is not allowed")
        d[k] = _value(v, label)
    d["training"] = bool(node.get("training", True))
    for name, grad, tied in node.get("params", []):
        q = prefix + name
        if grad == "tied":
            if tied not in made:
                raise _bad(label, f"parameter {q} is tied to unknown {tied!r}")
            m._parameters[name] = made[tied]
        elif grad is None:
            m._parameters[name] = None
        else:
            if q not in tensors:
                raise _bad(label, f"parameter {q} has no tensor")
            p = made[q] = Parameter(tensors[q], requires_grad=bool(grad))
            m._parameters[name] = p
    for name, present in node.get("buffers", []):
        q = prefix + name
        if present and q not in tensors:
            raise _bad(label, f"buffer {q} has no tensor")
        m._buffers[name] = tensors[q] if present else None
    m._non_persistent_buffers_set.update(str(n) for n in node.get("non_persistent", []))
    for name, child in node.get("children", {}).items():
        m._modules[name] = None if child is None else _build(child, label, tensors, made, f"{prefix}{name}.")
    return m


def load(f: Any, map_location: Any = None, _extra_files: Any = None, _restore_shapes: bool = False) -> Any:
    """Load what ``ember.jit.save`` wrote: the module rebuilt from its classes, scripted.
    ``_extra_files`` (a dict of names) is filled with the saved files' bytes."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.exists(path):
            raise ValueError(f"The provided filename {path} does not exist")
        if os.path.isdir(path):
            raise ValueError(f"The provided filename {path} is a directory")
        label = repr(path)
    else:
        label = repr(getattr(f, "name", "<file object>"))
    payload = ember.load(f, map_location=map_location, weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise _bad(label, "no module recorded (a checkpoint from ember.save? load it with ember.load)")
    tensors: dict[str, Tensor] = OrderedDict(payload.get("state_dict", {}))
    tensors.update(payload.get("non_persistent_buffers", {}))
    if not all(isinstance(t, Tensor) for t in tensors.values()):
        raise _bad(label, "a state entry is not a tensor")
    try:
        root = _build(payload.get("tree"), label, tensors, {}, "")
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise _bad(label, f"a malformed module record ({type(e).__name__}: {e})") from None
    if _extra_files is not None:
        saved = payload.get("extra_files", {})
        for k in list(_extra_files):
            if k in saved:
                _extra_files[k] = saved[k]
    if isinstance(root, ScriptModule) and not payload.get("scripted", True):
        return root
    return script(root)
