"""Tensor methods for the extended op surface, merged into ``_methods``' tables."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from . import aliases as AL
from . import complex as CX
from . import convert as C
from . import distances as DS
from . import index_extra as IX
from . import math_extra as MX
from . import math_more as MM
from . import products as PR
from . import reduce_extra as RX
from . import search as SR
from . import shape_extra as SX
from . import shape_more as SM
from . import statistics as ST

__all__ = ["INPLACE_METHODS", "METHODS", "OPERATORS", "PROPERTIES"]


def _swap(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    return method


def _flip_method(self: Tensor, *dims: Any) -> Tensor:
    return SX.flip(self, *dims)


def _special(name: str) -> Any:
    def method(self: Tensor, *args: Any) -> Any:
        from .. import special

        return getattr(special, name)(self, *args)

    method.__name__ = name
    return method


def _absolute(self: Tensor) -> Tensor:
    from .unary import abs as _abs

    return _abs(self)


def _positive(self: Tensor) -> Tensor:
    from .unary import positive

    return positive(self)


def _mvlgamma(self: Tensor, p: int) -> Tensor:
    from ..special import multigammaln

    return multigammaln(self, p)


def _linalg(name: str) -> Any:
    """A Tensor method calling ``ember.linalg`` function ``name`` (imported at call time)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        from ..linalg import _compat, _decomp, _lu, _misc

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
    "fliplr": SX.fliplr,
    "flipud": SX.flipud,
    "roll": SX.roll,
    "rot90": SX.rot90,
    "repeat": SX.repeat,
    "repeat_interleave": SX.repeat_interleave,
    "tile": SX.tile,
    "broadcast_to": SX.broadcast_to,
    "tensor_split": SX.tensor_split,
    "diagonal": SX.diagonal,
    "diag": SX.diag,
    "diag_embed": SX.diag_embed,
    "tril": SX.tril,
    "triu": SX.triu,
    "unfold": SX.unfold,
    # indexing
    "take": IX.take,
    "take_along_dim": IX.take_along_dim,
    "index_add": IX.index_add,
    "index_copy": IX.index_copy,
    "index_fill": IX.index_fill,
    "index_reduce": IX.index_reduce,
    "masked_select": IX.masked_select,
    "masked_scatter": IX.masked_scatter,
    "argwhere": IX.argwhere,
    "scatter_reduce": IX.scatter_reduce,
    # math
    "atan2": MX.atan2,
    "arctan2": MX.atan2,
    "hypot": MX.hypot,
    "fmod": MX.fmod,
    "float_power": MX.float_power,
    "fmax": MX.fmax,
    "fmin": MX.fmin,
    "copysign": MX.copysign,
    "logaddexp": MX.logaddexp,
    "logaddexp2": MX.logaddexp2,
    "xlogy": MX.xlogy,
    "lerp": MX.lerp,
    "addcmul": MX.addcmul,
    "addcdiv": MX.addcdiv,
    "bitwise_left_shift": MX.bitwise_left_shift,
    "bitwise_right_shift": MX.bitwise_right_shift,
    "isclose": MX.isclose,
    "allclose": MX.allclose,
    "equal": MX.equal,
    "sinh": MX.sinh,
    "cosh": MX.cosh,
    "asinh": MX.asinh,
    "acosh": MX.acosh,
    "atanh": MX.atanh,
    "arcsinh": MX.asinh,
    "arccosh": MX.acosh,
    "arctanh": MX.atanh,
    "asin": MX.asin,
    "acos": MX.acos,
    "atan": MX.atan,
    "arcsin": MX.asin,
    "arccos": MX.acos,
    "arctan": MX.atan,
    "erfc": MX.erfc,
    "erfinv": MX.erfinv,
    "lgamma": MX.lgamma,
    "digamma": MX.digamma,
    "polygamma": _swap(MX.polygamma),
    "frac": MX.frac,
    "nan_to_num": MX.nan_to_num,
    "isneginf": MX.isneginf,
    "isposinf": MX.isposinf,
    "signbit": MX.signbit,
    "sgn": MX.sgn,
    # reductions, scans, counting
    "logsumexp": RX.logsumexp,
    "nansum": RX.nansum,
    "nanmean": RX.nanmean,
    "median": RX.median,
    "nanmedian": RX.nanmedian,
    "mode": RX.mode,
    "quantile": RX.quantile,
    "nanquantile": RX.nanquantile,
    "kthvalue": RX.kthvalue,
    "cumprod": RX.cumprod,
    "cummax": RX.cummax,
    "cummin": RX.cummin,
    "logcumsumexp": RX.logcumsumexp,
    "count_nonzero": RX.count_nonzero,
    "aminmax": RX.aminmax,
    "unique": SR.unique,
    "unique_consecutive": SR.unique_consecutive,
    "bincount": SR.bincount,
    "histc": SR.histc,
    "norm": DS.norm,
    "dist": DS.dist,
    "diff": DS.diff,
    "trace": DS.trace,
    # products
    "vdot": PR.vdot,
    "inner": PR.inner,
    "outer": PR.outer,
    "ger": PR.outer,
    "addmm": PR.addmm,
    "addmv": PR.addmv,
    "addr": PR.addr,
    "baddbmm": PR.baddbmm,
    "addbmm": PR.addbmm,
    "kron": PR.kron,
    "cross": PR.cross,
    # complex
    "angle": CX.angle,
    "conj_physical": CX.conj_physical,
    # more shape and math
    "ravel": SM.ravel,
    "hsplit": SM.hsplit,
    "vsplit": SM.vsplit,
    "dsplit": SM.dsplit,
    "narrow_copy": SM.narrow_copy,
    "select_scatter": SM.select_scatter,
    "slice_scatter": SM.slice_scatter,
    "diagonal_scatter": SM.diagonal_scatter,
    "isreal": SM.isreal,
    "histogram": ST.histogram,
    "cov": ST.cov,
    "corrcoef": ST.corrcoef,
    "renorm": SM.renorm,
    "heaviside": MM.heaviside,
    "gcd": MM.gcd,
    "lcm": MM.lcm,
    "deg2rad": MM.deg2rad,
    "rad2deg": MM.rad2deg,
    "frexp": MM.frexp,
    "ldexp": MM.ldexp,
    "nextafter": MM.nextafter,
    "clamp_min": MM.clamp_min,
    "clamp_max": MM.clamp_max,
    "sinc": MM.sinc,
    "logit": MM.logit,
    "i0": MM.i0,
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
    "adjoint": AL.adjoint,
    "diagflat": AL.diagflat,
    "fix": AL.fix,
    "greater": AL.greater,
    "greater_equal": AL.greater_equal,
    "less": AL.less,
    "less_equal": AL.less_equal,
    "not_equal": AL.not_equal,
    "is_conj": AL.is_conj,
    "is_neg": AL.is_neg,
    "is_nonzero": AL.is_nonzero,
    "is_same_size": AL.is_same_size,
    "put": AL.put,
    "resolve_conj": AL.resolve_conj,
    "resolve_neg": AL.resolve_neg,
    "mvlgamma": _mvlgamma,
    "nonzero_static": AL.nonzero_static,
    "absolute": _absolute,
    "positive": _positive,
    "sum_to_size": AL.sum_to_size,
    "igamma": _special("gammainc"),
    "igammac": _special("gammaincc"),
}

INPLACE_METHODS = [
    "index_add",
    "index_copy",
    "index_fill",
    "masked_scatter",
    "scatter_reduce",
    "tril",
    "triu",
    "atan2",
    "hypot",
    "fmod",
    "copysign",
    "xlogy",
    "lerp",
    "addcmul",
    "addcdiv",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "asin",
    "acos",
    "atan",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "frac",
    "nan_to_num",
    "sgn",
    "cumprod",
    "addmm",
    "addmv",
    "addr",
    "baddbmm",
    "addbmm",
    "renorm",
    "heaviside",
    "gcd",
    "lcm",
    "deg2rad",
    "rad2deg",
    "ldexp",
    "nextafter",
    "clamp_min",
    "clamp_max",
    "sinc",
    "logit",
    "i0",
    "fix",
    "put",
    "mvlgamma",
    "index_reduce",
    "absolute",
]

OPERATORS: dict[str, Any] = {
    "__lshift__": MX.bitwise_left_shift,
    "__rlshift__": _swap(MX.bitwise_left_shift),
    "__rshift__": MX.bitwise_right_shift,
    "__rrshift__": _swap(MX.bitwise_right_shift),
    "__ilshift__": C.inplace(MX.bitwise_left_shift),
    "__irshift__": C.inplace(MX.bitwise_right_shift),
}


def _mH(self: Tensor) -> Tensor:
    return CX.conj_physical(self.transpose(-2, -1))  # type: ignore[attr-defined]


def _H(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return CX.conj_physical(self.T)  # type: ignore[attr-defined]


PROPERTIES: dict[str, Any] = {
    "real": property(CX.real),
    "imag": property(CX.imag),
    "mH": property(_mH),
    "H": property(_H),
}
