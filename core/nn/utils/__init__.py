"""``ember.nn.utils``: gradient clipping, flat parameter vectors, parametrizations, weight and spectral norm."""

from __future__ import annotations

from . import parametrizations, parametrize, rnn
from ._norm_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]
