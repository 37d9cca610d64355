"""``Embedding``: a lookup table of learnable rows."""

from __future__ import annotations

from typing import Any

from ..._creation import empty
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """Rows of ``weight`` (num_embeddings, embedding_dim) indexed by integer input; init N(0, 1).

    ``padding_idx``'s row starts at zero and receives no gradient.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(
                empty((num_embeddings, embedding_dim), device=device, dtype=dtype), not _freeze
            )
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s

    @classmethod
    def from_pretrained(
        cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None, **kwargs: Any
    ) -> Embedding:
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, _weight=embeddings, _freeze=freeze, **kwargs)


class EmbeddingBag(Module):
    """Sums, means or maxima over bags of embeddings, without materialising the per-index rows' bags."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            init.normal_(self.weight)
            if padding_idx is not None:
                with no_grad():
                    self.weight[padding_idx].fill_(0)
        else:
            self.weight = Parameter(_weight)

    def forward(
        self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None
    ) -> Tensor:
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, **kwargs: Any) -> EmbeddingBag:
        bag = cls(embeddings.shape[0], embeddings.shape[1], _weight=embeddings, **kwargs)
        bag.weight.requires_grad_(not freeze)
        return bag
