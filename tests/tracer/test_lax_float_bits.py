"""lax.reduce_precision and lax.nextafter, which work on a float's bits, keep bfloat16
(whose bits are no "f2" float16) and agree with ml_dtypes' rounding and bit steps,
eagerly, jitted on both backends and under vmap; reduce_precision differentiates as the
identity in both modes."""
import ml_dtypes
import numpy as np
import pytest

import tracer
from tracer import lax

BF16 = ml_dtypes.bfloat16
X = np.array([1.5, -3.1, 100.3, 0.0, 7e-3, -250.0], np.float32)
B = X.astype(BF16)
F16 = ml_dtypes.finfo(np.float16)
B16 = ml_dtypes.finfo(BF16)


def run(f, backend, *args):
    return (f if backend is None else tracer.jit(f, backend=backend))(*args)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_reduce_precision_of_and_to_bfloat16(backend):
    to_f16 = run(lambda b: lax.reduce_precision(b, F16.nexp, F16.nmant), backend, B)
    assert to_f16.dtype == BF16
    np.testing.assert_array_equal(to_f16, B.astype(np.float16).astype(BF16))
    to_bf16 = run(lambda x: lax.reduce_precision(x, B16.nexp, B16.nmant), backend, X)
    np.testing.assert_array_equal(to_bf16, X.astype(BF16).astype(np.float32))


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_nextafter_steps_bfloat16_bits(backend):
    up = run(lax.nextafter, backend, B, np.full(B.shape, np.inf, BF16))
    assert up.dtype == BF16
    bits = B.view(np.uint16).astype(np.int32)
    want = np.where(B > 0, bits + 1, np.where(B < 0, bits - 1, 1)).astype(np.uint16)
    np.testing.assert_array_equal(up.view(np.uint16), want)


def test_vmap_and_derivatives_of_reduce_precision():
    f = lambda x: lax.reduce_precision(x, B16.nexp, B16.nmant)
    np.testing.assert_array_equal(tracer.vmap(f)(np.stack([X, -X])),
                                  np.stack([f(X), f(-X)]))
    g = tracer.grad(lambda x: (f(x) * x).sum())(X.astype(np.float64))
    np.testing.assert_allclose(g, f(X).astype(np.float64) + X, rtol=1e-6)
    _, t = tracer.jvp(f, (X,), (np.ones_like(X),))
    np.testing.assert_array_equal(t, np.ones_like(X))
