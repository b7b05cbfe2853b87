"""cov and corrcoef with NumPy's keywords (y, rowvar, bias, ddof, fweights, aweights,
dtype): eagerly, jitted on both backends, under grad and vmap, against NumPy."""
import functools
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

rng = np.random.default_rng(2)
BACKENDS = agreement.BACKENDS


agree = functools.partial(agreement.agree, atol=1e-12, same_dtype=False)


@pytest.mark.parametrize("shape,rowvar", [((5,), True), ((4, 6), True), ((6, 4), False),
                                          ((1, 5), True), ((5, 1), False)])
@pytest.mark.parametrize("bias,ddof", [(False, None), (True, None), (False, 2)])
@pytest.mark.parametrize("weights", ["none", "f", "a", "fa"])
def test_cov_matches_numpy(shape, rowvar, bias, ddof, weights):
    m = rng.normal(size=shape)
    n = shape[-1] if rowvar or len(shape) == 1 else shape[0]
    f = rng.integers(1, 4, n) if "f" in weights else None
    a = rng.random(n) + 0.5 if "a" in weights else None
    kw = dict(rowvar=rowvar, bias=bias, ddof=ddof)
    agree(lambda m, f, a: tnp.cov(m, fweights=f, aweights=a, **kw),
          np.cov(m, fweights=f, aweights=a, **kw), m, f, a)


@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_and_corrcoef_with_y(rowvar):
    x = rng.normal(size=(3, 7) if rowvar else (7, 3))
    y = rng.normal(size=(2, 7) if rowvar else (7, 2))
    agree(lambda x, y: tnp.cov(x, y, rowvar=rowvar), np.cov(x, y, rowvar=rowvar), x, y)
    agree(lambda x, y: tnp.corrcoef(x, y, rowvar=rowvar), np.corrcoef(x, y, rowvar=rowvar),
          x, y)


def test_cov_dtypes_follow_jax():
    x32 = rng.normal(size=(3, 5)).astype(np.float32)
    assert tnp.cov(x32).dtype == np.float32          # NumPy: float64
    np.testing.assert_allclose(tnp.cov(x32), np.cov(x32), rtol=1e-5)
    assert tnp.cov(np.arange(5)).dtype == np.float64
    assert tnp.cov(np.arange(5), dtype="bfloat16").dtype == tnp.bfloat16
    with pytest.raises(ValueError, match="cov: dtype must be a subclass of float"):
        tnp.cov(np.arange(5), dtype=int)
    with pytest.raises(TypeError, match="fweights must be integer"):
        tnp.cov(x32, fweights=np.ones(5))
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        tnp.cov(x32, aweights=-np.ones(5))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5)])
def test_empty_cov(shape):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.cov(np.zeros(shape))
    np.testing.assert_array_equal(tnp.cov(np.zeros(shape)), want)


def test_cov_differentiates_and_batches():
    x = rng.normal(size=(3, 6))
    a = rng.random(6) + 0.5
    tracer.check_grads(lambda x, a: tnp.cov(x, aweights=a, ddof=1), (x, a), 2)
    tracer.check_grads(tnp.corrcoef, (x,), 1)
    f = rng.integers(1, 3, 6)
    out = tracer.vmap(lambda x: tnp.cov(x, fweights=f))(np.stack([x, x ** 2]))
    np.testing.assert_allclose(out, [np.cov(x, fweights=f), np.cov(x ** 2, fweights=f)])
