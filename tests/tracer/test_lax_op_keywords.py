"""jax.lax's keywords on elementwise ops: `accuracy=` (lax.AccuracyMode) on the
transcendental ops, and lax.mul's `out_dtype=` (the product computed in out_dtype), eagerly,
under jit on both backends, under grad and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

X = np.linspace(-3, 3, 7, dtype=np.float32)
I8 = np.array([3, -100, 127], np.int8)


def modes(x):
    return (lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST),
            lax.tanh(x, accuracy=lax.AccuracyMode.DEFAULT))


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_accuracy_and_out_dtype(backend):
    def f(x, a):
        return modes(x) + (lax.mul(a, a, out_dtype=np.int32),)
    run = f if backend is None else tracer.jit(f, backend=backend)
    e, t, m = run(X, I8)
    np.testing.assert_allclose(e, np.exp(X), rtol=1e-6)
    np.testing.assert_allclose(t, np.tanh(X), rtol=1e-6, atol=1e-7)
    assert m.dtype == np.int32
    np.testing.assert_array_equal(m, I8.astype(np.int32) ** 2)


def test_under_grad_and_vmap():
    g = tracer.vmap(tracer.grad(lambda x: lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST)))(X)
    np.testing.assert_allclose(g, np.exp(X), rtol=1e-6)
    g = tracer.grad(lambda x: lax.mul(x, x, out_dtype=np.float64))(np.float32(1.5))
    np.testing.assert_allclose(g, 3.0)
    v = tracer.vmap(lambda a: lax.mul(a, a, out_dtype=np.int16))(I8)
    np.testing.assert_array_equal(v, I8.astype(np.int16) ** 2)


def test_accuracy_is_checked():
    with pytest.raises(TypeError, match="lax.add: accuracy"):
        lax.add(X, X, accuracy=lax.AccuracyMode.HIGHEST)
    with pytest.raises(TypeError, match="lax.exp: accuracy must be"):
        lax.exp(X, accuracy="high")
