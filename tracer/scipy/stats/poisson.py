"""jax.scipy.stats.poisson: logpmf, pmf (-inf / 0 below loc and at non-integer k) and
cdf (the upper incomplete gamma function)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact
from tracer.scipy.special import gammaincc, gammaln, xlogy


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_inexact(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return tnp.where((x < 0) | (tnp.round(k) != k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return tnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote_inexact(k, mu, loc)
    x = k - loc
    return tnp.where(x < 0, 0.0, gammaincc(tnp.floor(1 + x), mu))
