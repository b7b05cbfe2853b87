"""lax.top_k(operand, k, axis=) as jax.lax: the k largest entries along any axis, with their
int32 indices, eagerly, under jit on both backends, under grad and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

X = np.random.default_rng(5).permutation(24).reshape(2, 4, 3).astype(np.float32)


def expected(x, k, axis):
    index = np.flip(np.argsort(x, axis=axis, kind="stable"), axis)
    index = np.take(index, np.arange(k), axis=axis)
    return np.take_along_axis(x, index, axis), index.astype(np.int32)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_top_k_along_an_axis(backend, axis):
    def f(x):
        return lax.top_k(x, 2, axis=axis)
    run = f if backend is None else tracer.jit(f, backend=backend)
    for got, want in zip(run(X), expected(X, 2, axis)):
        np.testing.assert_array_equal(got, want)


def test_top_k_axis_grad_and_vmap():
    g = tracer.grad(lambda x: lax.top_k(x, 1, axis=1)[0].sum())(X)
    want = np.zeros_like(X)
    np.put_along_axis(want, expected(X, 1, 1)[1].astype(np.int64), 1.0, axis=1)
    np.testing.assert_array_equal(g, want)
    values = tracer.vmap(lambda x: lax.top_k(x, 3, axis=0)[0])(X)
    np.testing.assert_array_equal(values[1], expected(X[1], 3, 0)[0])
    with pytest.raises(ValueError, match="k=5"):
        lax.top_k(X, 5, axis=1)


def test_abstract_long_axes_allocate_nothing_and_top_k_refuses_int32_overflow():
    """lax_test's testTopKOverflow: eval_shape of top_k over 2**31 + 1 entries raises
    JAX's ValueError; it used to build an arange of the axis (16 GiB) while tracing.
    take_along_axis over a 2**24-long abstract axis traces in a few MiB."""
    import tracemalloc
    import ml_dtypes
    big = tracer.ShapeDtypeStruct((2 ** 31 + 1,), np.dtype(ml_dtypes.bfloat16))
    with pytest.raises(ValueError, match="top_k returns int32 indices, which will overflow"):
        tracer.eval_shape(lambda x: lax.top_k(x, 100), big)
    long = tracer.ShapeDtypeStruct((2 ** 24,), np.dtype(np.float32))
    tracemalloc.start()
    try:
        out = tracer.eval_shape(lambda x: lax.top_k(x, 100), long)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out[0].shape == (100,) and peak < 32 * 2 ** 20
