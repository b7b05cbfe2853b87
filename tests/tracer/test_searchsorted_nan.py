"""searchsorted in sort's order, where NaN comes after everything (NumPy and JAX): a NaN
query goes before the first NaN (left) or at the end (right), and a NaN in the sorted
array is after every number. Found by comparing against NumPy on edge values."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

A = [-np.inf, -1.0, 0.0, 2.0, np.inf, np.nan, np.nan]
V = [np.nan, 1.5, np.inf, -np.inf, 2.0, -0.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("run", ["eager", "numpy", "llvm"])
def test_searchsorted_puts_nan_last(dtype, side, run):
    a, v = np.array(A, dtype), np.array(V, dtype)
    f = lambda a, v: tnp.searchsorted(a, v, side=side)
    got = f(a, v) if run == "eager" else tracer.jit(f, backend=run)(a, v)
    want = np.searchsorted(np.array(A), np.array(V), side=side)    # float64: NumPy's order
    np.testing.assert_array_equal(np.asarray(got), want)


def test_searchsorted_of_integers_unchanged():
    a, v = np.array([1, 3, 3, 7]), np.array([0, 3, 8])
    for side in ("left", "right"):
        np.testing.assert_array_equal(tracer.jit(lambda a, v: tnp.searchsorted(a, v, side))(a, v),
                                      np.searchsorted(a, v, side))
