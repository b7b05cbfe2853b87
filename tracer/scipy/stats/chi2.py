"""jax.scipy.stats.chi2: logpdf, pdf (-inf / 0 below loc), cdf, logcdf, sf, logsf (the
regularized incomplete gamma functions at df / 2)."""
import math

import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote(x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    kernel = (half - 1) * tnp.log(y) - y / 2
    norm = -(_special.gammaln(half) + math.log(2.0) * df / 2)
    return tnp.where(x < loc, -np.inf, norm - tnp.log(scale) + kernel)


def pdf(x, df, loc=0, scale=1):
    return tnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote(x, df, loc, scale)
    return _special.gammainc(df / 2, tnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logcdf(x, df, loc=0, scale=1):
    return tnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote(x, df, loc, scale)
    return _special.gammaincc(df / 2, tnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logsf(x, df, loc=0, scale=1):
    return tnp.log(sf(x, df, loc, scale))
