"""jax.scipy.stats.truncnorm: the normal truncated to [a, b] (in standard units):
logpdf, pdf, logcdf, cdf, logsf, sf, with JAX's (= SciPy's) log Gaussian mass, taken in
whichever tail keeps it accurate (-inf outside [a, b]; NaN for a >= b)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special
from tracer.scipy.stats import norm as _norm


def _log_diff(x, y):
    """log(e^x - e^y) (-inf where x == y == -inf)."""
    signs = tnp.stack([tnp.ones_like(x), -tnp.ones_like(y)])
    return _special.logsumexp(tnp.stack([x, y]), b=signs, axis=0)


def _log_gauss_mass(a, b):
    """log(ndtr(b) - ndtr(a)): in the left tail, the right tail or the middle."""
    a, b = tnp.broadcast_arrays(a, b)
    right = a > 0
    central = ~((b <= 0) | right)
    a_tail, b_tail = tnp.where(right, -b, a), tnp.where(right, -a, b)
    tail = _log_diff(_special.log_ndtr(b_tail), _special.log_ndtr(a_tail))
    return tnp.where(central, tnp.log1p(-_special.ndtr(a) - _special.ndtr(-b)), tail)


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote(x, a, b, loc, scale)
    val = _norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = tnp.where((z < a) | (z > b), -np.inf, val)
    return tnp.where(a >= b, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote(x, a, b, loc, scale)
    x, a, b = tnp.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    mass = _log_gauss_mass(a, b)
    lcdf = _log_gauss_mass(a, x) - mass
    lsf = _log_gauss_mass(x, b) - mass
    out = tnp.where(x > a, lcdf, 0.0)                            # jnp.select, last first
    out = tnp.where(lcdf > -0.1, tnp.log1p(-tnp.exp(lsf)), out)  # no cancellation near 1
    out = tnp.where(x <= a, -np.inf, out)
    out = tnp.where(x >= b, 0.0, out)
    return tnp.where(a >= b, np.nan, out)


def cdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote(x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    return tnp.exp(logsf(x, a, b, loc, scale))
