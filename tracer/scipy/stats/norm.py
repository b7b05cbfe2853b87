"""jax.scipy.stats.norm: the normal distribution, through tracer.scipy.special's ndtr,
log_ndtr and ndtri (so logcdf and logsf stay accurate far into the tails)."""
import math

from tracer import numpy as tnp
from tracer.scipy._util import mirrored_tails as _mirrored_tails
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    scale_sq = scale * scale
    return ((x - loc) * (x - loc) / scale_sq + tnp.log(2 * math.pi * scale_sq)) / -2.0


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return _special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return _special.log_ndtr((x - loc) / scale)


sf, logsf = _mirrored_tails(cdf, logcdf)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote(q, loc, scale)
    return _special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = _promote(q, loc, scale)
    return ppf(1 - q, loc, scale)
