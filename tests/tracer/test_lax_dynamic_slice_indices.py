"""lax.dynamic_slice / dynamic_update_slice start indices as JAX takes them: integer
scalars of one dtype (Python ints go with any), else a TypeError naming the op."""
import numpy as np
import pytest

import tracer
from tracer import lax

X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_python_ints_mix_with_any_integer_dtype(backend):
    f = lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2))
    run = f if backend is None else tracer.jit(f, backend=backend)
    np.testing.assert_array_equal(run(X, np.int16(1)), X[1:3, 1:3])


def test_grad_and_vmap_with_one_dtype():
    f = lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)).sum()
    np.testing.assert_array_equal(tracer.grad(f)(X, np.int32(1)),
                                  np.pad(np.ones((2, 2)), ((1, 0), (1, 1))))
    starts = np.array([0, 1], np.int32)
    np.testing.assert_array_equal(tracer.vmap(f, in_axes=(None, 0))(X, starts),
                                  [X[:2, :2].sum(), X[1:3, 1:3].sum()])


def test_mixed_dtypes_and_arrays_are_type_errors():
    with pytest.raises(TypeError, match="index arguments to dynamic_slice must be integers "
                                        "of the same type, got: int16, int32"):
        lax.dynamic_slice(X, (np.int32(1), np.int16(2)), (2, 2))
    with pytest.raises(TypeError, match="index arguments to dynamic_update_slice must be"):
        lax.dynamic_update_slice(X, np.zeros((2, 2)), (np.int32(1), np.int16(2)))
    with pytest.raises(TypeError, match="lax.dynamic_slice: start indices must be integer "
                                        "scalars"):
        lax.dynamic_slice_in_dim(X, np.array([2, 2]), 3)
