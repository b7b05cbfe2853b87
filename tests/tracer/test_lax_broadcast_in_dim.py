"""lax.broadcast_in_dim with broadcast_dimensions in any order (as JAX: out[i] reads
operand[i[dims[0]], i[dims[1]], ...]), eagerly, jitted on both backends, under grad and
vmap, and JAX's shape checks as TypeErrors."""
import numpy as np
import pytest

import tracer
from tracer import lax

Y = np.arange(6.0).reshape(2, 3)


def reference(y):
    out = np.empty((3, 4, 2))
    for i, j, k in np.ndindex(out.shape):
        out[i, j, k] = y[k, i]                     # operand dim 0 -> out 2, dim 1 -> out 0
    return out


def f(y):
    return lax.broadcast_in_dim(y, (3, 4, 2), (2, 0))


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_unordered_dimensions(backend):
    run = f if backend is None else tracer.jit(f, backend=backend)
    np.testing.assert_array_equal(run(Y), reference(Y))


def test_grad_and_vmap():
    np.testing.assert_array_equal(tracer.grad(lambda y: (f(y) * reference(Y)).sum())(Y),
                                  4 * Y)
    np.testing.assert_array_equal(tracer.vmap(f)(np.stack([Y, -Y])),
                                  np.stack([reference(Y), -reference(Y)]))


@pytest.mark.parametrize("shape, out, dims, message", [
    ((2,), (2, 2), (0, 1), "must have length equal to operand ndim"),
    ((2, 2), (2,), (0, 1), "must have equal or higher rank"),
    ((2,), (2, 3), (2,), "must be a subset of output dimensions"),
    ((2,), (3,), (0,), "must either be 1, or be equal"),
    ((2, 2), (2, 2), (0, 0), "must not contain duplicates"),
])
def test_shape_checks(shape, out, dims, message):
    with pytest.raises(TypeError, match=f"lax.broadcast_in_dim .*{message}"):
        lax.broadcast_in_dim(np.ones(shape), out, dims)
