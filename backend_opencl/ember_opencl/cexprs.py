"""Complex elementwise math: complex64/complex128 as ``float2``/``double2`` (x real, y imaginary).

Each op reproduces the NumPy loop the CPU backend runs: ``*`` is the plain formula,
``/`` NumPy's scaled (Smith) division with its divide-by-zero rule, ``pow`` NumPy's
``npy_cpow`` (small integer exponents by repeated multiplication, else exp(b log a)), and
``abs`` is ``hypot`` (inf when either part is inf, even with a NaN). The transcendental
functions follow C99 Annex G where a part is zero, inf or NaN in the cases PyTorch and
NumPy users meet: exp/sin/cos/tanh keep a zero imaginary part exact (exp(x + 0j) is
exp(x) + 0j), exp(-inf + iy) is 0, sqrt of a zero keeps the imaginary part's sign and
sqrt(x + inf j) is inf + inf j. ``${T}`` is the vector type, ``${R}`` its part type.
"""

from __future__ import annotations

__all__ = ["COMPLEX_BINARY", "COMPLEX_COMPARE", "COMPLEX_SRC", "COMPLEX_UNARY"]

COMPLEX_SRC = """
static ${T} ember_cmul(${T} a, ${T} b)
{
    return (${T})(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

static ${T} ember_cdiv(${T} a, ${T} b)
{
    ${R} br = fabs(b.x), bi = fabs(b.y);
    if (br >= bi) {
        if (br == 0 && bi == 0) return (${T})(a.x / br, a.y / br);
        ${R} rat = b.y / b.x, scl = (${R})1 / (b.x + b.y * rat);
        return (${T})((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    ${R} rat = b.x / b.y, scl = (${R})1 / (b.y + b.x * rat);
    return (${T})((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}

static ${T} ember_cexp(${T} a)
{
    if (a.y == 0) return (${T})(exp(a.x), a.y);
    if (isinf(a.x) && a.x < 0) return (${T})(0, 0);
    if (isinf(a.x) && !isfinite(a.y)) return (${T})(a.x, NAN);
    ${R} e = exp(a.x);
    return (${T})(e * cos(a.y), e * sin(a.y));
}

static ${T} ember_clog(${T} a)
{
    return (${T})(log(hypot(a.x, a.y)), atan2(a.y, a.x));
}

static ${T} ember_csqrt(${T} a)
{
    if (a.x == 0 && a.y == 0) return (${T})(0, a.y);
    if (isinf(a.y)) return (${T})(INFINITY, a.y);
    if (isinf(a.x) && a.x < 0) return (${T})(fabs(a.y - a.y), copysign((${R})INFINITY, a.y));
    ${R} t = sqrt((fabs(a.x) + hypot(a.x, a.y)) * (${R})0.5);
    if (a.x >= 0) return (${T})(t, a.y / (t + t));
    return (${T})(fabs(a.y) / (t + t), copysign(t, a.y));
}

static ${T} ember_csin(${T} a)
{
    if (a.y == 0) return (${T})(sin(a.x), a.y);
    return (${T})(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y));
}

static ${T} ember_ccos(${T} a)
{
    if (a.y == 0) return (${T})(cos(a.x), -sin(a.x) * a.y);
    return (${T})(cos(a.x) * cosh(a.y), -(sin(a.x) * sinh(a.y)));
}

static ${T} ember_ctanh(${T} a)
{
    if (a.y == 0) return (${T})(tanh(a.x), a.y);
    if (fabs(a.x) > (${R})(sizeof(${R}) == 4 ? 9 : 22)) {
        ${R} e = exp(-2 * fabs(a.x));
        return (${T})(copysign((${R})1, a.x), 4 * sin(a.y) * cos(a.y) * e);
    }
    ${R} t = tan(a.y), b = 1 + t * t, s = sinh(a.x), r = sqrt(1 + s * s), d = 1 + b * s * s;
    return (${T})(b * r * s / d, t / d);
}

static ${T} ember_cpow(${T} a, ${T} b)
{
    if (b.x == 0 && b.y == 0) return (${T})(1, 0);
    if (a.x == 0 && a.y == 0) {
        if (b.x > 0 && b.y == 0) return (${T})(0, 0);
        return (${T})(NAN, NAN);
    }
    if (b.y == 0 && b.x == trunc(b.x) && fabs(b.x) < 100) {
        int n = (int)b.x, m = n < 0 ? -n : n;
        ${T} acc = (${T})(1, 0), p = a;
        while (1) {
            if (m & 1) acc = ember_cmul(acc, p);
            m >>= 1;
            if (m == 0) break;
            p = ember_cmul(p, p);
        }
        return n < 0 ? ember_cdiv((${T})(1, 0), acc) : acc;
    }
    return ember_cexp(ember_cmul(b, ember_clog(a)));
}
"""

COMPLEX_UNARY: dict[str, str] = {
    "neg": "-a",
    "clone": "a",
    "abs": "hypot(a.x, a.y)",
    "exp": "ember_cexp(a)",
    "log": "ember_clog(a)",
    "sqrt": "ember_csqrt(a)",
    "sin": "ember_csin(a)",
    "cos": "ember_ccos(a)",
    "tanh": "ember_ctanh(a)",
}

COMPLEX_BINARY: dict[str, str] = {
    "add": "a + b",
    "sub": "a - b",
    "mul": "ember_cmul(a, b)",
    "div": "ember_cdiv(a, b)",
    "pow": "ember_cpow(a, b)",
}

COMPLEX_COMPARE: dict[str, str] = {"eq": "(a.x == b.x && a.y == b.y)"}
