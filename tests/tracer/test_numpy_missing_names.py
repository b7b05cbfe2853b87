"""NumPy names and keywords tracer.numpy lacked (found by comparing numpy-coverage.md's
names and NumPy 2's signatures with tracer.numpy's): bincount (with JAX's length=), and
NumPy's ufunc keywords on the elementwise functions. Each against NumPy eagerly and
jitted on both backends, under grad (finite differences) and vmap, on empty and 0-d
inputs."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ConcretizationError

BACKENDS = agreement.BACKENDS
X = np.array([1, 1, 2, 3, 3, 3, 0, 5], np.int32)
W = np.linspace(-1, 2, 8).astype(np.float32)


# ---- bincount ------------------------------------------------------------------------------

@pytest.mark.parametrize("x", [X, X.astype(np.uint8), X.astype(np.int64), X > 1,
                               np.array([], np.int32)], ids=["i32", "u8", "i64", "bool", "empty"])
@pytest.mark.parametrize("minlength", [0, 9])
def test_bincount_counts_as_numpy(x, minlength):
    want = np.bincount(x, minlength=minlength)
    got = tnp.bincount(x, minlength=minlength)
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    agreement.agree(lambda x: tnp.bincount(x, minlength=minlength, length=len(want)), want, x)


@pytest.mark.parametrize("w", [W, W.astype(np.float64), (W * 4).astype(np.int16), W > 0])
def test_bincount_weights_sum_in_float64_as_numpy(w):
    want = np.bincount(X, w, minlength=7)
    assert want.dtype == np.float64
    agreement.agree(lambda x, w: tnp.bincount(x, w, minlength=7, length=7), want, X, w)
    np.testing.assert_array_equal(tnp.bincount(X, weights=w, minlength=7), want)


def test_bincount_length_drops_values_past_it_and_clips_negatives_as_jax():
    x = np.array([-1, -1, 1, 3, 10])
    agreement.agree(lambda x: tnp.bincount(x, length=5), np.array([2, 1, 0, 1, 0]), x)
    agreement.agree(lambda x: tnp.bincount(x, minlength=8, length=2), np.array([2, 1]), x)


def test_bincount_differentiates_in_its_weights():
    def loss(w):
        return tnp.sum(tnp.bincount(X, w, length=6) * np.arange(1.0, 7.0))
    want = np.arange(1.0, 7.0)[X].astype(np.float32)
    for f in [tracer.grad(loss)] + [tracer.jit(tracer.grad(loss), backend=b) for b in BACKENDS]:
        got = f(W)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want)
    tracer.check_grads(lambda w: tnp.bincount(X, w, length=6), (W.astype(np.float64),),
                       order=2)


def test_bincount_under_vmap():
    xs = np.array([[0, 1, 1, 4], [3, 3, 2, 9]])
    want = np.stack([np.bincount(x, minlength=6)[:6] for x in xs])
    for b in BACKENDS:
        f = tracer.jit(tracer.vmap(lambda x: tnp.bincount(x, length=6)), backend=b)
        np.testing.assert_array_equal(f(xs), want)
    ws = np.stack([W, 2 * W])
    got = tracer.vmap(lambda w: tnp.bincount(X, w, length=6), in_axes=0)(ws)
    np.testing.assert_allclose(got, np.stack([np.bincount(X, w) for w in ws]))


def test_bincount_errors_name_the_problem():
    with pytest.raises(ConcretizationError, match="bincount: .* pass length="):
        tracer.jit(tnp.bincount)(X)
    with pytest.raises(ValueError, match="bincount: x must have no negative elements"):
        tnp.bincount(np.array([0, -1]))
    with pytest.raises(ValueError, match=r"bincount: x must be 1-D, got shape \(\)"):
        tnp.bincount(np.int32(3))
    with pytest.raises(ValueError, match=r"bincount: x must be 1-D, got shape \(2, 2\)"):
        tnp.bincount(np.zeros((2, 2), np.int32))
    with pytest.raises(TypeError, match="bincount: x must be an integer array, got float32"):
        tnp.bincount(W)
    with pytest.raises(ValueError, match="bincount: minlength and length must not be"):
        tnp.bincount(X, minlength=-1)
    with pytest.raises(ValueError, match=r"bincount: weights of shape \(3,\) must have x's"):
        tnp.bincount(X, W[:3])
