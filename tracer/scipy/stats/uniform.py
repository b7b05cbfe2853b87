"""jax.scipy.stats.uniform on [loc, loc + scale]: logpdf, pdf (-inf / 0 outside), cdf
and ppf (NaN outside [0, 1])."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    return tnp.where((x > loc + scale) | (x < loc), -np.inf, -tnp.log(scale))


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)           # NaN x gives 0, as JAX's select
    outside = tnp.astype(x > loc + scale, x.dtype)
    return tnp.where(inside, (x - loc) / scale, outside)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote(q, loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
