"""jax.scipy.stats.beta: logpdf, pdf, cdf, logcdf, sf, logsf on [loc, loc + scale]
(-inf outside; NaN for a, b or scale <= 0), through betaln and betainc."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact
from tracer.scipy.special import betainc, betaln, xlog1py, xlogy


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - tnp.log(scale)
    out = tnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return tnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    return betainc(a, b, tnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    return tnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    return betainc(b, a, 1 - tnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    return tnp.log(sf(x, a, b, loc, scale))
