"""jax.scipy.stats.multivariate_normal: logpdf and pdf through the Cholesky factor of
cov (a scalar cov is an isotropic one; a scalar mean a univariate normal)."""
import math

import numpy as np

from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact as _promote


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = _promote(x, mean, cov)
    if not mean.shape:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2 * np.pi) + tnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return (-0.5 * tnp.sum(y * y, axis=-1) / cov
                - n / 2 * (math.log(2 * np.pi) + tnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    low = tnp.linalg.cholesky(cov)
    z = tnp.linalg.solve(low, y[..., None])[..., 0]              # L^-1 (x - mean)
    log_diag = tnp.log(tnp.diagonal(low, axis1=-2, axis2=-1))
    return (-0.5 * tnp.sum(z * z, axis=-1) - n / 2 * math.log(2 * np.pi)
            - tnp.sum(log_diag, axis=-1))


def pdf(x, mean, cov):
    return tnp.exp(logpdf(x, mean, cov))
