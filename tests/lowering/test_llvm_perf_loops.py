"""Elementwise loops: a costly value used twice in one loop is computed once and kept in
registers (no buffer of its own), also inside long chains; float32 exp/tanh stay within
an ulp of NumPy in fused code."""
import numpy as np

import tracer
import tracer.numpy as tnp


def test_shared_expensive_value_is_not_stored():
    f = tracer.jit(lambda x: (lambda e: e * e + e)(tnp.exp(x)))
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    program = f.lower(x)
    assert len(program.graph.nodes) == 1 and not program._alloc[:-1]
    e = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(f(x), e * e + e, rtol=2e-6)


def test_shared_values_returned_and_in_long_chains():
    def f(x):
        e = tnp.tanh(x)
        for i in range(60):
            e = tnp.exp(-e * e) + e * (0.5 + i / 1000)
        return e, tnp.exp(x) * 2 + tnp.exp(x)
    x = np.linspace(-3, 3, 777, dtype=np.float32)
    got = tracer.jit(f)(x)
    e = np.tanh(x.astype(np.float64))
    for i in range(60):
        e = np.exp(-e * e) + e * (0.5 + i / 1000)
    np.testing.assert_allclose(got[0], e, rtol=1e-4)
    np.testing.assert_allclose(got[1], 3 * np.exp(x.astype(np.float64)), rtol=2e-6)


def test_w1_expression_close_to_numpy():
    def w1(lib):
        return lambda x: lib.tanh(x) * (1 / (1 + lib.exp(-x))) + 0.5 * x * x
    x = np.concatenate([np.linspace(-30, 30, 20001, dtype=np.float32),
                        np.float32([0.0, -0.0, 1e-30, -1e-30, 0.9, -0.9, 88.0, -104.0])])
    got = tracer.jit(w1(tnp))(x).astype(np.float64)
    x64 = x.astype(np.float64)
    scale = np.abs(np.tanh(x64) / (1 + np.exp(-x64))) + 0.5 * x64 * x64  # terms cancel
    assert (np.abs(got - w1(np)(x64)) <= 4 * np.finfo(np.float32).eps * scale + 1e-45).all()
    assert np.isnan(tracer.jit(w1(tnp))(np.float32([np.nan]))).all()
