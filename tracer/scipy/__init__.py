"""`tracer.scipy`: jax.scipy's special, stats, linalg and signal names, composed of tracer.numpy,
tracer.lax, tracer.nn and tracer.numpy.linalg functions (real dtypes only)."""
from tracer.scipy import linalg, signal, special, stats  # noqa: F401

__all__ = ["linalg", "signal", "special", "stats"]
