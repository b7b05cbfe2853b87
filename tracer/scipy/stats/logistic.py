"""jax.scipy.stats.logistic: logpdf, pdf, cdf, sf, ppf and isf (through expit / logit)."""
from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    half = (x - loc) / scale / 2
    return -2.0 * tnp.logaddexp(half, -half) - tnp.log(scale)


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return _special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return _special.expit(-(x - loc) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return _special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return -_special.logit(x) * scale + loc
