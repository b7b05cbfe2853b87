"""NumPy 2's C-named scalar types and JAX's default ones (int_, uint, intp, double, float_ ...)
are tracer.numpy names, usable as dtypes eagerly, under jit, grad and vmap."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import DTypeError

NAMES = {"int_": np.int64, "uint": np.uint64, "intp": np.int64, "uintp": np.uint64,
         "half": np.float16, "single": np.float32, "double": np.float64, "float_": np.float64}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_scalar_type_name_is_a_dtype(name):
    t = getattr(tnp, name)
    assert np.dtype(t) == NAMES[name]
    assert tnp.ones(3, dtype=t).dtype == NAMES[name]
    assert tracer.jit(lambda x: x.astype(t))(np.arange(3.0)).dtype == NAMES[name]
    assert tracer.vmap(lambda x: tnp.asarray(x, dtype=t))(np.arange(3.0)).dtype == NAMES[name]


@pytest.mark.parametrize("name", ["half", "single", "double", "float_"])
def test_float_scalar_type_under_grad(name):
    t = getattr(tnp, name)
    g = tracer.grad(lambda x: tnp.sum(x.astype(t) ** 2).astype(np.float64))(np.arange(3.0))
    np.testing.assert_allclose(g, 2 * np.arange(3.0))


def test_complex_default_type_raises_dtype_error():
    with pytest.raises(DTypeError, match="complex128 is not supported"):
        tnp.ones(2, dtype=tnp.complex_)
