"""`tracer.scipy.stats`: jax.scipy.stats's distributions, one module each as in JAX
(`from tracer.scipy.stats import norm; norm.logpdf(x, loc, scale)`), with JAX's
functions, defaults and out-of-support values, composed of tracer.scipy.special."""
from tracer.scipy.stats import (bernoulli, beta, binom, cauchy, chi2,  # noqa: F401
                                dirichlet, expon, gamma, geom, gumbel_l, gumbel_r, laplace,
                                logistic, multivariate_normal, norm, pareto, poisson, t,
                                truncnorm, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multivariate_normal",
           "norm", "pareto", "poisson", "t", "truncnorm", "uniform"]
