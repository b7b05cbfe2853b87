"""jax.scipy.stats.gamma: logpdf, pdf (-inf / 0 below loc), cdf, logcdf, sf, logsf."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact
from tracer.scipy.special import gammainc, gammaincc, gammaln, xlogy


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    ok = x >= loc
    y = tnp.where(ok, (x - loc) / scale, 1.0)
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + tnp.log(scale))
    return tnp.where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    return gammainc(a, tnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x, a, loc=0, scale=1):
    return tnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    y = (x - loc) / scale
    return tnp.where(y < 0, 1.0, gammaincc(a, tnp.maximum(y, 0)))


def logsf(x, a, loc=0, scale=1):
    return tnp.log(sf(x, a, loc, scale))
