"""jax.scipy.stats.geom: logpmf and pmf of the number of trials to the first success
(-inf / 0 for k - loc <= 0)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpmf(k, p, loc=0):
    k, p, loc = _promote(k, p, loc)
    x = k - loc
    return tnp.where(x <= 0, -np.inf, _special.xlog1py(x - 1, -p) + tnp.log(p))


def pmf(k, p, loc=0):
    return tnp.exp(logpmf(k, p, loc))
