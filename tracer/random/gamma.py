"""Gamma draws (JAX's Marsaglia-Tsang loop, one key per element; JAX's implicit gradient
in the shape parameter) and the distributions JAX builds on them: loggamma, beta,
dirichlet, chisquare, t, f, generalized_normal, ball.
"""
import numpy as np

import tracer.numpy as tnp
from ir.errors import ShapeError
from tracer import lax
from tracer.custom import custom_vjp
from tracer.numpy._base import dtype_of, shape as shape_of, value
from tracer.random import exact
from tracer.random.continuous import exponential, params, rademacher, sum_last
from tracer.random.core import (_shape, normal, normal_of_words, split, threefry,
                                unit_of_words)


def _split_each(k1, k2, num):
    """split(key, num) of every element's key (words k1, k2): num pairs of word arrays."""
    w1, w2 = threefry(k1[:, None], k2[:, None], tnp.arange(num, dtype=np.uint32))
    return [(w1[:, j], w2[:, j]) for j in range(num)]


def _gamma_flat(k1, k2, alpha, log_space):
    """Gamma(alpha) draws (alpha < 1 boosted: Gamma(alpha + 1) u ** (1 / alpha)), or
    their logs, for a vector of alphas with one key (words k1, k2) each: JAX's
    per-element loop, keys and acceptance test, run for all elements at once, each
    element's state frozen once it is accepted (the values vmap of JAX's loop gives)."""
    dt = dtype_of(alpha)

    def c(v):
        return np.array(v, dt)
    boost = alpha >= c(1)
    a = tnp.where(boost, alpha, alpha + c(1))
    d = a - c(1 / 3)
    scale = c(1 / 3) / tnp.sqrt(d)

    def rejected(x2, v, u):
        return (u >= c(1) - c(0.0331) * x2 * x2) & (
            exact.log(u) >= x2 * c(0.5) + d * (c(1) - v + exact.log(v)))

    def positive_v(state):
        k1, k2, x, v = state
        (n1, n2), sub = _split_each(k1, k2, 2)
        nx = normal_of_words(*threefry(*sub, np.uint32(0)), dt)
        todo = v <= c(0)
        return (tnp.where(todo, n1, k1), tnp.where(todo, n2, k2), tnp.where(todo, nx, x),
                tnp.where(todo, c(1) + nx * scale, v))

    def propose(state):
        k1, k2, x2, v, u = state
        (n1, n2), xk, uk = _split_each(k1, k2, 3)
        init = (*xk, tnp.zeros_like(alpha), tnp.full_like(alpha, -1))
        _, _, x, nv = lax.while_loop(lambda s: tnp.any(s[3] <= c(0)), positive_v, init)
        nu = unit_of_words(*threefry(*uk, np.uint32(0)), dt)
        todo = rejected(x2, v, u)
        return tuple(tnp.where(todo, new, old) for new, old in
                     zip((n1, n2, x * x, nv * nv * nv, nu), state))

    key, sub = _split_each(k1, k2, 2)
    init = (*key, tnp.zeros_like(alpha), tnp.ones_like(alpha), tnp.full_like(alpha, 2))
    v = lax.while_loop(lambda s: tnp.any(rejected(*s[2:])), propose, init)[3]
    u = unit_of_words(*threefry(*sub, np.uint32(0)), dt)
    if log_space:
        e = exact.log1p(-u)
        log_boost = tnp.where(boost | (e == c(0)), c(0), e * (c(1) / alpha))
        return exact.log(d) + exact.log(v) + log_boost
    return d * v * tnp.where(boost, c(1), exact.power(c(1) - u, c(1) / alpha))


def _digamma(z):
    """digamma of float64 z >= 1: the recurrence up to z + 10, then the asymptotic series."""
    shift = tnp.zeros_like(z)
    for k in range(10):
        shift = shift + 1 / (z + np.float64(k))
    w = z + np.float64(10)
    w2 = 1 / (w * w)
    series = w2 * (1 / 12 - w2 * (1 / 120 - w2 * (1 / 252 - w2 * (1 / 240 - w2 / 132))))
    return exact.log(w) - 0.5 / w - series - shift


def _dlog_draw_da(a, log_x):
    """d log(x) / da of a Gamma(a) draw x at a fixed quantile (JAX's implicit
    reparameterisation): -dP(a, x)/da / (x pdf(x)) = -(S (log x - digamma(a + 1)) + dS/da) / a,
    where P(a, x) = x**a e**-x / Gamma(a + 1) S and S = sum_n x**n / ((a + 1)...(a + n)),
    summed until every element's terms are below 1e-17 of its sum (float64)."""
    a, log_x = tnp.astype(a, np.float64), tnp.astype(log_x, np.float64)
    x = exact.exp(log_x)

    def term(state):
        n, t, total, inv, dtotal = state
        n = n + np.float64(1)
        t = t * x / (a + n)
        inv = inv + 1 / (a + n)
        return n, t, total + t, inv, dtotal - t * inv
    one, zero = tnp.ones_like(a), tnp.zeros_like(a)
    _, _, total, _, dtotal = lax.while_loop(lambda s: tnp.any(s[1] > 1e-17 * s[2]), term,
                                            (np.float64(0), one, one, zero, zero))
    return -(total * (log_x - _digamma(a + 1)) + dtotal) / a


def _shape_gradient(log_space):
    """The identity on draws y, tied to a so that their gradient in a is the implicit one
    (the rejection loop itself is not differentiated)."""
    tie = custom_vjp(lambda a, y: y)

    def bwd(res, dy):
        a, y = res
        dlog = _dlog_draw_da(a, y if log_space else exact.log(y))
        grad = dlog if log_space else tnp.where(y == 0, 0.0, tnp.astype(y, np.float64) * dlog)
        return dy * tnp.astype(grad, dtype_of(a)), None
    tie.defvjp(lambda a, y: (y, (a, y)), bwd)
    return tie


def _draws(log_space):
    """Gamma draws of the shape of `a` (one key per element, as JAX)."""
    tie = _shape_gradient(log_space)

    def draws(key, a):
        keys = tnp.reshape(split(key, max(1, a.size)), (-1, 2))[:a.size]
        flat = _gamma_flat(keys[:, 0], keys[:, 1], tnp.reshape(lax.stop_gradient(a), (-1,)),
                           log_space)
        return tie(a, tnp.reshape(flat, shape_of(a)))
    return draws


_GAMMA, _LOGGAMMA = _draws(False), _draws(True)


def _gamma(op, key, a, shape, dtype, log_space):
    shape, dt, (a,) = params(op, shape, dtype, a)
    return (_LOGGAMMA if log_space else _GAMMA)(key, tnp.broadcast_to(a, shape))


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) draws."""
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) draws, computed in log space (accurate for small a)."""
    return _gamma("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) draws: ga / (ga + gb) from log-space gamma draws."""
    shape, dt, (a, b) = params("beta", shape, dtype, a, b)
    ka, kb = split(key)
    la, lb = loggamma(ka, a, shape, dt), loggamma(kb, b, shape, dt)
    top = tnp.maximum(la, lb)
    ga, gb = exact.exp(la - top), exact.exp(lb - top)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) draws over alpha's last axis: softmax of log-space gamma draws."""
    alpha = value(alpha, "dirichlet")
    if len(shape_of(alpha)) < 1:
        raise ShapeError(f"dirichlet: alpha must have rank >= 1, got shape {shape_of(alpha)}")
    k = shape_of(alpha)[-1:]
    batch = shape_of(alpha)[:-1] if shape is None else _shape(shape, "dirichlet")
    shape, dt, (alpha,) = params("dirichlet", batch + k, dtype, alpha)
    logs = loggamma(key, alpha, shape, dt)
    e = exact.exp(logs - tnp.max(logs, axis=-1, keepdims=True))
    return e / sum_last(e)[..., None]


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) draws: 2 Gamma(df / 2)."""
    shape, dt, (df,) = params("chisquare", shape, dtype, df)
    return exact.exp(loggamma(key, df / np.array(2, dt), shape, dt)) * np.array(2, dt)


def t(key, df, shape=None, dtype=None):
    """Student's t(df) draws: z sqrt(df / 2 / Gamma(df / 2))."""
    shape, dt, (df,) = params("t", shape, dtype, df)
    kn, kg = split(key)
    half = df / np.array(2, dt)
    return normal(kn, shape, dt) * tnp.sqrt(half / gamma(kg, half, shape, dt))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) draws: a ratio of chi-squares over their degrees of freedom."""
    shape, dt, (dfnum, dfden) = params("f", shape, dtype, dfnum, dfden)
    kd, kn = split(key)
    return (chisquare(kn, dfnum, shape, dt) / dfnum) / (chisquare(kd, dfden, shape, dt) / dfden)


def generalized_normal(key, p, shape=(), dtype=None):
    """Draws with density proportional to exp(-|x| ** p): a random sign times
    Gamma(1 / p) ** (1 / p)."""
    shape, dt, (p,) = params("generalized_normal", shape, dtype, p)
    k1, k2 = split(key)
    g = gamma(k1, 1 / p, shape, dt)
    return rademacher(k2, shape, dt) * exact.power(g, 1 / p)


def ball(key, d, p=2, shape=(), dtype=None):
    """Uniform draws from the unit p-norm ball in d dimensions (shape + (d,))."""
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
        raise ShapeError(f"ball: d must be a positive int, got {d!r}")
    shape, dt, (p,) = params("ball", shape, dtype, p)
    k1, k2 = split(key)
    g = generalized_normal(k1, p, shape + (d,), dt)
    e = exponential(k2, shape, dt)
    return g / exact.power(sum_last(exact.power(tnp.abs(g), p)) + e, 1 / p)[..., None]
