"""``default_collate``: a list of samples becomes one batch (tensors stacked along a new dim 0)."""

from __future__ import annotations

from collections import abc
from typing import Any

import numpy as np

from ..._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_BAD_TYPE = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch: list[Any]) -> Any:
    """Stack tensors and arrays, turn numbers into tensors, recurse into dicts and sequences.

    Example: ``default_collate([(ember.ones(2), 0), (ember.zeros(2), 1)])`` gives
    ``[tensor of shape (2, 2), tensor([0, 1])]``.
    """
    from ..._creation import as_tensor, tensor
    from ..._ops.join import stack
    from ...backends import dtypes as D

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "OSUV":
        return stack([as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic) and elem.dtype.kind not in "OSUV":
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=D.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, abc.Mapping):
        return _rebuild_like(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        try:
            return type(elem)(columns)  # type: ignore[call-arg]
        except TypeError:
            return columns
    raise TypeError(_BAD_TYPE.format(type(elem)))


def _rebuild_like(elem: Any, values: dict[Any, Any]) -> Any:
    if type(elem) is dict:
        return values
    try:
        return type(elem)(values)
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """Without batching: NumPy arrays become tensors, containers are converted recursively."""
    from ..._creation import as_tensor

    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind not in "OSUV":
        return as_tensor(data)
    if isinstance(data, abc.Mapping):
        return _rebuild_like(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data
