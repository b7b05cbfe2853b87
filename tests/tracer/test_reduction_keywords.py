"""NumPy 2 / JAX keywords of the reductions and scans: where= and initial= (checked:
a bool mask, a scalar initial), promote_integers=, nancumsum/nancumprod, the array API's
cumulative_sum/cumulative_prod. Each eagerly, jitted on both backends, under grad and
vmap, against NumPy."""
import functools
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

X, XN, W, _ = agreement.samples(0)
BACKENDS = agreement.BACKENDS


agree = functools.partial(agreement.agree, rtol=1e-7)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_all_and_any_take_where(name, axis):
    b = X > 0
    agree(lambda x: getattr(tnp, name)(x, axis=axis, where=W), getattr(np, name)(b, axis=axis, where=W), b)


def test_where_must_be_a_bool_mask_and_initial_a_scalar():
    for f in (tnp.sum, tnp.max, tnp.all, tnp.mean):
        with pytest.raises(ValueError, match="where must be None or a boolean array"):
            f(X, where=np.ones(X.shape, int), **({"initial": 0} if f is tnp.max else {}))
    with pytest.raises(ValueError, match=r"initial value must be a scalar. Got array of "
                                         r"shape \(1, 2, 3\)"):
        tnp.sum(np.ones((2, 3, 4)), axis=-1, initial=np.zeros((1, 2, 3)))


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.bool_, np.float16])
def test_promote_integers(name, dtype):
    x = (np.arange(1, 7) % 3).astype(dtype).reshape(2, 3)
    promoted = getattr(np, name)(x, axis=0)
    kept = promoted.astype(np.int64 if dtype == np.bool_ else dtype)
    agree(lambda x: getattr(tnp, name)(x, axis=0), promoted, x)
    agree(lambda x: getattr(tnp, name)(x, axis=0, promote_integers=False), kept, x)


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_nan_scans(name, axis):
    agree(lambda x: getattr(tnp, name)(x, axis=axis), getattr(np, name)(XN, axis=axis), XN)
    g = tracer.grad(lambda x: tnp.sum(getattr(tnp, name)(x, axis=axis)))(XN)
    assert not np.isnan(g).any() and g[0, 1] == 0 and g[2, 3] == 0
    out = tracer.vmap(lambda x: getattr(tnp, name)(x, axis=axis))(XN)
    np.testing.assert_allclose(out, [getattr(np, name)(r, axis=axis) for r in XN], rtol=1e-6)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("dtype", [None, np.int8, np.float64, np.bool_])
def test_cumulative_sum_and_prod(name, axis, include_initial, dtype):
    def f(x):
        return getattr(tnp, name)(x, axis=axis, dtype=dtype, include_initial=include_initial)
    agree(f, getattr(np, name)(X, axis=axis, dtype=dtype, include_initial=include_initial), X,
          atol=1e-5)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_differentiates_batches_and_checks_rank(name):
    x1 = X[0]
    np.testing.assert_allclose(getattr(tnp, name)(x1, include_initial=True),
                               getattr(np, name)(x1, include_initial=True), rtol=1e-6)
    tracer.check_grads(lambda x: getattr(tnp, name)(x, axis=1, include_initial=True), (X,), 2)
    out = tracer.vmap(lambda r: getattr(tnp, name)(r, include_initial=True))(X)
    np.testing.assert_allclose(out, getattr(np, name)(X, axis=1, include_initial=True),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="The input must be non-scalar"):
        getattr(tnp, name)(np.float32(1))
    with pytest.raises(ValueError, match="The input array has rank 2, however axis"):
        getattr(tnp, name)(X)


def test_cumsum_to_bool_is_a_logical_or_scan():
    x = np.array([-1, 0, 1])
    agree(lambda x: tnp.cumsum(x, dtype=bool), np.cumsum(x, dtype=bool), x)
    agree(lambda x: tnp.cumulative_sum(x, axis=-1, dtype=bool),
          np.array([[True], [True], [False]]), np.array([[0.1], [0.1], [0.0]]))
