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


ABSTRACT = ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating"]


@pytest.mark.parametrize("name", ABSTRACT)
def test_abstract_scalar_types_classify_dtypes_as_numpy(name):
    t = getattr(tnp, name)
    for dt in (tnp.bool_, tnp.int8, tnp.uint32, tnp.float16, tnp.float64):
        assert tnp.issubdtype(dt, t) == np.issubdtype(dt, getattr(np, name)), (dt, name)
    # bfloat16 classifies as a float, as in JAX (NumPy sees an opaque ml_dtypes type)
    assert tnp.issubdtype(tnp.bfloat16, t) == np.issubdtype(np.float16, getattr(np, name))
    x = tracer.jit(lambda x: x * 2)(np.arange(3.0))
    assert tnp.issubdtype(x.dtype, t) == (name in ("generic", "number", "inexact", "floating"))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("name", ["float32", "int32", "bfloat16", "float16", "uint8", "bool_"])
def test_scalar_type_called_on_a_traced_value_converts_it(name, backend):
    """`jnp.float32(x.sum())` inside jit is JAX code: the type converts a traced value;
    eagerly it is NumPy's type, and it stands for it as a dtype and a class."""
    t, want = getattr(tnp, name), np.dtype(getattr(tnp, name))
    y = np.array([1, 2, 3], np.int32)
    out = tracer.jit(lambda v: t(v.sum()), backend=backend)(y)
    assert out.dtype == want and out == want.type(6)
    assert tracer.vmap(t)(y).dtype == want
    assert type(t(6)) is want.type and t(6) == want.type(6)
    assert isinstance(want.type(1), t) and np.issubdtype(want, t) and t == want.type
    assert np.dtype(t) == want and t.dtype == want and np.zeros(2, t).dtype == want
    assert {want.type: 1}[t] == 1


def test_float_scalar_type_of_a_differentiated_value_keeps_its_gradient():
    g = tracer.grad(lambda x: tnp.float32(x * x))(np.float32(3.0))
    assert g == 6.0 and g.dtype == np.float32
