"""jax.scipy.stats.beta: logpdf, pdf, cdf, logcdf, sf, logsf on [loc, loc + scale]
(-inf outside; NaN for a, b or scale <= 0), through betaln and betainc."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_linear = _special.xlogy(a - 1, y) + _special.xlog1py(b - 1, -y)
    log_probs = -_special.betaln(a, b) + log_linear - tnp.log(scale)
    out = tnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return tnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote(x, a, b, loc, scale)
    return _special.betainc(a, b, tnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    return tnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote(x, a, b, loc, scale)
    return _special.betainc(b, a, 1 - tnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    return tnp.log(sf(x, a, b, loc, scale))
