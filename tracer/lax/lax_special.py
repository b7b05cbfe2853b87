"""jax.lax's special functions, composed of elementwise ops by the formulas XLA uses:
erfc (Cephes' rational form), lgamma and digamma (the Lanczos g=7 series, Euler's
reflection below 1/2), erf_inv (Giles' start refined by four Newton steps on erf, on
log erfc beyond 1/2 where 1 - x is exact: full precision, and its gradient is 1/erf'(y)),
bessel_i0e and bessel_i1e (power series, then the asymptotic expansion). float16 and
bfloat16 compute in float32; erfc, erf_inv and the Bessel functions in float64, rounded
once. The incomplete gamma and beta functions and zeta are in lax_incomplete.py.
"""
import math

import numpy as np

from tracer import numpy as tnp
from tracer.lax.lax_elementwise import FLOAT, operands

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# Cephes ndtr.c: erfc(x) = exp(-x^2) P(x) / Q(x) for 1 <= x < 8, R(x) / S(x) beyond
_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
      4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
      9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
      9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
      1.65666309194161350182e3, 5.57535340817727675546e2)
_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
      6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
      1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
# Giles, "Approximating the erfinv function" (single precision), for w < 5 and beyond
_GILES_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _polyval(coeffs, x):
    out = tnp.zeros_like(x) + coeffs[0]
    for c in coeffs[1:]:
        out = out * x + c
    return out


def _computed_in(x, dtype):
    """x in the dtype a function computes in (at least float32), and the way back."""
    wide = np.promote_types(x.dtype, dtype)
    return tnp.astype(x, wide), lambda y: tnp.astype(y, x.dtype)


def _erfc(x):
    x = tnp.clip(x, -30.0, 30.0)                    # erfc is 2 or 0 (underflowed) beyond
    a = tnp.abs(x)
    z = tnp.exp(-x * x)
    mid = z * _polyval(_P, a) / _polyval(_Q, a)
    far = z * _polyval(_R, a) / _polyval(_S, a)
    tail = tnp.where(a < 8, mid, far)
    tail = tnp.where(x < 0, 2 - tail, tail)
    return tnp.where(a < 1, 1 - tnp.erf(x), tail)


def _lanczos(x):
    """(z, t, log t, the series, its derivative over z) of the Lanczos approximation, with
    z = -x where x < 1/2 (for the reflection) and x - 1 elsewhere."""
    z = tnp.where(x < 0.5, -x, x - 1)
    series, slope = tnp.zeros_like(x) + _LANCZOS[0], tnp.zeros_like(x)
    for i, c in enumerate(_LANCZOS[1:]):
        series = series + c / (z + (i + 1))
        slope = slope - c / ((z + (i + 1)) * (z + (i + 1)))
    t = z + (_LANCZOS_G + 0.5)
    log_t = np.log(_LANCZOS_G + 0.5) + tnp.log1p(z / (_LANCZOS_G + 0.5))
    return z, t, log_t, series, slope


def _lgamma(x):
    z, t, log_t, series, _ = _lanczos(x)
    log_y = 0.5 * np.log(2 * np.pi) + (z + 0.5 - t / log_t) * log_t + tnp.log(series)
    frac = tnp.abs(x) - tnp.floor(tnp.abs(x))
    frac = tnp.where(frac > 0.5, 1 - frac, frac)
    log_sin = tnp.log(tnp.sin(np.pi * frac))            # -inf at the poles (integers <= 0)
    reflected = tnp.where(tnp.isfinite(log_sin), np.log(np.pi) - log_sin - log_y, -log_sin)
    return tnp.where(tnp.isinf(x), tnp.abs(x), tnp.where(x < 0.5, reflected, log_y))


def _digamma(x):
    z, t, log_t, series, slope = _lanczos(x)
    y = log_t + slope / series - _LANCZOS_G / t
    reduced = x + tnp.abs(tnp.floor(x + 0.5))
    reflected = y - np.pi * tnp.cos(np.pi * reduced) / tnp.sin(np.pi * reduced)
    out = tnp.where(x < 0.5, reflected, y)
    return tnp.where((x <= 0) & (x == tnp.floor(x)), np.nan, out)


def _erf_inv(x):
    w = -tnp.log((1 - x) * (1 + x))
    small, large = tnp.where(w < 5, w, 2.5) - 2.5, tnp.sqrt(tnp.where(w < 5, 5.0, w)) - 3
    y = tnp.where(w < 5, _polyval(_GILES_SMALL, small), _polyval(_GILES_LARGE, large)) * x
    a = tnp.abs(x)
    for _ in range(4):
        slope = 2 / np.sqrt(np.pi) * tnp.exp(-y * y)
        c = _erfc(tnp.abs(y))                   # beyond 1/2: Newton on log erfc, nearly linear
        tail = tnp.sign(x) * (tnp.log(c) - tnp.log1p(-a)) * c
        step = tnp.where(a > 0.5, tail, x - tnp.erf(y)) / slope
        y = y + tnp.where(tnp.isfinite(step), step, 0.0)
    return tnp.where(tnp.abs(x) == 1, x * np.inf, y)


_I_SERIES = 48                                  # terms of the power series, used for |x| <= 20
_I_ASYMPTOTIC = 30                              # terms of the expansion in 1/|x| beyond


def _bessel_ie(x, order):
    """exp(-|x|) I_order(x) for order 0 or 1: the power series up to |x| = 20, then the
    asymptotic expansion, whose 30th term there is below 3e-16 of the sum. Each sees a
    stand-in argument where the other is used, so neither overflows."""
    a = tnp.abs(x)
    near = a <= 20
    an, af = tnp.where(near, a, 0.0), tnp.where(near, 21.0, a)
    t = an * an / 4
    series = _polyval([1 / (math.factorial(k) * math.factorial(k + order))
                       for k in reversed(range(_I_SERIES))], t)
    series = series * tnp.exp(-an) * (an / 2 if order else 1.0)
    mu, coeffs, c = 4 * order * order, [1.0], 1.0
    for j in range(1, _I_ASYMPTOTIC):
        c *= -(mu - (2 * j - 1) ** 2) / (8 * j)
        coeffs.append(c)
    far = _polyval(coeffs[::-1], 1 / af) / tnp.sqrt(2 * np.pi * af)
    out = tnp.where(near, series, far)
    return tnp.sign(x) * out if order else out


def bessel_i0e(x):
    """jax.lax.bessel_i0e: exp(-|x|) I0(x)."""
    (x,) = operands("bessel_i0e", [x], FLOAT)
    wide, back = _computed_in(x, np.float64)
    return back(_bessel_ie(wide, 0))


def bessel_i1e(x):
    """jax.lax.bessel_i1e: exp(-|x|) I1(x)."""
    (x,) = operands("bessel_i1e", [x], FLOAT)
    wide, back = _computed_in(x, np.float64)
    return back(_bessel_ie(wide, 1))


def _unary(name, fn, dtype):
    def op(x):
        (x,) = operands(name, [x], FLOAT)
        wide, back = _computed_in(x, dtype)
        return back(fn(wide))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"jax.lax.{name}, composed of elementwise ops (see the module docstring)."
    return op


erfc = _unary("erfc", _erfc, np.float64)
lgamma = _unary("lgamma", _lgamma, np.float32)
digamma = _unary("digamma", _digamma, np.float32)
erf_inv = _unary("erf_inv", _erf_inv, np.float64)

__all__ = ["erfc", "lgamma", "digamma", "erf_inv", "bessel_i0e", "bessel_i1e"]
