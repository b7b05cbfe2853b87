"""jax.lax's special functions, composed of elementwise ops by the formulas XLA uses:
erfc (Cephes' rational form), lgamma and digamma (the Lanczos g=7 series, Euler's
reflection below 1/2), erf_inv (Giles' start refined by four Newton steps on erf, on
log erfc beyond 1/2 where 1 - x is exact: full precision, and its gradient is 1/erf'(y)),
igamma and igammac (Cephes' series and continued fraction in one while_loop), zeta and
polygamma (Cephes' Hurwitz zeta: a sum, then Euler-Maclaurin). float16 and
bfloat16 compute in float32; erfc, erf_inv and the incomplete gammas in float64, rounded
once.
"""
from fractions import Fraction
import math
from math import comb, factorial

import numpy as np

from tracer import numpy as tnp
from tracer.lax.lax_elementwise import FLOAT, operands
from tracer.lax.loops import while_loop
from tracer.transforms import jvp

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


def _bernoulli_factors(count):
    """(2k)! / B_2k for k = 1..count: the Euler-Maclaurin coefficients of Cephes' zeta."""
    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(comb(m + 1, j) * b[j] for j in range(m)) / (m + 1))
    return [float(factorial(2 * k) / b[2 * k]) for k in range(1, count + 1)]


_ZETA_A = _bernoulli_factors(12)


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


def _igamma_pair(a, x):
    """(P(a, x), Q(a, x)), the regularized incomplete gamma functions, as Cephes: the series
    for P where x <= max(1, a), the continued fraction for Q elsewhere, iterated in one
    while_loop until every element's own method has converged. Each method sees safe
    stand-in arguments where the other is used, so neither overflows into the gradient."""
    eps, big = np.finfo(x.dtype).eps, 1 / np.finfo(x.dtype).eps
    tol = 8 * eps                                 # the fraction's ratio jitters by ulps
    series = (x <= 1) | (x <= a)
    xs, xc = tnp.where(series, x, 0.0), tnp.where(series, a + 2, x)
    y, one = 1 - a, tnp.ones_like(x)
    z = xc + y + 1
    state = (0, a, one, one, y, z, one, xc, xc + 1, z * xc, (xc + 1) / (z * xc), one)

    def unconverged(s):
        k, _, c, ans, *_, t = s
        return (k < 2000) & tnp.any(tnp.where(series, c > ans * eps, t > tol))

    def step(s):
        k, r, c, ans, y, z, pkm2, qkm2, pkm1, qkm1, cf, _ = s
        r = r + 1
        c = c * xs / r
        y, z = y + 1, z + 2
        yc = y * (k + 1)
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        ok = qk != 0
        ratio = pk / tnp.where(ok, qk, 1.0)
        t = tnp.where(ok, tnp.abs((cf - ratio) / ratio), 1.0)
        scale = tnp.where(tnp.abs(pk) > big, 1 / big, 1.0)
        return (k + 1, r, c, ans + c, y, z, pkm1 * scale, qkm1 * scale, pk * scale, qk * scale,
                tnp.where(ok, ratio, cf), t)

    out = while_loop(unconverged, step, state)
    log_ax = a * tnp.log(x) - x - _lgamma(a)
    p_series = out[3] * tnp.exp(log_ax) / a
    q_cf = out[10] * tnp.exp(log_ax)
    p = tnp.where(series, p_series, 1 - q_cf)
    p = tnp.where(x == 0, 0.0, tnp.where(a == 0, 1.0, p))
    p = tnp.where((a < 0) | (x < 0) | tnp.isnan(a) | tnp.isnan(x), np.nan, p)
    q = tnp.where(series, 1 - p_series, q_cf)
    q = tnp.where(x == 0, 1.0, tnp.where(a == 0, 0.0, q))
    return p, tnp.where(tnp.isnan(p), np.nan, q)


def _zeta(x, q):
    """Hurwitz zeta by Cephes' scheme: nine terms of the sum, then Euler-Maclaurin at
    w = q + 9 until a correction is below one ulp of the total (later ones are masked)."""
    eps = np.finfo(x.dtype).eps
    ok = q > 0
    qs = tnp.where(ok, q, 1.0)
    total = tnp.power(qs, -x)
    b = total
    for k in range(1, 10):
        b = tnp.power(qs + k, -x)
        total = total + b
    w = qs + 9
    total = total + b * w / (x - 1) - 0.5 * b
    a, k, done = tnp.ones_like(x), 0.0, tnp.zeros(x.shape, bool)
    for coeff in _ZETA_A:
        a = a * (x + k)
        b = b / w
        t = a * b / coeff
        total = tnp.where(done, total, total + t)
        done = done | (tnp.abs(t) < eps * tnp.abs(total))
        a, b, k = a * (x + k + 1), b / w, k + 2
    out = tnp.where(x == 1, np.inf, tnp.where(x < 1, np.nan, total))
    return tnp.where(q == 0, np.inf, tnp.where(ok, out, np.nan))


def zeta(x, q):
    """jax.lax.zeta: the Hurwitz zeta function sum_k (q + k)^-x, for x > 1 and q > 0
    (infinite at q = 0 or x = 1; NaN for q < 0, where jax.lax also covers integer x)."""
    x, q = tnp.broadcast_arrays(*operands("zeta", [x, q], FLOAT))
    (wx, back), wq = _computed_in(x, np.float32), _computed_in(q, np.float32)[0]
    return back(_zeta(wx, wq))


def polygamma(m, x):
    """jax.lax.polygamma: the m-th derivative of digamma, for whole m >= 0 (of x's dtype)."""
    m, x = tnp.broadcast_arrays(*operands("polygamma", [m, x], FLOAT))
    (wm, back), wx = _computed_in(m, np.float32), _computed_in(x, np.float32)[0]
    n = tnp.where(wm > 0, wm, 1.0)
    sign = tnp.where(tnp.fmod(n, 2.0) == 1, 1.0, -1.0)          # (-1)^(m + 1)
    out = sign * tnp.exp(_lgamma(n + 1)) * _zeta(n + 1, wx)
    out = tnp.where(wm == 0, _digamma(wx), out)
    return back(tnp.where((wm < 0) | (wm != tnp.floor(wm)), np.nan, out))


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


def igamma(a, x):
    """jax.lax.igamma: the regularized lower incomplete gamma function P(a, x)."""
    a, x = tnp.broadcast_arrays(*operands("igamma", [a, x], FLOAT))
    (wa, back), wx = _computed_in(a, np.float64), _computed_in(x, np.float64)[0]
    return back(_igamma_pair(wa, wx)[0])


def igammac(a, x):
    """jax.lax.igammac: the regularized upper incomplete gamma function Q(a, x) = 1 - P."""
    a, x = tnp.broadcast_arrays(*operands("igammac", [a, x], FLOAT))
    (wa, back), wx = _computed_in(a, np.float64), _computed_in(x, np.float64)[0]
    return back(_igamma_pair(wa, wx)[1])


def igamma_grad_a(a, x):
    """jax.lax.igamma_grad_a: dP(a, x)/da, the forward derivative of igamma's composition
    (elementwise, so a tangent of ones gives every element's derivative at once)."""
    a, x = tnp.broadcast_arrays(*operands("igamma_grad_a", [a, x], FLOAT))
    return jvp(lambda v: igamma(v, x), (a,), (tnp.ones_like(a),))[1]


def random_gamma_grad(a, x):
    """jax.lax.random_gamma_grad: d(sample)/da of a Gamma(a, 1) sample x at fixed quantile
    P(a, x), i.e. -(dP/da) / (dP/dx) with dP/dx = x^(a-1) e^-x / Gamma(a)."""
    a, x = tnp.broadcast_arrays(*operands("random_gamma_grad", [a, x], FLOAT))
    wa, back = _computed_in(a, np.float64)
    wx = _computed_in(x, np.float64)[0]
    density = tnp.exp((wa - 1) * tnp.log(wx) - wx - _lgamma(wa))
    return back(-igamma_grad_a(wa, wx) / density)


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

__all__ = ["erfc", "lgamma", "digamma", "erf_inv", "igamma", "igammac", "zeta", "polygamma",
           "bessel_i0e", "bessel_i1e", "igamma_grad_a", "random_gamma_grad"]
