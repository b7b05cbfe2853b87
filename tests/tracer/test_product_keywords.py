"""JAX's precision= and preferred_element_type= on tracer.numpy's products (dot, matmul,
vdot, inner, tensordot, einsum): precision is checked and changes nothing on CPU;
preferred_element_type computes and returns the product in that dtype."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

RNG = np.random.default_rng(0)
A8 = RNG.integers(-128, 128, (3, 4)).astype(np.int8)
B8 = RNG.integers(-128, 128, (4, 5)).astype(np.int8)
PRODUCTS = {
    "dot": (lambda a, b, **k: tnp.dot(a, b, **k), lambda a, b: a @ b),
    "matmul": (lambda a, b, **k: tnp.matmul(a, b, **k), lambda a, b: a @ b),
    "tensordot": (lambda a, b, **k: tnp.tensordot(a, b, 1, **k), lambda a, b: a @ b),
    "einsum": (lambda a, b, **k: tnp.einsum("ij,jk->ik", a, b, **k), lambda a, b: a @ b),
    "inner": (lambda a, b, **k: tnp.inner(a, b.T, **k), lambda a, b: a @ b),
    "vdot": (lambda a, b, **k: tnp.vdot(a[0], b[:, 0], **k), lambda a, b: a[0] @ b[:, 0]),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_preferred_element_type_computes_in_that_dtype(name, mode):
    ours, want = PRODUCTS[name]
    f = lambda a, b: ours(a, b, preferred_element_type=np.int32)  # noqa: E731
    if mode != "eager":
        f = tracer.jit(f, backend=mode)
    got = np.asarray(f(A8, B8))
    expected = want(A8.astype(np.int32), B8.astype(np.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)       # int8 products would wrap


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@pytest.mark.parametrize("precision", [None, "highest", lax.Precision.HIGH,
                                       ("default", "highest"), lax.DotAlgorithmPreset.F32_F32_F32])
def test_precision_is_accepted_and_changes_nothing(name, precision):
    ours, want = PRODUCTS[name]
    a, b = (x.astype(np.float32) / 7 for x in (A8, B8))
    np.testing.assert_allclose(ours(a, b, precision=precision), want(a, b), rtol=1e-6)


def test_a_bad_precision_names_the_value():
    with pytest.raises(ValueError, match="fastest"):
        tnp.dot(np.ones(3), np.ones(3), precision="fastest")


def test_grad_and_vmap_through_the_keywords():
    a, b = (x.astype(np.float32) / 7 for x in (A8, B8))
    f = lambda a: tnp.sum(tnp.einsum("ij,jk->ik", a, b, preferred_element_type=np.float64,  # noqa: E731
                                     precision="highest"))
    g = tracer.grad(f)(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.broadcast_to(b.sum(1), a.shape), rtol=1e-6)
    v = tracer.vmap(lambda r: tnp.dot(r, b, preferred_element_type=np.float64))(a)
    assert v.dtype == np.float64
    np.testing.assert_allclose(v, a.astype(np.float64) @ b, rtol=1e-12)
