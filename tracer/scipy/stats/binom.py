"""jax.scipy.stats.binom: logpmf and pmf (-inf / 0 outside loc <= k < loc + n + 1)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpmf(k, n, p, loc=0):
    k, n, p, loc = _promote(k, n, p, loc)
    y = k - loc
    comb_term = _special.gammaln(n + 1) - (_special.gammaln(y + 1) + _special.gammaln(n - y + 1))
    log_linear = _special.xlogy(y, p) + _special.xlog1py(n - y, -p)
    log_probs = comb_term + log_linear
    log_probs = tnp.where(((y == 0) & (n == 0)) | (log_linear == 0), 0.0, log_probs)
    return tnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    return tnp.exp(logpmf(k, n, p, loc))
