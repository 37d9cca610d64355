"""``torch.X_copy``: each view op X, returning a new tensor instead of a view."""

from __future__ import annotations

from typing import Any

from .._public import op, public
from .._tensor import Tensor
from . import diagonal as DG
from . import shape as SX
from . import views as V

PUBLIC = public(
    __name__,
    {
        "alias_copy": op(),
        "as_strided_copy": op(),
        "detach_copy": op(),
        "diagonal_copy": op(),
        "expand_copy": op(),
        "permute_copy": op(),
        "select_copy": op(),
        "split_copy": op(),
        "squeeze_copy": op(),
        "t_copy": op(),
        "transpose_copy": op(),
        "unbind_copy": op(),
        "unfold_copy": op(),
        "unsqueeze_copy": op(),
        "view_copy": op(),
    },
)
__all__ = [*PUBLIC]


def _alias(input: Tensor) -> Tensor:
    return V.view(input, input._shape)


def _copy_of(view: Any) -> Any:
    def op(*args: Any, **kwargs: Any) -> Any:
        out = view(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(t.clone() for t in out)
        return out.clone()

    op.__name__ = view.__name__ + "_copy"
    return op


# ``torch.X_copy``: the view op X, as a new tensor.
alias_copy = _copy_of(_alias)


as_strided_copy = _copy_of(V.as_strided)

detach_copy = _copy_of(V.detach)

diagonal_copy = _copy_of(DG.diagonal)

expand_copy = _copy_of(V.expand)

permute_copy = _copy_of(V.permute)

select_copy = _copy_of(V.select)

split_copy = _copy_of(V.split)

squeeze_copy = _copy_of(V.squeeze)

t_copy = _copy_of(V.t)

transpose_copy = _copy_of(V.transpose)

unbind_copy = _copy_of(V.unbind)

unfold_copy = _copy_of(SX.unfold)

unsqueeze_copy = _copy_of(V.unsqueeze)

view_copy = _copy_of(V.view)
