"""jax.scipy.stats.geom: logpmf and pmf of the number of trials to the first success
(-inf / 0 for k - loc <= 0)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact
from tracer.scipy.special import xlog1py


def logpmf(k, p, loc=0):
    k, p, loc = promote_inexact(k, p, loc)
    x = k - loc
    return tnp.where(x <= 0, -np.inf, xlog1py(x - 1, -p) + tnp.log(p))


def pmf(k, p, loc=0):
    return tnp.exp(logpmf(k, p, loc))
