"""lax.reduce_window beyond the add/max/min kernel, as jax.lax: window_dilation, a traced
init_value, any computation and pytrees of operands, against an explicit loop over the
windows; eagerly, under jit on both backends, under grad and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(2)
X = RNG.standard_normal((4, 6)).astype(np.float32)
Y = RNG.standard_normal((4, 6)).astype(np.float32)
WINDOW, STRIDES, PADS, BDIL, WDIL = (2, 2), (1, 2), ((0, 1), (1, 2)), (2, 1), (1, 2)


def loop(x, init, fold):
    """Each window's elements (init over padding and dilation holes) folded from init."""
    big = np.full([(n - 1) * d + 1 + lo + hi for n, d, (lo, hi) in zip(x.shape, BDIL, PADS)],
                  init, x.dtype)
    big[tuple(slice(lo, lo + (n - 1) * d + 1, d) for n, d, (lo, _) in
              zip(x.shape, BDIL, PADS))] = x
    span = [(k - 1) * d + 1 for k, d in zip(WINDOW, WDIL)]
    shape = [(n - s) // st + 1 for n, s, st in zip(big.shape, span, STRIDES)]
    out = np.empty(shape, x.dtype)
    for i, j in np.ndindex(*shape):
        acc = np.float32(init)
        for a, b in np.ndindex(*WINDOW):
            acc = fold(acc, big[i * STRIDES[0] + a * WDIL[0], j * STRIDES[1] + b * WDIL[1]])
        out[i, j] = acc
    return out


def window(x, init, computation=lax.max):
    return lax.reduce_window(x, init, computation, WINDOW, STRIDES, PADS, BDIL, WDIL)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_window_dilation_and_traced_init(backend):
    run = window if backend is None else tracer.jit(window, static_argnums=2, backend=backend)
    np.testing.assert_array_equal(run(X, np.float32(-np.inf)), loop(X, -np.inf, max))
    np.testing.assert_allclose(run(X, np.float32(0.5), lax.add), loop(X, 0.5, np.add),
                               rtol=1e-6)


def test_any_computation_and_pytrees():
    def fold(a, b):
        return a * b - b
    np.testing.assert_allclose(window(X, np.float32(1), fold), loop(X, 1, fold), rtol=1e-5)
    s, m = lax.reduce_window((X, Y), (np.float32(0), np.float32(-np.inf)),
                             lambda a, b: (a[0] + b[0], lax.max(a[1], b[1])),
                             WINDOW, STRIDES, PADS, BDIL, WDIL)
    np.testing.assert_allclose(s, loop(X, 0, np.add), rtol=1e-6)
    np.testing.assert_array_equal(m, loop(Y, -np.inf, max))


def test_grad_and_vmap_of_the_fold():
    def f(x, init):
        return (window(x, init, lambda a, b: a * b) ** 2).sum()
    gx, gi = tracer.grad(f, argnums=(0, 1))(X, np.float32(1.5))
    eps = 1e-3
    for idx in [(0, 0), (1, 3), (3, 5)]:
        d = np.zeros_like(X, dtype=np.float64)
        d[idx] = eps
        num = (f(X + d, np.float32(1.5)) - f(X - d, np.float32(1.5))) / (2 * eps)
        np.testing.assert_allclose(gx[idx], num, rtol=2e-2, atol=1e-3)
    num = (f(X, np.float32(1.5 + eps)) - f(X, np.float32(1.5 - eps))) / (2 * eps)
    np.testing.assert_allclose(gi, num, rtol=2e-2)
    out = tracer.vmap(window, in_axes=(0, None))(np.stack([X, Y]), np.float32(-np.inf))
    np.testing.assert_array_equal(out[1], loop(Y, -np.inf, max))


def test_bad_arguments():
    with pytest.raises(TypeError, match="init_values to be scalars"):
        lax.reduce_window(X, np.zeros(1, np.float32), lax.max, (2, 2))
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce_window(X, 0.0, lambda a, b: [a + b], (1, 1))
