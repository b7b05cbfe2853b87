"""`tracer.scipy`: jax.scipy's special, stats and linalg names, composed of tracer.numpy,
tracer.lax, tracer.nn and tracer.numpy.linalg functions (real dtypes only)."""
from tracer.scipy import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
