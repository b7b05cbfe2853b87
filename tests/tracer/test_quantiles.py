"""quantile, percentile and their nan* forms: NumPy's methods, weights (inverted_cdf), a
traced q; eagerly, jitted on both backends, under grad and vmap, against NumPy."""
import functools
import warnings

import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

rng = np.random.default_rng(3)
A = rng.normal(size=(4, 9, 5)).astype(np.float32)
AN = A.copy()
AN[rng.random(A.shape) < 0.2] = np.nan
AN[0, :, 0] = np.nan                                       # an all-NaN slice along axis 1
Q = np.array([0.0, 0.1, 0.37, 0.9, 1.0])
BACKENDS = agreement.BACKENDS
METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "weibull",
           "hazen", "median_unbiased", "normal_unbiased", "interpolated_inverted_cdf"]


agree = functools.partial(agreement.agree, rtol=1e-5)


def numpy(name, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, name)(*args, **kw).astype(np.float32)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name,a", [("quantile", A), ("nanquantile", AN)])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 2), False)])
def test_methods_match_numpy_with_a_traced_q(method, name, a, axis, keepdims):
    if method == "nearest" and name == "nanquantile":
        pytest.skip("slices of varying counts meet halves, where nearest follows JAX")
    kw = dict(axis=axis, method=method, keepdims=keepdims)
    agree(lambda a, q: getattr(tnp, name)(a, q, **kw), numpy(name, a, Q, **kw), a, Q)


def test_nearest_takes_the_lower_element_at_halves_as_jax():
    x = np.arange(7, dtype=np.float32) * 1.5          # (n - 1) q = 1.5 and 4.5
    agree(lambda x: tnp.quantile(x, np.array([0.25, 0.75]), method="nearest"),
          np.array([1.5, 6.0], np.float32), x)


@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_weighted_inverted_cdf(name, axis):
    a = AN if name.startswith("nan") else A
    w = rng.random(A.shape).astype(np.float32) + 0.1
    q = np.array([0.25, 0.5, 0.75], np.float32) * (100 if "per" in name else 1)
    kw = dict(axis=axis, method="inverted_cdf")
    agree(lambda a, q, w: getattr(tnp, name)(a, q, weights=w, **kw),
          numpy(name, a, q, weights=w, **kw), a, q, w)
    w1 = w[:, 0, 0] if axis == 0 and name == "quantile" else None
    if w1 is not None:              # weights along the reduced axis only
        agree(lambda a, q, w: getattr(tnp, name)(a, q, weights=w, **kw),
              numpy(name, a, q, weights=np.broadcast_to(w1[:, None, None], A.shape), **kw),
              a, q, w1)


def test_gradients_and_batching():
    g = tracer.grad(lambda a, q: tnp.sum(tnp.quantile(a, q, axis=1)), argnums=(0, 1))(A, Q)
    assert np.count_nonzero(g[0]) <= 2 * len(Q) * 4 * 5 and np.isfinite(g[1]).all()
    for b in BACKENDS:
        gb = tracer.jit(tracer.grad(lambda a: tnp.sum(tnp.nanmedian(a, axis=1))), backend=b)(AN)
        assert not np.isnan(gb).any() and np.all(gb[np.isnan(AN)] == 0)
    out = tracer.vmap(lambda a, q: tnp.nanpercentile(a, q, axis=0))(AN, Q[:4] * 100)
    np.testing.assert_allclose(out, [numpy("nanpercentile", a, q * 100, axis=0)
                                     for a, q in zip(AN, Q[:4])], rtol=1e-5, equal_nan=True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="only method='inverted_cdf' supports weights"):
        tnp.quantile(A, 0.5, weights=np.ones(A.shape))
    with pytest.raises(ValueError, match="percentiles must be in the range"):
        tnp.percentile(A, 101)
    with pytest.raises(ValueError, match="weights of shape"):
        tnp.quantile(A, 0.5, method="inverted_cdf", weights=np.ones(3))
