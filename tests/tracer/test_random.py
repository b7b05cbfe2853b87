"""tracer.random: JAX's bits where promised, statistics with fixed seeds, the same numbers
eagerly and under jit on both backends, vmap/scan, clear errors."""
import math

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
import tracer.random as tr
from tracer import lax

KEY = tr.PRNGKey(2024)
F32 = np.float32


def _ks(sample, cdf):
    """Kolmogorov-Smirnov statistic of a sample against an exact CDF."""
    x = np.sort(np.asarray(sample, np.float64))
    c, n = cdf(x), len(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


def _ks_limit(n):
    return 1.95 / math.sqrt(n)      # the 0.1% critical value


def _normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _chi2(counts, probs):
    expected = probs * counts.sum()
    return float(np.sum((counts - expected) ** 2 / expected))


# ---- JAX's values ----------------------------------------------------------------------
@pytest.fixture
def jr():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(False):     # JAX's defaults, whatever another test switched on
        yield jax.random


SAME_AS_JAX = {
    "split": lambda r, k: r.split(k),
    "fold_in": lambda r, k: r.fold_in(k, 77),
    "bits": lambda r, k: r.bits(k, (5, 7)),
    "uniform": lambda r, k: r.uniform(k, (1001,)),
    "uniform_bounds": lambda r, k: r.uniform(k, (4, 500), minval=-2.5, maxval=7.1),
    "uniform_f16": lambda r, k: r.uniform(k, (999,), np.float16, -1.0, 3.0),
    "uniform_bf16": lambda r, k: r.uniform(k, (999,), tnp.bfloat16, -1.0, 3.0),
    "normal_bf16": lambda r, k: r.normal(k, (999,), tnp.bfloat16),
    "randint": lambda r, k: r.randint(k, (1000,), -5, 17),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (1000,)),
    "permutation_2rounds": lambda r, k: r.permutation(k, 2000),
    "permutation_rows": lambda r, k: r.permutation(k, np.arange(12, dtype=F32).reshape(4, 3)),
    "categorical": lambda r, k: r.categorical(
        k, np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], F32)), shape=(100, 2)),
}


@pytest.mark.parametrize("name", sorted(SAME_AS_JAX))
def test_bits_equal_jax(jr, name):
    f = SAME_AS_JAX[name]
    ours, theirs = f(tr, KEY), np.asarray(f(jr, jr.PRNGKey(2024)))
    # indices (categorical, permutation of an int) are int64 here, int32 in JAX without x64
    assert ours.dtype == theirs.dtype or ours.dtype == np.int64 and theirs.dtype == np.int32
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def test_normal_matches_jax_to_rounding(jr):
    ours, theirs = tr.normal(KEY, (10000,)), np.asarray(jr.normal(jr.PRNGKey(2024), (10000,)))
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("seed", [0, 1, 2 ** 32 - 1, np.int32(-5), np.uint32(7)])
def test_keys_equal_jax(jr, seed):
    np.testing.assert_array_equal(tr.PRNGKey(seed), np.asarray(jr.PRNGKey(seed)))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_seeds_give_jax_default_keys(backend):
    """JAX without x64 (its default): (0, seed mod 2**32) for every integer type."""
    cases = [(2 ** 40 + 3, 3), (-1, 2 ** 32 - 1), (-2 ** 31 - 100, 2 ** 31 - 100),
             (2 ** 63 - 1, 2 ** 32 - 1), (np.int64(-7), 2 ** 32 - 7),
             (np.int32(-5), 2 ** 32 - 5), (np.uint64(2 ** 64 - 1), 2 ** 32 - 1),
             (np.array(2 ** 40, np.int64), 0), (np.int8(-1), 2 ** 32 - 1)]
    jitted = tracer.jit(tr.PRNGKey, backend=backend)
    for seed, low in cases:
        np.testing.assert_array_equal(tr.PRNGKey(seed), [0, low])
        np.testing.assert_array_equal(tr.key(seed), [0, low])
        if not isinstance(seed, int):
            np.testing.assert_array_equal(jitted(seed), [0, low])
    with pytest.raises(OverflowError, match="int64"):
        tr.PRNGKey(2 ** 63)


# ---- statistics (fixed seeds) ----------------------------------------------------------
def test_uniform_statistics():
    u = tr.uniform(KEY, (200_000,))
    assert u.dtype == F32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.003 and abs(u.var() - 1 / 12) < 0.002
    assert _ks(u, lambda x: x) < _ks_limit(u.size)
    b = tr.uniform(KEY, (50_000,), np.float64, -3.0, 5.0)
    assert b.dtype == np.float64 and b.min() >= -3 and b.max() < 5
    assert _ks(b, lambda x: (x + 3) / 8) < _ks_limit(b.size)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_statistics(dtype):
    z = tr.normal(KEY, (100_000,), dtype)
    assert z.dtype == dtype and np.all(np.isfinite(z))
    assert abs(z.mean()) < 0.015 and abs(z.var() - 1) < 0.02
    assert _ks(z, _normal_cdf) < _ks_limit(z.size)


def test_randint_chi_square():
    r = tr.randint(KEY, (100_000,), 3, 13)
    assert r.dtype == np.int32 and r.min() == 3 and r.max() == 12
    assert _chi2(np.bincount(r - 3, minlength=10), np.full(10, 0.1)) < 27.9   # df 9, 0.1%


def test_randint_whole_range():
    r = tr.randint(KEY, (10_000,), -2 ** 31, 2 ** 31)        # a span of 2**32 wraps to 0
    assert r.min() < -2 ** 30 and r.max() > 2 ** 30 and abs(r.mean()) < 2 ** 31 * 0.05
    u = tr.randint(KEY, (10_000,), 0, 2 ** 32, np.uint32)
    assert u.max() > 2 ** 31 and abs(u.mean() / 2 ** 32 - 0.5) < 0.02


def test_categorical_chi_square():
    p = np.array([0.1, 0.2, 0.3, 0.4], F32)
    c = tr.categorical(KEY, np.log(p), shape=(50_000,))
    assert _chi2(np.bincount(c, minlength=4), p) < 16.3                      # df 3, 0.1%


def test_bernoulli_frequency():
    b = tr.bernoulli(KEY, 0.3, (100_000,))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.005


@pytest.mark.parametrize("pair", ["split", "fold_in"])
def test_derived_streams_uncorrelated(pair):
    k1, k2 = tr.split(KEY) if pair == "split" else (tr.fold_in(KEY, 0), tr.fold_in(KEY, 1))
    a, b = tr.normal(k1, (100_000,)), tr.normal(k2, (100_000,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(a.size)
    assert not np.array_equal(k1, k2)


def test_permutation_is_a_permutation():
    for n in (1, 7, 2000):
        np.testing.assert_array_equal(np.sort(tr.permutation(KEY, n)), np.arange(n))
    x = np.arange(12.0).reshape(3, 4)
    p = tr.permutation(KEY, x, axis=1)
    np.testing.assert_array_equal(np.sort(p, axis=1), x)
    assert not np.array_equal(tr.permutation(KEY, 50), np.arange(50))


# ---- the same numbers everywhere -------------------------------------------------------
EVERYWHERE = {
    "split": lambda k: tr.split(k, 3),
    "fold_in": lambda k: tr.fold_in(k, 5),
    "bits": lambda k: tr.bits(k, (2, 50)),
    "uniform": lambda k: tr.uniform(k, (300,)),
    "uniform_bounds": lambda k: tr.uniform(k, (300,), minval=-3.0, maxval=5.5),
    "uniform_f16": lambda k: tr.uniform(k, (300,), np.float16, -3.0, 5.5),
    "randint": lambda k: tr.randint(k, (300,), -7, 100),
    "bernoulli": lambda k: tr.bernoulli(k, 0.3, (300,)),
    "permutation": lambda k: tr.permutation(k, 100),
    "categorical": lambda k: tr.categorical(k, np.zeros((3, 5), F32), shape=(7, 3)),
    "categorical_dtypes": lambda k: [tr.categorical(k, np.linspace(-2, 1, 6).astype(dt),
                                                    shape=(500,))
                                     for dt in (np.float16, tnp.bfloat16, F32, np.float64)],
    "normal": lambda k: tr.normal(k, (3000,)),
    "normal_f64": lambda k: tr.normal(k, (3000,), np.float64),
    "normal_shapes": lambda k: [tr.normal(k, s, dt) for s in [(), (0,), (3, 37)]
                                for dt in (np.float32, np.float64)],
}


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name", sorted(EVERYWHERE))
def test_same_numbers_eager_and_jit(name, backend):
    f = EVERYWHERE[name]
    eager, jitted = f(KEY), tracer.jit(f, backend=backend)(KEY)
    if not isinstance(eager, list):
        eager, jitted = [eager], [jitted]
    for e, j in zip(eager, jitted, strict=True):
        assert j.dtype == e.dtype and j.shape == e.shape
        np.testing.assert_array_equal(*(np.atleast_1d(v).view(np.uint8) for v in (j, e)))  # bits


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_vmap_over_keys(backend):
    keys = tr.split(KEY, 4)
    for f in (lambda k: tr.uniform(k, (3,)), lambda k: tr.split(k),
              lambda k: tr.randint(k, (5,), 0, 10), lambda k: tr.permutation(k, 6),
              lambda k: tr.normal(k, (7,)), lambda k: tr.normal(k, (), np.float64)):
        np.testing.assert_array_equal(tracer.jit(tracer.vmap(f), backend=backend)(keys),
                                      np.stack([f(k) for k in keys]))
    np.testing.assert_array_equal(tracer.vmap(lambda d: tr.fold_in(KEY, d))(np.arange(3)),
                                  np.stack([tr.fold_in(KEY, i) for i in range(3)]))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_inside_scan_and_fori_loop(backend):
    def body(key, _):
        key, sub = tr.split(key)
        return key, tr.uniform(sub, (2,))
    last, ys = tracer.jit(lambda k: lax.scan(body, k, None, length=5), backend=backend)(KEY)
    key, ref = KEY, []
    for _ in range(5):
        key, sub = tr.split(key)
        ref.append(tr.uniform(sub, (2,)))
    np.testing.assert_array_equal(last, key)
    np.testing.assert_array_equal(ys, np.stack(ref))
    total = tracer.jit(lambda k: lax.fori_loop(
        0, 4, lambda i, a: a + tr.bits(tr.fold_in(k, i), (3,)), tnp.zeros(3, np.uint32)),
        backend=backend)(KEY)
    np.testing.assert_array_equal(total, sum(tr.bits(tr.fold_in(KEY, i), (3,))
                                             for i in range(4)))
    z = tracer.jit(lambda k: lax.fori_loop(
        0, 3, lambda i, a: a * 0.5 + tr.normal(tr.fold_in(k, i), (33,)), tnp.zeros(33, F32)),
        backend=backend)(KEY)
    ref = np.zeros(33, F32)
    for i in range(3):
        ref = ref * F32(0.5) + tr.normal(tr.fold_in(KEY, i), (33,))
    np.testing.assert_array_equal(z, ref)


# ---- shapes, dtypes, errors ------------------------------------------------------------
def test_shapes_and_dtypes():
    assert tr.PRNGKey(0).dtype == np.uint32 and tr.PRNGKey(0).shape == (2,)
    assert tr.split(KEY, (2, 3)).shape == (2, 3, 2)
    assert tr.uniform(KEY).shape == () and tr.normal(KEY, 4).shape == (4,)
    for dt in (np.float16, tnp.bfloat16, np.float32, np.float64):
        assert tr.uniform(KEY, (2, 3), dt).dtype == dt
    assert tr.randint(KEY, (2,), 0, 5, np.uint32).dtype == np.uint32
    assert tr.bernoulli(KEY, np.full((2, 3), 0.5)).shape == (2, 3)
    assert tr.categorical(KEY, np.zeros((4, 6), F32)).shape == (4,)
    assert tr.categorical(KEY, np.zeros((4, 6), F32), axis=0, shape=(5, 6)).shape == (5, 6)
    assert tr.uniform(KEY, (3, 2), minval=np.zeros(2), maxval=np.ones(2)).shape == (3, 2)


@pytest.mark.parametrize("call, error, words", [
    (lambda: tr.uniform(np.array([1, 2], np.int32)), tracer.DTypeError, "uint32"),
    (lambda: tr.split(np.zeros(3, np.uint32)), tracer.ShapeError, "shape (2,)"),
    (lambda: tr.normal(KEY, (-1,)), tracer.ShapeError, "non-negative"),
    (lambda: tr.bits(KEY, (2 ** 16, 2 ** 16)), tracer.ShapeError, "2**32"),
    (lambda: tr.randint(KEY, (3,), 5, 5), tracer.ArgumentError, "minval < maxval"),
    (lambda: tr.randint(KEY, (3,), 0, 5, np.float32), tracer.DTypeError, "int32"),
    (lambda: tr.uniform(KEY, (3,), np.int32), tracer.DTypeError, "float dtype"),
    (lambda: tr.uniform(KEY, (3,), minval=np.zeros(4)), tracer.ShapeError, "broadcast"),
    (lambda: tr.fold_in(KEY, np.arange(2)), tracer.ArgumentError, "scalar"),
    (lambda: tr.fold_in(KEY, -1), tracer.ArgumentError, "uint32"),
    (lambda: tr.PRNGKey(1.5), tracer.ArgumentError, "integer"),
    (lambda: tr.categorical(KEY, np.zeros(3, F32), axis=1), tracer.ShapeError, "axis"),
    (lambda: tr.permutation(KEY, np.float32(2)), TypeError, "at least 1-dimensional"),
])
def test_clear_errors(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")
                       .replace("*", r"\*")):
        call()
