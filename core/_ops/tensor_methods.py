"""Tensor methods of the ops beyond ``_methods``' core table, merged into its tables."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from . import complex as CX
from . import convert as C
from . import pointwise_special as PS
from . import shape as SH
from .pointwise_unary import abs as _abs
from .pointwise_unary import positive

__all__ = ["INPLACE_METHODS", "METHODS", "OPERATORS", "PROPERTIES"]


def _swap(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    return method


def _flip_method(self: Tensor, *dims: Any) -> Tensor:
    return SH.flip(self, *dims)


def _special(name: str) -> Any:
    def method(self: Tensor, *args: Any) -> Any:
        from .. import special  # cycle: ember.special

        return getattr(special, name)(self, *args)

    method.__name__ = name
    return method


def _absolute(self: Tensor) -> Tensor:
    return _abs(self)


def _positive(self: Tensor) -> Tensor:
    return positive(self)


def _mvlgamma(self: Tensor, p: int) -> Tensor:
    from ..special import multigammaln  # cycle: ember.special

    return multigammaln(self, p)


def _linalg(name: str) -> Any:
    """A Tensor method calling ``ember.linalg`` function ``name`` (imported at call time)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        from ..linalg import _compat, _decomp, _lu, _misc  # cycle: ember.linalg._compat

        for mod in (_compat, _decomp, _misc, _lu):
            fn = getattr(mod, name, None)
            if fn is not None:
                return fn(self, *args, **kwargs)
        raise AttributeError(name)

    method.__name__ = name
    return method


METHODS: dict[str, Any] = {
    # shape
    "flip": _flip_method,
    # indexing
    # math
    "polygamma": _swap(PS.polygamma),
    # reductions, scans, counting
    # products
    # complex
    # more shape and math
    # linear algebra (the older Tensor methods)
    "det": _linalg("det"),
    "logdet": _linalg("logdet"),
    "slogdet": _linalg("slogdet"),
    "inverse": _linalg("inv"),
    "pinverse": _linalg("pinverse"),
    "matrix_power": _linalg("matrix_power"),
    "matrix_exp": _linalg("matrix_exp"),
    "cholesky": _linalg("old_cholesky"),
    "svd": _linalg("old_svd"),
    "qr": _linalg("old_qr"),
    "cholesky_solve": _linalg("cholesky_solve"),
    "cholesky_inverse": _linalg("cholesky_inverse"),
    "triangular_solve": _linalg("triangular_solve"),
    "lu": _linalg("old_lu"),
    "lu_solve": _linalg("old_lu_solve"),
    "orgqr": _linalg("householder_product"),
    # alternative spellings
    "mvlgamma": _mvlgamma,
    "absolute": _absolute,
    "positive": _positive,
    "igamma": _special("gammainc"),
    "igammac": _special("gammaincc"),
}

INPLACE_METHODS = [
    "mvlgamma",
    "absolute",
]

OPERATORS: dict[str, Any] = {
    "__lshift__": PS.bitwise_left_shift,
    "__rlshift__": _swap(PS.bitwise_left_shift),
    "__rshift__": PS.bitwise_right_shift,
    "__rrshift__": _swap(PS.bitwise_right_shift),
    "__ilshift__": C.inplace(PS.bitwise_left_shift),
    "__irshift__": C.inplace(PS.bitwise_right_shift),
}


def _mH(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
        )
    return CX.conj_physical(self.transpose(-2, -1))


def _H(self: Tensor) -> Tensor:
    if self.ndim != 2:
        more = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.{more}"
        )
    return CX.conj_physical(self.T)


PROPERTIES: dict[str, Any] = {
    "real": property(CX.real),
    "imag": property(CX.imag),
    "mH": property(_mH),
    "H": property(_H),
}
