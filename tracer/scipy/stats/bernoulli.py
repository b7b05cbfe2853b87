"""jax.scipy.stats.bernoulli: logpmf, pmf, cdf and ppf (-inf / 0 off {0, 1} + loc; NaN for
p outside [0, 1] in cdf and ppf)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpmf(k, p, loc=0):
    k, p, loc = _promote(k, p, loc)
    x = k - loc
    log_probs = _special.xlogy(x, p) + _special.xlog1py(1 - x, -p)
    return tnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return tnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = _promote(k, p)
    bad = tnp.isnan(k) | tnp.isnan(p) | (p < 0) | (p > 1)
    out = tnp.where(k < 0, 0.0, tnp.where(k < 1, 1 - p, 1.0))
    return tnp.where(bad, np.nan, out)


def ppf(q, p):
    q, p = _promote(q, p)
    bad = tnp.isnan(q) | tnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return tnp.where(bad, np.nan, tnp.astype(q > 1 - p, q.dtype))
