"""Complex elementwise math: complex64/complex128 as ``float2``/``double2`` (x real, y imaginary).

Each op reproduces what the CPU backend's NumPy loop returns, special values included
(checked on a grid of ±0, ±inf, NaN and finite parts by ``tests/test_complex_special.py``):

* ``*`` is the plain formula and ``/`` NumPy's scaled (Smith) division with its
  divide-by-zero rule: NumPy's own loops, which do not recover infinities.
* ``exp``, ``sin``, ``cos``, ``tanh`` follow C99 Annex G case by case as glibc's ``cexp``,
  ``csin``, ``ccosh`` (``ccos(z) = ccosh(iz)``) and ``ctanh``, which NumPy calls: the
  class of each part (zero, finite, inf, NaN) picks the result, and ``exp`` scales a
  large real part so that ``exp(x) * cos(y)`` does not overflow early.
* ``pow`` is NumPy 2's ``npy_cpow``: ``z ** 0`` is 1, ``0 ** b`` is 0 when ``Re b > 0``
  (else NaN), small integer exponents multiply (1, 2, 3 unrolled), else
  ``exp(b * log(a))`` with C's Annex G multiplication (infinities recovered).
* ``log`` is (log|z|, atan2) and ``sqrt`` the stable half-angle formula with Annex G's
  zero and infinity cases; ``abs`` is ``hypot`` (inf when either part is inf).

``${T}`` is the vector type, ``${R}`` its part type.
"""

from __future__ import annotations

__all__ = ["COMPLEX_BINARY", "COMPLEX_COMPARE", "COMPLEX_SRC", "COMPLEX_UNARY"]

COMPLEX_SRC = """
/* the part type's smallest normal, largest finite and epsilon, without double literals */
#define EMBER_RMIN ldexp((${R})1, sizeof(${R}) == 4 ? -126 : -1022)
#define EMBER_RMAX nextafter((${R})INFINITY, (${R})0)
#define EMBER_REPS (nextafter((${R})1, (${R})2) - (${R})1)
/* glibc's overflow threshold for exp: (int)((max exponent - 1) * ln 2) */
#define EMBER_EXP_T (sizeof(${R}) == 4 ? 88 : 709)

static ${T} ember_cmul(${T} a, ${T} b)
{
    return (${T})(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* C's complex multiplication (Annex G.5.1): a NaN + NaN i product of an infinite factor
   is recomputed with the infinities boxed to +-1 and NaNs to 0. */
static ${T} ember_cmul_g(${T} z, ${T} w)
{
    ${R} a = z.x, b = z.y, c = w.x, d = w.y;
    ${R} ac = a * c, bd = b * d, ad = a * d, bc = b * c, x = ac - bd, y = ad + bc;
    if (isnan(x) && isnan(y)) {
        int re = 0;
        if (isinf(a) || isinf(b)) {
            a = copysign(isinf(a) ? (${R})1 : (${R})0, a);
            b = copysign(isinf(b) ? (${R})1 : (${R})0, b);
            if (isnan(c)) c = copysign((${R})0, c);
            if (isnan(d)) d = copysign((${R})0, d);
            re = 1;
        }
        if (isinf(c) || isinf(d)) {
            c = copysign(isinf(c) ? (${R})1 : (${R})0, c);
            d = copysign(isinf(d) ? (${R})1 : (${R})0, d);
            if (isnan(a)) a = copysign((${R})0, a);
            if (isnan(b)) b = copysign((${R})0, b);
            re = 1;
        }
        if (!re && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
            if (isnan(a)) a = copysign((${R})0, a);
            if (isnan(b)) b = copysign((${R})0, b);
            if (isnan(c)) c = copysign((${R})0, c);
            if (isnan(d)) d = copysign((${R})0, d);
            re = 1;
        }
        if (re) {
            x = INFINITY * (a * c - b * d);
            y = INFINITY * (a * d + b * c);
        }
    }
    return (${T})(x, y);
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

/* (sin v, cos v), with v itself for a zero or subnormal v (glibc's shortcut). */
static ${T} ember_sincos(${R} v)
{
    if (fabs(v) > EMBER_RMIN) return (${T})(sin(v), cos(v));
    return (${T})(v, 1);
}

/* v * exp(ax) / 2 for ax beyond EMBER_EXP_T, scaled in steps so that a small v keeps a
   finite product (glibc's csin/ccosh for a large hyperbolic argument). */
static ${T} ember_exp_half(${R} ax, ${T} v)
{
    ${R} t = EMBER_EXP_T, et = exp(t);
    ax -= t;
    v *= et / 2;
    if (ax > t) {
        ax -= t;
        v *= et;
    }
    return ax > t ? v * EMBER_RMAX : v * exp(ax);
}

static ${T} ember_cexp(${T} a)
{
    if (isfinite(a.x)) {
        if (!isfinite(a.y)) return (${T})(NAN, NAN);
        ${T} sc = a.y == 0 ? (${T})(a.y, 1) : (${T})(sin(a.y), cos(a.y));
        ${R} x = a.x, t = EMBER_EXP_T;
        if (x > t) {
            ${R} et = exp(t);
            x -= t;
            sc *= et;
            if (x > t) {
                x -= t;
                sc *= et;
            }
        }
        if (x > t) return (${T})(EMBER_RMAX * sc.y, EMBER_RMAX * sc.x);
        ${R} e = exp(x);
        return (${T})(e * sc.y, e * sc.x);
    }
    if (isinf(a.x)) {
        if (isfinite(a.y)) {
            ${R} v = signbit(a.x) ? 0 : INFINITY;
            if (a.y == 0) return (${T})(v, a.y);
            return (${T})(copysign(v, cos(a.y)), copysign(v, sin(a.y)));
        }
        if (!signbit(a.x)) return (${T})(INFINITY, a.y - a.y);
        return (${T})(0, copysign((${R})0, a.y));
    }
    return (${T})(NAN, a.y == 0 ? a.y : NAN);
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
    int neg = signbit(a.x);
    ${R} x = fabs(a.x), y = a.y;
    if (isfinite(y)) {
        if (isfinite(x)) {
            ${T} sc = ember_sincos(x);
            if (neg) sc.x = -sc.x;
            if (fabs(y) > EMBER_EXP_T) {
                if (signbit(y)) sc.y = -sc.y;
                return ember_exp_half(fabs(y), sc);
            }
            return (${T})(cosh(y) * sc.x, sinh(y) * sc.y);
        }
        if (y == 0) return (${T})(x - x, y);
        return (${T})(NAN, NAN);
    }
    if (isinf(y)) {
        if (x == 0) return (${T})(neg ? -0.0 : 0.0, y);
        if (isfinite(x)) {
            ${T} sc = ember_sincos(x);
            ${R} re = copysign((${R})INFINITY, sc.x), im = copysign((${R})INFINITY, sc.y);
            return (${T})(neg ? -re : re, signbit(y) ? -im : im);
        }
        return (${T})(x - x, INFINITY);
    }
    return (${T})(x == 0 ? (neg ? -0.0 : 0.0) : NAN, NAN);
}

static ${T} ember_ccosh(${T} a)
{
    if (isfinite(a.x)) {
        if (isfinite(a.y)) {
            ${T} sc = ember_sincos(a.y);
            if (fabs(a.x) > EMBER_EXP_T) {
                if (signbit(a.x)) sc.x = -sc.x;
                return ember_exp_half(fabs(a.x), (${T})(sc.y, sc.x));
            }
            return (${T})(cosh(a.x) * sc.y, sinh(a.x) * sc.x);
        }
        return (${T})(a.y - a.y, a.x == 0 ? 0 : NAN);
    }
    if (isinf(a.x)) {
        if (isfinite(a.y) && a.y != 0) {
            ${T} sc = ember_sincos(a.y);
            return (${T})(copysign((${R})INFINITY, sc.y), copysign((${R})INFINITY, sc.x) * copysign((${R})1, a.x));
        }
        if (a.y == 0) return (${T})(INFINITY, a.y * copysign((${R})1, a.x));
        return (${T})(INFINITY, a.y - a.y);
    }
    return (${T})(NAN, a.y == 0 ? a.y : NAN);
}

static ${T} ember_ccos(${T} a)
{
    return ember_ccosh((${T})(-a.y, a.x));
}

static ${T} ember_ctanh(${T} a)
{
    if (!isfinite(a.x) || !isfinite(a.y)) {
        if (isinf(a.x)) {
            ${R} im = copysign((${R})0, a.y);
            if (isfinite(a.y) && fabs(a.y) > 1) im = copysign((${R})0, sin(a.y) * cos(a.y));
            return (${T})(copysign((${R})1, a.x), im);
        }
        if (a.x == 0) return (${T})(a.x, NAN);
        if (a.y == 0) return a;
        return (${T})(NAN, NAN);
    }
    ${T} sc = ember_sincos(a.y);
    ${R} t = sizeof(${R}) == 4 ? 44 : 354;
    if (fabs(a.x) > t) {
        ${R} e2t = exp(2 * t), x = fabs(a.x) - t, im = 4 * sc.x * sc.y / e2t;
        im /= x > t ? e2t : exp(2 * x);
        return (${T})(copysign((${R})1, a.x), im);
    }
    ${R} sh = a.x, ch = 1;
    if (fabs(a.x) > EMBER_RMIN) {
        sh = sinh(a.x);
        ch = cosh(a.x);
    }
    ${R} den = fabs(sh) > fabs(sc.y) * EMBER_REPS ? sh * sh + sc.y * sc.y : sc.y * sc.y;
    return (${T})(sh * ch / den, sc.x * sc.y / den);
}

static ${T} ember_cpow(${T} a, ${T} b)
{
    if (b.x == 0 && b.y == 0) return (${T})(1, 0);
    if (a.x == 0 && a.y == 0) return b.x > 0 ? (${T})(0, 0) : (${T})(NAN, NAN);
    if (b.y == 0 && b.x == trunc(b.x) && fabs(b.x) < 100) {
        int n = (int)b.x, m = n < 0 ? -n : n;
        if (n == 1) return a;
        if (n == 2) return ember_cmul(a, a);
        if (n == 3) return ember_cmul(a, ember_cmul(a, a));
        ${T} acc = (${T})(1, 0), p = a;
        while (1) {
            if (m & 1) acc = ember_cmul(acc, p);
            m >>= 1;
            if (m == 0) break;
            p = ember_cmul(p, p);
        }
        return n < 0 ? ember_cdiv((${T})(1, 0), acc) : acc;
    }
    return ember_cexp(ember_cmul_g(b, ember_clog(a)));
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
