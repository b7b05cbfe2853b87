"""jax.scipy.stats.gumbel_r: the right-skewed Gumbel (maximum) distribution's logpdf, pdf,
logcdf, cdf, logsf, sf and ppf (NaN for scale <= 0, ppf NaN outside (0, 1))."""
import numpy as np

from tracer import nn
from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    z = (x - loc) / scale
    return tnp.where(scale > 0, -tnp.log(scale) - (z + tnp.exp(-z)), np.nan)


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where(scale > 0, -tnp.exp((loc - x) / scale), np.nan)


def cdf(x, loc=0, scale=1):
    return tnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where(scale > 0, 1 - tnp.exp(-tnp.exp((loc - x) / scale)), np.nan)


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where(scale > 0, nn.log1mexp(tnp.exp((loc - x) / scale)), np.nan)


def ppf(p, loc=0, scale=1):
    p, loc, scale = _promote(p, loc, scale)
    q = loc - scale * tnp.log(_special.xlogy(-1.0, p))
    return tnp.where((p > 0) & (p < 1), q, np.nan)
