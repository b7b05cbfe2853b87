"""`tracer.scipy.stats`: jax.scipy.stats's distributions, one module each as in JAX
(`from tracer.scipy.stats import norm; norm.logpdf(x, loc, scale)`), with JAX's
functions, defaults and out-of-support values, composed of tracer.scipy.special."""
from tracer.scipy.stats import (bernoulli, beta, binom, cauchy, chi2,  # noqa: F401
                                dirichlet, expon, gamma, geom, gumbel_l, gumbel_r, laplace,
                                logistic, multivariate_normal, norm, pareto, poisson, t,
                                truncnorm, uniform)
from tracer.scipy._util import bfloat16_via_float32 as _bf16

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multivariate_normal",
           "norm", "pareto", "poisson", "t", "truncnorm", "uniform"]

for _module in (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, geom, gumbel_l,
                gumbel_r, laplace, logistic, multivariate_normal, norm, pareto, poisson, t,
                truncnorm, uniform):
    for _name in [n for n in dir(_module) if not n.startswith("_")]:
        if callable(getattr(_module, _name)) and _name not in ("np", "tnp", "math", "nn"):
            setattr(_module, _name, _bf16(getattr(_module, _name)))
