"""tracer.random: JAX's counter-based PRNG (core.py) and JAX's distributions, with JAX's
samplers' algorithms (continuous.py, gamma.py, discrete.py), all as tracer.numpy ops."""
from tracer.random.core import (PRNGKey, bernoulli, bits, clone, fold_in, key,  # noqa: F401
                                key_data, key_dtype, key_impl, normal, permutation,
                                randint, shuffle, split, uniform, wrap_key_data)
from tracer.random.continuous import (categorical, cauchy, double_sided_maxwell,  # noqa: F401
                                      exponential, gumbel, laplace, logistic, lognormal,
                                      maxwell,
                                      multivariate_normal, orthogonal, pareto, rademacher,
                                      rayleigh, triangular, truncated_normal, wald,
                                      weibull_min)
from tracer.random.gamma import (ball, beta, chisquare, dirichlet, f, gamma,  # noqa: F401
                                 generalized_normal, loggamma, t)
from tracer.random.discrete import (binomial, choice, geometric, multinomial,  # noqa: F401
                                    poisson)
