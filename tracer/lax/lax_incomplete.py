"""jax.lax's incomplete gamma and beta functions and the Hurwitz zeta function, with
Cephes' algorithms over the Lanczos lgamma of lax_special: igamma and igammac (series and
continued fraction in one while_loop), betainc (Numerical Recipes' continued fraction in
one while_loop), zeta and polygamma (a sum, then Euler-Maclaurin), and the derivatives
jax.lax names (igamma_grad_a, random_gamma_grad). All compute in float64 (zeta and
polygamma in at least float32) and round once.
"""
from fractions import Fraction
from math import comb, factorial

import numpy as np

from tracer import numpy as tnp
from tracer.lax.lax_elementwise import FLOAT, operands
from tracer.lax.lax_special import _computed_in, _digamma, _lgamma
from tracer.lax.loops import while_loop
from tracer.transforms import jvp


def _bernoulli_factors(count):
    """(2k)! / B_2k for k = 1..count: the Euler-Maclaurin coefficients of Cephes' zeta."""
    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(comb(m + 1, j) * b[j] for j in range(m)) / (m + 1))
    return [float(factorial(2 * k) / b[2 * k]) for k in range(1, count + 1)]


_ZETA_A = _bernoulli_factors(12)


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


def _betainc(a, b, x):
    """I_x(a, b) by the continued fraction of Numerical Recipes' betacf (modified Lentz),
    on the side of the mean where it converges fast (I_x(a, b) = 1 - I_1-x(b, a)), in one
    while_loop until every element's factor is within 8 ulps of 1."""
    eps = np.finfo(x.dtype).eps
    tiny = np.finfo(x.dtype).tiny / eps
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    edge = tnp.where((a > 0) & (b > 0) & ((x == 0) | (x == 1)), x, np.nan)
    a, b, x = (tnp.where(ok, v, 0.5) for v in (a, b, x))
    swap = x > (a + 1) / (a + b + 2)
    a, b, x = tnp.where(swap, b, a), tnp.where(swap, a, b), tnp.where(swap, 1 - x, x)

    def floor(v):
        return tnp.where(tnp.abs(v) < tiny, tiny, v)

    d = 1 / floor(1 - (a + b) * x / (a + 1))
    state = (0, tnp.ones_like(x), d, d, tnp.zeros_like(x))

    def unconverged(s):
        return (s[0] < 1000) & tnp.any(tnp.abs(s[4] - 1) > 8 * eps)

    def step(s):
        m, c, d, h, _ = s
        m = m + 1
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2))
        d, c = 1 / floor(1 + aa * d), floor(1 + aa / c)
        h = h * d * c
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2))
        d, c = 1 / floor(1 + aa * d), floor(1 + aa / c)
        return m, c, d, h * d * c, d * c

    h = while_loop(unconverged, step, state)[3]
    front = tnp.exp(_lgamma(a + b) - _lgamma(a) - _lgamma(b) + a * tnp.log(x)
                    + b * tnp.log1p(-x)) / a
    out = tnp.where(swap, 1 - front * h, front * h)
    return tnp.where(ok, out, edge)


def betainc(a, b, x):
    """jax.lax.betainc: the regularized incomplete beta function I_x(a, b)."""
    a, b, x = tnp.broadcast_arrays(*operands("betainc", [a, b, x], FLOAT))
    wa, back = _computed_in(a, np.float64)
    return back(_betainc(wa, *(_computed_in(v, np.float64)[0] for v in (b, x))))


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


__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc", "zeta",
           "polygamma"]
