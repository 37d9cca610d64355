"""Tensor methods of the ops beyond ``_methods``' core table, merged into its tables."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from . import complex as CX
from . import convert as C
from . import diagonal as DG
from . import distances as DS
from . import indexing_scatter as IS
from . import pointwise_binary as PB
from . import pointwise_numeric as PN
from . import pointwise_special as PS
from . import pointwise_unary as PU
from . import products as PR
from . import reduction as RD
from . import reduction_scan as RS
from . import search as SR
from . import shape as SH
from . import sort as SO
from . import statistics as ST
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
    "fliplr": SH.fliplr,
    "flipud": SH.flipud,
    "roll": SH.roll,
    "rot90": SH.rot90,
    "repeat": SH.repeat,
    "repeat_interleave": SH.repeat_interleave,
    "tile": SH.tile,
    "broadcast_to": SH.broadcast_to,
    "tensor_split": SH.tensor_split,
    "diagonal": DG.diagonal,
    "diag": DG.diag,
    "diag_embed": DG.diag_embed,
    "tril": DG.tril,
    "triu": DG.triu,
    "unfold": SH.unfold,
    # indexing
    "take": IS.take,
    "take_along_dim": IS.take_along_dim,
    "index_add": IS.index_add,
    "index_copy": IS.index_copy,
    "index_fill": IS.index_fill,
    "index_reduce": IS.index_reduce,
    "masked_select": IS.masked_select,
    "masked_scatter": IS.masked_scatter,
    "argwhere": IS.argwhere,
    "scatter_reduce": IS.scatter_reduce,
    # math
    "atan2": PS.atan2,
    "arctan2": PS.atan2,
    "hypot": PS.hypot,
    "fmod": PS.fmod,
    "float_power": PS.float_power,
    "fmax": PS.fmax,
    "fmin": PS.fmin,
    "copysign": PS.copysign,
    "logaddexp": PS.logaddexp,
    "logaddexp2": PS.logaddexp2,
    "xlogy": PS.xlogy,
    "lerp": PS.lerp,
    "addcmul": PS.addcmul,
    "addcdiv": PS.addcdiv,
    "bitwise_left_shift": PS.bitwise_left_shift,
    "bitwise_right_shift": PS.bitwise_right_shift,
    "isclose": PN.isclose,
    "allclose": PN.allclose,
    "equal": PN.equal,
    "sinh": PS.sinh,
    "cosh": PS.cosh,
    "asinh": PS.asinh,
    "acosh": PS.acosh,
    "atanh": PS.atanh,
    "arcsinh": PS.asinh,
    "arccosh": PS.acosh,
    "arctanh": PS.atanh,
    "asin": PS.asin,
    "acos": PS.acos,
    "atan": PS.atan,
    "arcsin": PS.asin,
    "arccos": PS.acos,
    "arctan": PS.atan,
    "erfc": PS.erfc,
    "erfinv": PS.erfinv,
    "lgamma": PS.lgamma,
    "digamma": PS.digamma,
    "polygamma": _swap(PS.polygamma),
    "frac": PN.frac,
    "nan_to_num": PN.nan_to_num,
    "isneginf": PN.isneginf,
    "isposinf": PN.isposinf,
    "signbit": PS.signbit,
    "sgn": PN.sgn,
    # reductions, scans, counting
    "logsumexp": RD.logsumexp,
    "nansum": RD.nansum,
    "nanmean": RD.nanmean,
    "median": SO.median,
    "nanmedian": SO.nanmedian,
    "mode": SO.mode,
    "quantile": SO.quantile,
    "nanquantile": SO.nanquantile,
    "kthvalue": SO.kthvalue,
    "cumprod": RS.cumprod,
    "cummax": RS.cummax,
    "cummin": RS.cummin,
    "logcumsumexp": RS.logcumsumexp,
    "count_nonzero": RD.count_nonzero,
    "aminmax": RD.aminmax,
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
    "ravel": SH.ravel,
    "hsplit": SH.hsplit,
    "vsplit": SH.vsplit,
    "dsplit": SH.dsplit,
    "narrow_copy": SH.narrow_copy,
    "select_scatter": IS.select_scatter,
    "slice_scatter": IS.slice_scatter,
    "diagonal_scatter": DG.diagonal_scatter,
    "isreal": CX.isreal,
    "histogram": ST.histogram,
    "cov": ST.cov,
    "corrcoef": ST.corrcoef,
    "renorm": DS.renorm,
    "heaviside": PN.heaviside,
    "gcd": PN.gcd,
    "lcm": PN.lcm,
    "deg2rad": PN.deg2rad,
    "rad2deg": PN.rad2deg,
    "frexp": PN.frexp,
    "ldexp": PN.ldexp,
    "nextafter": PN.nextafter,
    "clamp_min": PN.clamp_min,
    "clamp_max": PN.clamp_max,
    "sinc": PN.sinc,
    "logit": PN.logit,
    "i0": PN.i0,
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
    "adjoint": CX.adjoint,
    "diagflat": DG.diagflat,
    "fix": PU.fix,
    "greater": PB.greater,
    "greater_equal": PB.greater_equal,
    "less": PB.less,
    "less_equal": PB.less_equal,
    "not_equal": PB.not_equal,
    "is_conj": CX.is_conj,
    "is_neg": CX.is_neg,
    "is_nonzero": C.is_nonzero,
    "is_same_size": SH.is_same_size,
    "put": IS.put,
    "resolve_conj": CX.resolve_conj,
    "resolve_neg": CX.resolve_neg,
    "mvlgamma": _mvlgamma,
    "nonzero_static": SR.nonzero_static,
    "absolute": _absolute,
    "positive": _positive,
    "sum_to_size": RD.sum_to_size,
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
    "__lshift__": PS.bitwise_left_shift,
    "__rlshift__": _swap(PS.bitwise_left_shift),
    "__rshift__": PS.bitwise_right_shift,
    "__rrshift__": _swap(PS.bitwise_right_shift),
    "__ilshift__": C.inplace(PS.bitwise_left_shift),
    "__irshift__": C.inplace(PS.bitwise_right_shift),
}


def _mH(self: Tensor) -> Tensor:
    return CX.conj_physical(self.transpose(-2, -1))


def _H(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return CX.conj_physical(self.T)


PROPERTIES: dict[str, Any] = {
    "real": property(CX.real),
    "imag": property(CX.imag),
    "mH": property(_mH),
    "H": property(_H),
}
