"""jax.scipy.stats.gamma: logpdf, pdf (-inf / 0 below loc), cdf, logcdf, sf, logsf."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote(x, a, loc, scale)
    ok = x >= loc
    y = tnp.where(ok, (x - loc) / scale, 1.0)
    log_probs = _special.xlogy(a - 1, y) - y - (_special.gammaln(a) + tnp.log(scale))
    return tnp.where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote(x, a, loc, scale)
    return _special.gammainc(a, tnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x, a, loc=0, scale=1):
    return tnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote(x, a, loc, scale)
    y = (x - loc) / scale
    return tnp.where(y < 0, 1.0, _special.gammaincc(a, tnp.maximum(y, 0)))


def logsf(x, a, loc=0, scale=1):
    return tnp.log(sf(x, a, loc, scale))
