"""jax.scipy.stats.pareto: logpdf, pdf, cdf, logcdf, sf, logsf (below loc + scale: -inf
density, cdf 0, sf 1) and ppf (NaN outside [0, 1])."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote(x, b, loc, scale)
    z = (x - loc) / scale
    log_probs = -(tnp.log(scale / b) + (b + 1) * tnp.log(z))
    return tnp.where(x < loc + scale, -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote(x, b, loc, scale)
    z = (x - loc) / scale
    return tnp.where(x < loc + scale, 0.0, 1 - tnp.power(z, -b))


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote(x, b, loc, scale)
    z = (x - loc) / scale
    return tnp.where(x < loc + scale, -np.inf, tnp.log1p(-tnp.power(z, -b)))


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote(x, b, loc, scale)
    z = (x - loc) / scale
    return tnp.where(x < loc + scale, 0.0, -b * tnp.log(z))


def sf(x, b, loc=0, scale=1):
    return tnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = _promote(q, b, loc, scale)
    val = loc + scale * tnp.power(1 - q, -1 / b)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, val)
