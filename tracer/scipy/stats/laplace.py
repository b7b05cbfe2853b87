"""jax.scipy.stats.laplace: logpdf, pdf and cdf."""
from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return -(tnp.abs(x - loc) / scale + tnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    d = (x - loc) / scale
    return tnp.where(d <= 0, 0.5 * tnp.exp(tnp.minimum(d, 0)),
                     1 - 0.5 * tnp.exp(-tnp.maximum(d, 0)))
