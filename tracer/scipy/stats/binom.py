"""jax.scipy.stats.binom: logpmf and pmf (-inf / 0 outside loc <= k < loc + n + 1)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact
from tracer.scipy.special import gammaln, xlog1py, xlogy


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_inexact(k, n, p, loc)
    y = k - loc
    comb_term = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    log_linear = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = comb_term + log_linear
    log_probs = tnp.where(((y == 0) & (n == 0)) | (log_linear == 0), 0.0, log_probs)
    return tnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    return tnp.exp(logpmf(k, n, p, loc))
