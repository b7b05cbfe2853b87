"""jax.scipy.stats.cauchy: logpdf, pdf, cdf, logcdf, sf, logsf, ppf and isf."""
import math

from tracer import numpy as tnp
from tracer.scipy._util import mirrored_tails as _mirrored_tails
from tracer.scipy._util import promote_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    z = (x - loc) / scale
    return -(tnp.log(math.pi * scale) + tnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return 0.5 + tnp.arctan((x - loc) / scale) / math.pi


def logcdf(x, loc=0, scale=1):
    return tnp.log(cdf(x, loc, scale))


sf, logsf = _mirrored_tails(cdf, logcdf)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote(q, loc, scale)
    return tnp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = _promote(q, loc, scale)
    return tnp.tan(math.pi / 2 - math.pi * q) * scale + loc
