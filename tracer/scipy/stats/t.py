"""jax.scipy.stats.t: Student's t logpdf and pdf."""
import math

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote(x, df, loc, scale)
    z = (x - loc) / scale
    half = df / 2
    norm = (_special.gammaln(half) + tnp.log(scale * scale * math.pi * df) / 2
            - _special.gammaln(half + 0.5))
    return -(norm + (half + 0.5) * tnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    return tnp.exp(logpdf(x, df, loc, scale))
