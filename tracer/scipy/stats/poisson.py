"""jax.scipy.stats.poisson: logpmf, pmf (-inf / 0 below loc and at non-integer k) and
cdf (the upper incomplete gamma function)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpmf(k, mu, loc=0):
    k, mu, loc = _promote(k, mu, loc)
    x = k - loc
    log_probs = _special.xlogy(x, mu) - _special.gammaln(x + 1) - mu
    return tnp.where((x < 0) | (tnp.round(k) != k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return tnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = _promote(k, mu, loc)
    x = k - loc
    return tnp.where(x < 0, 0.0, _special.gammaincc(tnp.floor(1 + x), mu))


def _entropy_sum(mu, max_k, upper):
    """-sum p log p over k < upper (at most max_k terms: a static bound for jit)."""
    k = tnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    return tnp.sum(_special.entr(tnp.where(k < upper[None, :], probs, 0.0)), axis=0)


def entropy(mu, loc=0):
    """The entropy of Poisson(mu), as JAX: summed over k below mu + 20 (mu < 10) or
    mu + 10 sqrt(mu) + 20 (mu < 100), the asymptotic series beyond; 0 at mu = 0."""
    mu, loc = _promote(mu, loc)
    shape = tnp.broadcast_shapes(mu.shape, loc.shape)
    flat = tnp.ravel(mu)
    small = _entropy_sum(flat, 35, tnp.ceil(flat + 20))
    medium = _entropy_sum(flat, 250, tnp.ceil(flat + 10 * tnp.sqrt(flat) + 20))
    safe = tnp.where(flat > 0, flat, 1.0)
    large = 0.5 * tnp.log(2 * np.pi * np.e * safe) - 1.0 / (12 * safe)
    out = tnp.where(flat == 0, 0.0, tnp.where(flat < 10, small,
                                              tnp.where(flat < 100, medium, large)))
    return tnp.broadcast_to(tnp.reshape(out, mu.shape), shape)
