"""jax.scipy.stats.dirichlet: logpdf and pdf of x (k, ...) or (k - 1, ...) (the last
coordinate implied) under alpha (k,); -inf / 0 off the simplex (to 1e-6)."""
import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote
from tracer.scipy import special as _special


def logpdf(x, alpha):
    x, alpha = _promote(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = tnp.concatenate([x, 1 - tnp.sum(x, axis=0, keepdims=True)], axis=0)
    normalize = tnp.sum(_special.gammaln(alpha)) - _special.gammaln(tnp.sum(alpha))
    alpha = tnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = tnp.sum(_special.xlogy(alpha - 1, x), axis=0) - normalize
    simplex = tnp.all(x > 0, axis=0) & (tnp.abs(tnp.sum(x, axis=0) - 1) < 1e-6)
    return tnp.where(simplex, log_probs, -np.inf)


def pdf(x, alpha):
    return tnp.exp(logpdf(x, alpha))
