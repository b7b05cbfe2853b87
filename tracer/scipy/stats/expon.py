"""jax.scipy.stats.expon: logpdf, pdf, cdf, logcdf, sf, logsf (below loc: -inf density,
cdf 0, sf 1) and ppf (NaN outside [0, 1])."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where(x < loc, -np.inf, -((x - loc) / scale + tnp.log(scale)))


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where(x < loc, 0.0, -tnp.expm1((loc - x) / scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where(x < loc, 0.0, (loc - x) / scale)


def sf(x, loc=0, scale=1):
    return tnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return tnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote(q, loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * tnp.log1p(-q))
