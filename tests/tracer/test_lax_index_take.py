"""lax.index_take wraps each index around its axis (modulo the size), as JAX's, eagerly,
jitted on both backends, under grad and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

X = np.arange(60.0).reshape(3, 4, 5)
I, J = np.array([4, -1, -7, 3]), np.array([9, -6, 0, 12])


def take(x, i, j):
    return lax.index_take(x, (i, j), (0, 2))


def reference(x):
    return x[np.mod(I, 3), :, np.mod(J, 5)]            # (4 indices, 4) as JAX's gather


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_out_of_range_indices_wrap(backend):
    run = take if backend is None else tracer.jit(take, backend=backend)
    np.testing.assert_array_equal(run(X, I, J), reference(X))


def test_grad_and_vmap():
    g = tracer.grad(lambda x: take(x, I, J).sum())(X)
    want = np.zeros_like(X)
    np.add.at(want, (np.mod(I, 3), slice(None), np.mod(J, 5)), 1.0)
    np.testing.assert_array_equal(g, want)
    out = tracer.vmap(take, in_axes=(None, 0, None))(X, np.stack([I, I + 3]), J)
    np.testing.assert_array_equal(out, np.stack([reference(X)] * 2))
