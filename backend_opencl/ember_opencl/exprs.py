"""The elementwise op table: ember op name -> OpenCL C expression per dtype kind.

Kinds are 'f' (float32/float64), 'i' (integers) and 'b' (bool stored as uchar 0/1). In an
expression ``a``, ``b`` (and ``c``, the condition of ``where``) are the loaded operands;
``${T}`` is the operands' C type and ``${U}`` the wrapping unsigned type (dtypes.utype).
Each expression reproduces the NumPy ufunc the CPU backend calls, including its corner
cases: NaN-propagating max/min that return ``b`` on ties, Python's floor rule for
floordiv/remainder (npy_divmod), sign(-0.0) == 0. Ops with a helper function put it in
``HELPERS``; helpers that detect bad input (integer division by zero, negative integer
powers) take ``int *bad`` and the kernel reports it through the device's error flag.
"""

from __future__ import annotations

from ember.backends import DTYPES_BY_NAME, DType

from .dtypes import kind

__all__ = ["BINARY_EXPRS", "COMPARE_EXPRS", "FLAGGED", "HELPERS", "UNARY_EXPRS", "cast_expr"]

_FLOAT_ONLY = {
    "exp": "exp(a)",
    "log": "log(a)",
    "sqrt": "sqrt(a)",
    "sin": "sin(a)",
    "cos": "cos(a)",
    "tanh": "tanh(a)",
    "erf": "erf(a)",
    "log1p": "log1p(a)",
    "expm1": "expm1(a)",
    "sigmoid": "(${T})1 / ((${T})1 + exp(-a))",
}
_ROUNDING = {"floor": "floor(a)", "ceil": "ceil(a)", "trunc": "trunc(a)", "round": "rint(a)"}

UNARY_EXPRS: dict[str, dict[str, str]] = {
    "neg": {"f": "-a", "i": "(${T})(-(${U})a)", "b": "a"},
    "abs": {"f": "fabs(a)", "i": "(${T})abs(a)", "b": "a"},
    "sign": {"f": "(${T})((a > 0) - (a < 0))", "i": "(${T})((a > 0) - (a < 0))", "b": "a"},
    "clone": {"f": "a", "i": "a", "b": "a"},
    **{op: {"f": e} for op, e in _FLOAT_ONLY.items()},
    **{op: {"f": e, "i": "a", "b": "a"} for op, e in _ROUNDING.items()},
}

BINARY_EXPRS: dict[str, dict[str, str]] = {
    "add": {"f": "a + b", "i": "(${T})((${U})a + (${U})b)", "b": "a | b"},
    "sub": {"f": "a - b", "i": "(${T})((${U})a - (${U})b)", "b": "a ^ b"},
    "mul": {"f": "a * b", "i": "(${T})((${U})a * (${U})b)", "b": "a & b"},
    "div": {"f": "a / b"},
    "floordiv": {"f": "ember_floordiv(a, b)", "i": "ember_floordiv(a, b, &bad)"},
    "remainder": {"f": "ember_remainder(a, b)", "i": "ember_remainder(a, b, &bad)"},
    "pow": {"f": "pow(a, b)", "i": "ember_pow(a, b)", "b": "a | !b"},
    "maximum": {"f": "(isnan(a) || a > b) ? a : b", "i": "a > b ? a : b", "b": "a | b"},
    "minimum": {"f": "(isnan(a) || a < b) ? a : b", "i": "a < b ? a : b", "b": "a & b"},
    "bitwise_and": {"i": "a & b", "b": "a & b"},
    "bitwise_or": {"i": "a | b", "b": "a | b"},
    "bitwise_xor": {"i": "a ^ b", "b": "a ^ b"},
}

COMPARE_EXPRS: dict[str, str] = {"eq": "a == b", "lt": "a < b", "le": "a <= b"}

# npy_divmod: the quotient is snapped to an integer so that a == q*b + r holds closely.
EMBER_FDIVMOD_SRC = """
static ${T} ember_fdivmod(${T} a, ${T} b, ${T} *modulus)
{
    ${T} mod = fmod(a, b);
    if (b == 0) { *modulus = mod; return a / b; }
    ${T} div = (a - mod) / b;
    if (mod != 0) {
        if (isless(b, (${T})0) != isless(mod, (${T})0)) { mod += b; div -= 1; }
    } else {
        mod = copysign((${T})0, b);
    }
    ${T} fl;
    if (div != 0) {
        fl = floor(div);
        if (isgreater(div - fl, (${T})0.5)) fl += 1;
    } else {
        fl = copysign((${T})0, a / b);
    }
    *modulus = mod;
    return fl;
}
"""

EMBER_FFLOORDIV_SRC = (
    EMBER_FDIVMOD_SRC
    + """
static ${T} ember_floordiv(${T} a, ${T} b)
{
    ${T} mod;
    if (b == 0) return a / b;
    return ember_fdivmod(a, b, &mod);
}
"""
)

EMBER_FREMAINDER_SRC = (
    EMBER_FDIVMOD_SRC
    + """
static ${T} ember_remainder(${T} a, ${T} b)
{
    ${T} mod;
    if (b == 0) return fmod(a, b);
    ember_fdivmod(a, b, &mod);
    return mod;
}
"""
)

# Integer floor division by zero is an error (the CPU backend raises); MIN / -1 would
# trap on x86, so -1 is negated with wrapping instead of divided.
EMBER_IFLOORDIV_SRC = """
static ${T} ember_floordiv(${T} a, ${T} b, int *bad)
{
    if (b == 0) { *bad = 1; return 0; }
    if (b == -1) return (${T})(-(${U})a);
    ${T} q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
"""

EMBER_IREMAINDER_SRC = """
static ${T} ember_remainder(${T} a, ${T} b, int *bad)
{
    if (b == 0) { *bad = 1; return 0; }
    if (b == -1) return 0;
    ${T} r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
"""

# Square-and-multiply in the wrapping unsigned type, as NumPy's integer power loop does.
# A negative exponent truncates toward zero (1 for a == 1, +-1 for a == -1, else 0), the
# CPU backend's rule; a negative Python-scalar exponent is refused on the host instead.
EMBER_IPOW_SRC = """
static ${T} ember_pow(${T} a, ${T} b)
{
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    ${U} base = (${U})a, out = 1;
    ${T} e = b;
    while (e > 0) {
        if (e & 1) out *= base;
        base *= base;
        e >>= 1;
    }
    return (${T})out;
}
"""

HELPERS: dict[tuple[str, str], str] = {
    ("floordiv", "f"): EMBER_FFLOORDIV_SRC,
    ("remainder", "f"): EMBER_FREMAINDER_SRC,
    ("floordiv", "i"): EMBER_IFLOORDIV_SRC,
    ("remainder", "i"): EMBER_IREMAINDER_SRC,
    ("pow", "i"): EMBER_IPOW_SRC,
}

# (op, kind) whose kernels may set the error flag, with the exception the host raises.
FLAGGED: dict[tuple[str, str], str] = {
    ("floordiv", "i"): "ZeroDivisionError",
    ("remainder", "i"): "ZeroDivisionError",
}


_PART = {n: DTYPES_BY_NAME[p] for n, p in (("complex64", "float32"), ("complex128", "float64"))}


def cast_expr(src: DType, dst: DType) -> str:
    """PyTorch's conversion: to bool is != 0, float to integer truncates toward zero.

    Narrow integer targets go through int (as x86 compilers, hence NumPy, do), so values
    outside the target range wrap the same way on both backends.
    """
    if kind(src) == "c":
        if dst.name == "bool":
            return "a.x != 0 || a.y != 0"
        if kind(dst) == "c":
            return "convert_${OT}(a)"
        return cast_expr(_PART[src.name], dst).replace("a", "a.x")  # the real part
    if kind(dst) == "c":
        return "(${OT})((${OR})a, 0)"
    if dst.name == "bool":
        return "a != 0"
    if kind(src) == "f" and kind(dst) != "f":
        return "(${OT})(long)a" if dst.itemsize == 8 else "(${OT})(int)a"
    return "(${OT})a"
