"""Shared by the NumPy-name tests: one op, eagerly and jitted on both backends, against
the value NumPy gives."""
import numpy as np

import tracer

BACKENDS = ["numpy", "llvm"]


def agree(f, want, *args, rtol=1e-6, atol=1e-6, eager=True, same_dtype=True,
          backends=BACKENDS):
    """f(*args) eagerly (unless `eager` is False: f uses what only traced values have,
    `.at` or methods NumPy spells otherwise) and jitted on both backends (or `backends`:
    a many-case table may compile only some of its cases) equals `want`: its shape, its
    dtype (if `same_dtype`) and its values, NaN where it has NaN."""
    runs = ([f(*args)] if eager else []) + [tracer.jit(f, backend=b)(*args) for b in backends]
    for got in runs:
        got = np.asarray(got)
        assert got.shape == np.shape(want), (got.shape, np.shape(want))
        assert not same_dtype or got.dtype == np.asarray(want).dtype, (got.dtype, want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def samples(seed):
    """(X, XN, W, rng) for the reduction tests: a float32 (3, 4) array, X with two NaNs,
    a bool mask, and the generator that drew them, for more."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    xn = x.copy()
    xn[0, 1] = xn[2, 3] = np.nan
    return x, xn, rng.random((3, 4)) > 0.4, rng
