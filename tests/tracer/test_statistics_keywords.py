"""NumPy 2 / JAX keywords of the statistics: initial= and where= on the nan reductions,
where= and mean= on var/std/nanvar/nanstd/nanmean, ddof with correction refused, NaN for
count - ddof <= 0 (JAX's), average with N-D weights. Each eagerly, jitted on both
backends, under grad and vmap, against NumPy."""
import functools
import warnings

import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

X, XN, W, rng = agreement.samples(1)
BACKENDS = agreement.BACKENDS
AXES = [None, 0, 1, (0, 1)]


agree = functools.partial(agreement.agree, rtol=2e-6)


def numpy(name, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, name)(*args, **kw)


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_reductions_take_initial_and_where(name, axis, keepdims):
    for kw in ({"initial": 0.5}, {"initial": -1.0, "where": W}):
        agree(lambda x: getattr(tnp, name)(x, axis=axis, keepdims=keepdims, **kw),
              numpy(name, XN, axis=axis, keepdims=keepdims, **kw), XN)
    if name in ("nansum", "nanprod"):
        agree(lambda x: getattr(tnp, name)(x, axis=axis, where=W),
              numpy(name, XN, axis=axis, where=W), XN)


def test_nan_extremes_of_an_all_nan_slice_give_initial():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    agree(lambda x: tnp.nanmax(x, axis=1, initial=-2.0), np.array([-2.0, 1.0], np.float32), x)
    agree(lambda x: tnp.nanmax(x, axis=1), np.array([np.nan, 1.0], np.float32), x)


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd", "nanmean", "mean"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("ddof", [0, 1])
def test_statistics_take_where(name, axis, ddof):
    x = XN if name.startswith("nan") else X
    kw = {} if name.endswith("mean") else {"ddof": ddof}
    agree(lambda x: getattr(tnp, name)(x, axis=axis, where=W, **kw),
          numpy(name, x, axis=axis, where=W, **kw), x)
    agree(lambda x: getattr(tnp, name)(x, axis=axis, where=W, keepdims=True, **kw),
          numpy(name, x, axis=axis, where=W, keepdims=True, **kw), x)


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_var_and_std_take_a_given_mean(name, axis):
    x = XN if name.startswith("nan") else X
    m = rng.normal(size=np.mean(X, axis=axis, keepdims=True).shape).astype(np.float32)
    agree(lambda x, m: getattr(tnp, name)(x, axis=axis, ddof=1, mean=m),
          numpy(name, x, axis=axis, ddof=1, mean=m), x, m, rtol=1e-5)


def test_var_gradients_and_batching_with_where_and_nan():
    g = tracer.grad(tnp.nanvar)(np.array([np.nan, 0, 1, 2, 3.0]))
    np.testing.assert_allclose(g, [0.0, -0.75, -0.25, 0.25, 0.75])
    assert not np.isnan(tracer.grad(tnp.nanstd)(np.array([np.nan, 0, 1, 2, 3.0]))).any()
    for b in BACKENDS:
        g = tracer.jit(tracer.grad(lambda x: tnp.var(x, where=W)), backend=b)(X)
        want = np.where(W, 2 * (X - X[W].mean()) / W.sum(), 0)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)
    out = tracer.vmap(lambda x, w: tnp.nanvar(x, where=w, ddof=1))(XN, W)
    np.testing.assert_allclose(out, [numpy("nanvar", r, where=m, ddof=1) for r, m in zip(XN, W)],
                               rtol=1e-5)


@pytest.mark.parametrize("x,axis", [(3.5, None), (np.array([[1.0, 2.0, 4.0]]), 0),
                                    (np.array([[[-1.0], [2.0]]]), (0, 2))])
def test_std_over_length_one_axes_is_constant_so_its_derivative_is_zero(x, axis):
    """std of one element is 0 whatever the element: finite differences give 0 (JAX NaN)."""
    def f(x):
        return tnp.sum(tnp.std(x, axis=axis) * 3.0)
    x = np.asarray(x)
    eps = 1e-6 * np.ones_like(x)
    numeric = (numpy("std", x + eps, axis=axis).sum() - numpy("std", x - eps, axis=axis).sum())
    assert numeric == 0.0
    np.testing.assert_array_equal(tnp.std(x, axis=axis), numpy("std", x, axis=axis))
    for b in BACKENDS:
        np.testing.assert_array_equal(tracer.jit(tracer.grad(f), backend=b)(x), np.zeros_like(x))
    np.testing.assert_array_equal(tracer.jvp(f, (x,), (np.ones_like(x),))[1], 0.0)
    np.testing.assert_array_equal(tracer.hessian(f)(x), np.zeros(x.shape * 2))
    np.testing.assert_array_equal(tracer.vmap(tracer.grad(f))(np.stack([x, 2 * x])), 0.0)
    # a given mean, or more than one element, keeps the derivative of |x - mean|
    assert tracer.grad(lambda x: tnp.std(x, mean=1.0))(3.5) == 1.0
    np.testing.assert_allclose(tracer.grad(tnp.std)(np.array([1.0, 3.0])), [-0.5, 0.5])


@pytest.mark.parametrize("f", [tnp.var, tnp.std])
def test_count_at_most_ddof_gives_nan_and_ddof_with_correction_is_refused(f):
    for size in (0, 1, 2):
        for ddof in (size, size + 1):
            assert np.isnan(f(np.arange(size), ddof=ddof))
            assert np.isnan(tracer.jit(lambda x: f(x, ddof=ddof))(np.arange(size, dtype=float)))
    with pytest.raises(ValueError, match="ddof and correction can't be provided"):
        f(X, ddof=1, correction=1)
    np.testing.assert_allclose(f(X, correction=1), numpy(f.__name__, X, ddof=1), rtol=1e-6)


@pytest.mark.parametrize("shape,axis", [((2, 3, 4), (1, 2)), ((2, 3, 4), (2, 0)),
                                        ((2, 3, 4), (2, 1, 0)), ((2, 3, 4, 5), (3, 0, 2, 1))])
def test_average_takes_weights_of_the_averaged_axes(shape, axis):
    x = rng.normal(size=shape).astype(np.float32)
    w = rng.random(tuple(shape[a] for a in axis)).astype(np.float32)
    full = np.transpose(w, np.argsort(axis)).reshape(
        tuple(d if i in axis else 1 for i, d in enumerate(shape)))
    want = np.average(x, axis, np.broadcast_to(full, shape))
    agree(lambda x, w: tnp.average(x, axis, w), want, x, w, rtol=1e-5)
    g = tracer.grad(lambda w: tnp.average(x, axis, w).sum())(w)
    assert g.shape == w.shape
    with pytest.raises(ValueError, match="average: weights of shape"):
        tnp.average(x, None, w)
