"""Transcendental functions the samplers need, in + - * / sqrt, floor and bit casts only, so
that every backend gives the same bits (each backend's own exp or tan is a different
polynomial). They are computed in float64 and rounded once to the argument's dtype.
`exp log log1p erf erfinv` carry their analytic derivatives (custom_vjp), so reparameterised
gradients flow through them; `tanpi lgamma` are only applied to random draws.
"""
import math

import ml_dtypes
import numpy as np

import tracer.numpy as tnp
from tracer import exact_math, lax
from tracer.custom import custom_vjp
from tracer.numpy._base import dtype_of

F64 = np.dtype(np.float64)
_EXP = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
        -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
# Numerical Recipes' Chebyshev fit of erfc (relative error < 1.2e-16)
_ERFC = (-1.3026537197817094, 6.4196979235649026e-1, 1.9476473204185836e-2,
         -9.561514786808631e-3, -9.46595344482036e-4, 3.66839497852761e-4,
         4.2523324806907e-5, -2.0278578112534e-5, -1.624290004647e-6, 1.303655835580e-6,
         1.5626441722e-8, -8.5238095915e-8, 6.529054439e-9, 5.059343495e-9,
         -9.91364156e-10, -2.27365122e-10, 9.6467911e-11, 2.394038e-12, -6.886027e-12,
         8.94487e-13, 3.13092e-13, -1.12708e-13, 3.81e-16, 7.106e-15, -1.523e-15, -9.4e-17,
         1.21e-16, -2.8e-17)
# Lanczos (g = 7, 9 terms; relative error ~1e-15)
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _in64(fn):
    """fn computed on float64 and rounded once to the argument's float dtype."""
    def wrapped(x):
        dt = dtype_of(x)
        return tnp.astype(fn(tnp.astype(x, F64)), dt)
    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


def _with_derivative(fn, derivative):
    """fn whose gradient is dy * derivative(x, y) instead of its polynomial's: y is tied
    to x by an identity custom_vjp, so fn itself is traced once."""
    tie = custom_vjp(lambda x, y: y)
    tie.defvjp(lambda x, y: (y, (x, y)), lambda res, dy: (dy * derivative(*res), None))

    def f(x):
        return tie(x, fn(x))
    f.__name__, f.__doc__ = fn.__name__, fn.__doc__
    return f


def _c(v):
    return np.array(v, F64)


def _pow2(k):
    """2**k for integer-valued float64 k in [-1022, 1023], from its bits."""
    return lax.bitcast_convert_type(tnp.left_shift(tnp.astype(k, np.int64) + 1023,
                                                   np.int64(52)), F64)


@_in64
def _exp(x):
    """fdlibm's exp: x = k ln2 + r, |r| <= ln2/2, exp(r) from a rational fit; 2**k is
    applied in two halves so subnormal results are rounded once."""
    big, small = tnp.greater(x, _c(709.782712893384)), tnp.less(x, _c(-745.1332191019412))
    x = tnp.clip(x, -745.1332191019412, 709.782712893384)
    k = tnp.floor(x * _c(1 / math.log(2)) + _c(0.5))
    hi, lo = x - k * _c(_LN2_HI), k * _c(_LN2_LO)
    r = hi - lo
    r2 = r * r
    c = r - r2 * exact_math._horner(r2, _EXP, F64)
    y = _c(1) - ((lo - (r * c) / (_c(2) - c)) - hi)
    k1 = tnp.floor(k * _c(0.5))
    y = y * _pow2(k1) * _pow2(k - k1)
    return tnp.where(big, _c(np.inf), tnp.where(small, _c(0), y))


@_in64
def _log(x):
    """log of x >= 0 (log(0) = -inf; subnormals are scaled up first)."""
    tiny = tnp.less(x, _c(2.0 ** -1000))
    out = exact_math.log(tnp.where(tiny, x * _c(2.0 ** 100), x))
    out = tnp.where(tiny, out - _c(100 * math.log(2)), out)
    return tnp.where(tnp.equal(x, 0), _c(-np.inf), out)


@_in64
def _log1p(x):
    """log1p of x in (-1, inf): exact_math's for x < 0, log(1 + x) corrected beyond;
    x itself at +-0 (a signed zero, as log1p gives: binomial divides by it)."""
    neg = tnp.less_equal(x, 0)
    safe = tnp.where(neg, x, _c(0))
    u = _c(1) + x
    big = exact_math.log(tnp.where(neg, _c(1), u))
    big = big + (x - (u - _c(1))) / u
    return tnp.where(x == 0, x, tnp.where(neg, exact_math.log1p(safe), big))


@_in64
def _erf(x):
    """erf: a Taylor series for |x| < 0.5, 1 - erfc(|x|) (a Chebyshev fit) beyond."""
    a = tnp.abs(x)
    t = _c(2) / (_c(2) + a)
    ty = _c(4) * t - _c(2)
    d, dd = _c(0), _c(0)
    for co in _ERFC[:0:-1]:
        d, dd = ty * d - dd + _c(co), d
    erfc = t * _exp(-a * a + _c(0.5) * (_c(_ERFC[0]) + ty * d) - dd)
    x2, term, series = x * x, x, x
    for n in range(1, 14):
        term = term * -x2 / _c(n)
        series = series + term / _c(2 * n + 1)
    far = tnp.where(tnp.less(x, 0), erfc - _c(1), _c(1) - erfc)
    return tnp.where(tnp.less(a, _c(0.5)), series * _c(2 / math.sqrt(math.pi)), far)


def _sinpi_cospi(a):
    """sin(pi a), cos(pi a) for |a| <= 1/4 (Taylor series to degree 17)."""
    z = a * _c(math.pi)
    z2 = z * z
    sin = exact_math._horner(z2, [(-1) ** n / math.factorial(2 * n + 1) for n in range(9)],
                             F64) * z
    cos = exact_math._horner(z2, [(-1) ** n / math.factorial(2 * n) for n in range(9)], F64)
    return sin, cos


@_in64
def tanpi(x):
    """tan(pi x) for x in (-1/2, 1/2): sin/cos near 0, cos/sin of 1/2 - |x| (exact)."""
    near = tnp.less_equal(tnp.abs(x), _c(0.25))
    s, c = _sinpi_cospi(tnp.where(near, x, _c(0)))
    s2, c2 = _sinpi_cospi(tnp.where(near, _c(0.25), _c(0.5) - tnp.abs(x)))
    return tnp.where(near, s / c, tnp.where(tnp.less(x, 0), -c2 / s2, c2 / s2))


@_in64
def lgamma(x):
    """log Gamma(x) for x >= 1/2 (Lanczos)."""
    x = x - _c(1)
    a = _c(_LANCZOS[0])
    for i, co in enumerate(_LANCZOS[1:], 1):
        a = a + _c(co) / (x + _c(i))
    t = x + _c(7.5)
    return _c(0.5 * math.log(2 * math.pi)) + (x + _c(0.5)) * _log(t) - t + _log(a)


exp = _with_derivative(_exp, lambda x, y: y)
log = _with_derivative(_log, lambda x, y: 1 / x)
log1p = _with_derivative(_log1p, lambda x, y: 1 / (1 + x))
erf = _with_derivative(_erf, lambda x, y: _exp(-x * x) * (2 / math.sqrt(math.pi)))
erfinv = _with_derivative(_in64(exact_math.erfinv),
                          lambda x, y: _exp(y * y) * (math.sqrt(math.pi) / 2))


def next_float(x, direction):
    """The float next to finite x towards +inf (direction 1) or -inf (-1), from its bits."""
    dt = dtype_of(x)
    it = np.dtype(f"int{8 * dt.itemsize}")
    bits = lax.bitcast_convert_type(x, it)
    away = (x > 0) if direction > 0 else (x < 0)    # moving away from zero: |bits| + 1
    step = tnp.where(away, np.array(1, it), np.array(-1, it))
    smallest = np.array(direction * ml_dtypes.finfo(dt).smallest_subnormal, dt)
    return tnp.where(x == 0, smallest, lax.bitcast_convert_type(bits + step, dt))


def power(x, y):
    """x ** y for x >= 0, as exp(y log x) (1 where x is 1 or y is 0, as pow)."""
    one = (x == 1) | (y == 0)
    return tnp.where(one, np.array(1, dtype_of(x)), exp(y * log(x)))
