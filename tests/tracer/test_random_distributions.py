"""tracer.random's distributions: moments against the analytic values (tolerances from the
sample size), support, dtype/shape rules, the same bits eagerly, under jit on both backends
and under vmap over keys, reparameterised gradients, clear errors."""
import math

import numpy as np
import pytest

import tracer
import tracer.random as tr

KEY = tr.PRNGKey(7)
F32 = np.float32
N, NG = 20000, 5000          # samples for the cheap samplers and for the gamma family


def _truncnorm_moments(a, b):
    phi = [math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in (a, b)]
    z = 0.5 * (math.erf(b / math.sqrt(2)) - math.erf(a / math.sqrt(2)))
    mean = (phi[0] - phi[1]) / z
    return mean, 1 + (a * phi[0] - b * phi[1]) / z - mean ** 2


def _weibull(scale, k):
    m1, m2 = math.gamma(1 + 1 / k), math.gamma(1 + 2 / k)
    return scale * m1, scale ** 2 * (m2 - m1 ** 2)


TN = _truncnorm_moments(-1.0, 2.0)
# name: (sampler of a flat sample, mean, variance, support)
MOMENTS = {
    "exponential": (lambda k: tr.exponential(k, (N,)), 1, 1, lambda x: x >= 0),
    "laplace": (lambda k: tr.laplace(k, (N,)), 0, 2, None),
    "logistic": (lambda k: tr.logistic(k, (N,)), 0, math.pi ** 2 / 3, None),
    "gumbel": (lambda k: tr.gumbel(k, (N,)), 0.5772156649, math.pi ** 2 / 6, None),
    "pareto": (lambda k: tr.pareto(k, 10.0, (N,)), 10 / 9, 10 / (81 * 8), lambda x: x >= 1),
    "rayleigh": (lambda k: tr.rayleigh(k, 2.0, (N,)), 2 * math.sqrt(math.pi / 2),
                 (4 - math.pi) / 2 * 4, lambda x: x >= 0),
    "weibull_min": (lambda k: tr.weibull_min(k, 2.0, 1.5, (N,)), *_weibull(2.0, 1.5),
                    lambda x: x >= 0),
    "lognormal": (lambda k: tr.lognormal(k, 0.5, (N,)), math.exp(0.125),
                  (math.exp(0.25) - 1) * math.exp(0.25), lambda x: x > 0),
    "maxwell": (lambda k: tr.maxwell(k, (N,)), 2 * math.sqrt(2 / math.pi), 3 - 8 / math.pi,
                lambda x: x >= 0),
    "double_sided_maxwell": (lambda k: tr.double_sided_maxwell(k, 1.0, 2.0, (N,)), 1, 12, None),
    "rademacher": (lambda k: tr.rademacher(k, (N,)), 0, 1, lambda x: np.abs(x) == 1),
    "truncated_normal": (lambda k: tr.truncated_normal(k, -1.0, 2.0, (N,)), *TN,
                         lambda x: (x > -1) & (x < 2)),
    "geometric": (lambda k: tr.geometric(k, 0.3, (N,)), 1 / 0.3, 0.7 / 0.09, lambda x: x >= 1),
    "poisson_small": (lambda k: tr.poisson(k, 3.0, (N,)), 3, 3, lambda x: x >= 0),
    "poisson_large": (lambda k: tr.poisson(k, 30.0, (N,)), 30, 30, lambda x: x >= 0),
    "binomial_inversion": (lambda k: tr.binomial(k, 5, 0.3, (N,)), 1.5, 1.05,
                           lambda x: (x >= 0) & (x <= 5) & (x == np.floor(x))),
    "binomial_btrs": (lambda k: tr.binomial(k, 100, 0.3, (N,)), 30, 21,
                      lambda x: (x >= 0) & (x <= 100) & (x == np.floor(x))),
    "binomial_flipped": (lambda k: tr.binomial(k, 50, 0.8, (N,)), 40, 8, lambda x: x <= 50),
    "gamma": (lambda k: tr.gamma(k, 2.5, (NG,)), 2.5, 2.5, lambda x: x > 0),
    "gamma_boosted": (lambda k: tr.gamma(k, 0.5, (NG,)), 0.5, 0.5, lambda x: x >= 0),
    "loggamma": (lambda k: np.exp(tr.loggamma(k, 0.3, (NG,))), 0.3, 0.3, lambda x: x >= 0),
    "beta": (lambda k: tr.beta(k, 2.0, 3.0, (NG,)), 0.4, 0.04, lambda x: (x >= 0) & (x <= 1)),
    "chisquare": (lambda k: tr.chisquare(k, 3.0, (NG,)), 3, 6, lambda x: x >= 0),
    "t": (lambda k: tr.t(k, 10.0, (NG,)), 0, 10 / 8, None),
    "f": (lambda k: tr.f(k, 3.0, 20.0, (NG,)), 20 / 18, 2 * 400 * 21 / (3 * 324 * 16),
          lambda x: x >= 0),
    "generalized_normal": (lambda k: tr.generalized_normal(k, 1.5, (NG,)), 0,
                           math.gamma(3 / 1.5) / math.gamma(1 / 1.5), None),
    "dirichlet": (lambda k: tr.dirichlet(k, np.array([1, 2, 3], F32), (NG // 3,))[:, 2],
                  0.5, 3 * 3 / (36 * 7), lambda x: (x >= 0) & (x <= 1)),
    "ball_radius2": (lambda k: np.sum(tr.ball(k, 3, 2, (NG // 3,)) ** 2, -1), 0.6,
                     3 / 7 - 0.36, lambda x: x <= 1),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_moments_and_support(name):
    sampler, mean, var, support = MOMENTS[name]
    x = np.asarray(sampler(KEY), np.float64)
    n = x.size
    m, v = x.mean(), x.var()
    m4 = np.mean((x - m) ** 4)
    assert abs(m - mean) < 5 * math.sqrt(var / n), (m, mean)
    assert abs(v - var) < 5 * math.sqrt(max(m4 - v * v, 1e-12) / n), (v, var)
    assert np.all(np.isfinite(x))
    if support is not None:
        assert np.all(support(x))


@pytest.mark.parametrize("name, sampler, pmf", [
    ("binomial_btrs", lambda k: tr.binomial(k, 40.0, 0.4, (N,)),
     lambda j: math.comb(40, j) * 0.4 ** j * 0.6 ** (40 - j) if j <= 40 else 0.0),
    ("binomial_inversion", lambda k: tr.binomial(k, 20.0, 0.2, (N,)),
     lambda j: math.comb(20, j) * 0.2 ** j * 0.8 ** (20 - j) if j <= 20 else 0.0),
    ("poisson_rejection", lambda k: tr.poisson(k, 25.0, (N,)),
     lambda j: math.exp(-25 + j * math.log(25) - math.lgamma(j + 1))),
    ("poisson_knuth", lambda k: tr.poisson(k, 4.0, (N,)),
     lambda j: math.exp(-4 + j * math.log(4) - math.lgamma(j + 1))),
])
def test_discrete_chi_square(name, sampler, pmf):
    """The whole distribution, not just two moments: a rejection step that accepts with
    the wrong test can keep the mean and variance within their tolerance."""
    counts = np.bincount(np.asarray(sampler(KEY)).astype(int))
    expected = np.array([pmf(j) for j in range(len(counts))]) * N
    cells = expected > 5
    chi2 = np.sum((counts[cells] - expected[cells]) ** 2 / expected[cells])
    dof = cells.sum() - 1
    assert chi2 < dof + 5 * math.sqrt(2 * dof), (chi2, dof)


def test_cauchy_cdf():
    x = np.sort(np.asarray(tr.cauchy(KEY, (N,)), np.float64))
    cdf = 0.5 + np.arctan(x) / math.pi
    ks = max(np.max(np.arange(1, N + 1) / N - cdf), np.max(cdf - np.arange(N) / N))
    assert ks < 1.95 / math.sqrt(N)


def test_multivariate_normal_covariance():
    cov = np.array([[2, 1, 0], [1, 2, 0.5], [0, 0.5, 1]], F32)
    mean = np.array([1, -1, 0], F32)
    for method in ("cholesky", "eigh", "svd"):
        x = np.asarray(tr.multivariate_normal(KEY, mean, cov, (N,), method=method), np.float64)
        assert x.shape == (N, 3)
        np.testing.assert_allclose(x.mean(0), mean, atol=5 * math.sqrt(2 / N))
        np.testing.assert_allclose(np.cov(x.T), cov, atol=5 * 2 * math.sqrt(2 / N))


def test_orthogonal():
    q = np.asarray(tr.orthogonal(KEY, 4, (500,)), np.float64)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    # Haar: each entry has mean 0 and variance 1/n
    assert abs(q[:, 0, 0].mean()) < 5 * math.sqrt(0.25 / 500)
    assert abs(q[..., 1].var() - 0.25) < 0.03
    assert tr.orthogonal(KEY, 2, m=5).shape == (2, 5)


def test_choice():
    counts = np.bincount(np.asarray(tr.choice(KEY, 5, (N,))), minlength=5)
    assert np.all(np.abs(counts - N / 5) < 5 * math.sqrt(N * 0.16))
    p = np.array([0.1, 0.2, 0.3, 0.4], F32)
    counts = np.bincount(np.asarray(tr.choice(KEY, 4, (N,), p=p)), minlength=4)
    assert np.all(np.abs(counts - N * p) < 5 * np.sqrt(N * p * (1 - p)))
    drawn = np.asarray(tr.choice(KEY, np.arange(10.0), (6,), replace=False))
    assert len(set(drawn.tolist())) == 6 and drawn.dtype == np.float64
    firsts = np.asarray(tracer.vmap(lambda k: tr.choice(k, 4, (2,), replace=False, p=p))(
        tr.split(KEY, 2000)))
    assert np.all(firsts[:, 0] != firsts[:, 1])
    freq = np.bincount(firsts[:, 0], minlength=4) / 2000       # the first draw follows p
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 2000))
    rows = tr.choice(KEY, np.arange(12).reshape(3, 4), (2, 5), axis=1)
    assert rows.shape == (3, 2, 5)


# ---- the same bits everywhere ----------------------------------------------------------
SMALL = {
    "exponential": lambda k: tr.exponential(k, (5,)),
    "laplace": lambda k: tr.laplace(k, (5,)),
    "logistic": lambda k: tr.logistic(k, (5,)),
    "cauchy": lambda k: tr.cauchy(k, (5,), np.float64),
    "gumbel": lambda k: tr.gumbel(k, (5,)),
    "pareto": lambda k: tr.pareto(k, np.array([1.5, 3.0], F32), (3, 2)),
    "rayleigh": lambda k: tr.rayleigh(k, 2.0, (5,)),
    "weibull_min": lambda k: tr.weibull_min(k, 2.0, 1.5, (5,)),
    "lognormal": lambda k: tr.lognormal(k, 0.5, (5,), np.float64),
    "maxwell": lambda k: tr.maxwell(k, (5,)),
    "double_sided_maxwell": lambda k: tr.double_sided_maxwell(k, 1.0, 2.0, (5,)),
    "rademacher": lambda k: tr.rademacher(k, (5,)),
    "truncated_normal": lambda k: tr.truncated_normal(k, -1.0, 2.0, (5,)),
    "multivariate_normal": lambda k: tr.multivariate_normal(
        k, np.zeros(2, F32), np.array([[2, 1], [1, 2]], F32), (3,)),
    "orthogonal": lambda k: tr.orthogonal(k, 3),
    "gamma": lambda k: tr.gamma(k, np.array([0.3, 1.0, 4.0], F32), (2, 3)),
    "loggamma": lambda k: tr.loggamma(k, 0.2, (3,)),
    "beta": lambda k: tr.beta(k, 2.0, 3.0, (3,)),
    "dirichlet": lambda k: tr.dirichlet(k, np.array([1, 2, 3], F32)),
    "chisquare": lambda k: tr.chisquare(k, 3.0, (3,)),
    "t": lambda k: tr.t(k, 4.0, (3,)),
    "f": lambda k: tr.f(k, 3.0, 5.0, (2,)),
    "generalized_normal": lambda k: tr.generalized_normal(k, 1.5, (3,)),
    "ball": lambda k: tr.ball(k, 3),
    "poisson": lambda k: tr.poisson(k, np.array([0.0, 2.0, 40.0], F32)),
    "geometric": lambda k: tr.geometric(k, 0.3, (5,)),
    "binomial": lambda k: tr.binomial(k, np.array([4.0, 60.0, 30.0], F32),
                                      np.array([0.3, 0.4, 0.9], F32)),
    "choice": lambda k: tr.choice(k, 10, (3,)),
    "choice_p": lambda k: tr.choice(k, 4, (3,), replace=False, p=np.array([.1, .2, .3, .4])),
    "randint_int64": lambda k: tr.randint(k, (5,), -2 ** 40, 2 ** 40, np.int64),
    "bits_uint64": lambda k: tr.bits(k, (3,), np.uint64),
}


# compositions of gamma/loggamma draws with the exact functions the others use: compared
# under jit(numpy) only, to keep this file fast (each gamma loop costs ~1 s of llvm compile)
GAMMA_COMPOSITES = {"beta", "dirichlet", "chisquare", "t", "f", "generalized_normal", "ball"}


def _sampler_of(names):
    """Draws of the named samplers, each from its own key (the same in every subset)."""
    def draw(k):
        return {name: SMALL[name](tr.fold_in(k, i)) for i, name in enumerate(sorted(SMALL))
                if name in names}
    return draw


_ALL, _FAST = _sampler_of(set(SMALL)), _sampler_of(set(SMALL) - GAMMA_COMPOSITES)


@pytest.fixture(scope="module")
def eager():
    return _ALL(KEY)


def _check_same(ours, eager_values):
    for name, value in ours.items():
        assert np.asarray(value).dtype == np.asarray(eager_values[name]).dtype, name
        np.testing.assert_array_equal(value, eager_values[name], err_msg=name)


@pytest.mark.parametrize("backend, draw", [("numpy", _ALL), ("llvm", _FAST)])
def test_same_bits_eager_and_jit(eager, backend, draw):
    _check_same(tracer.jit(draw, backend=backend)(KEY), eager)


def test_vmap_over_keys_equals_a_loop(eager):
    other = tr.PRNGKey(3)
    batched = tracer.vmap(_FAST)(np.stack([KEY, other]))
    _check_same({name: value[0] for name, value in batched.items()}, eager)
    _check_same({name: value[1] for name, value in batched.items()}, _FAST(other))


# ---- shapes, dtypes, errors ------------------------------------------------------------
def test_shapes_and_dtypes():
    assert tr.gamma(KEY, np.ones((2, 3), F32)).shape == (2, 3)
    assert tr.gamma(KEY, np.ones(3), (4, 3), np.float64).dtype == np.float64
    assert tr.beta(KEY, np.ones(3), np.ones((2, 1))).shape == (2, 3)
    assert tr.exponential(KEY).shape == () and tr.exponential(KEY).dtype == F32
    assert tr.laplace(KEY, (2,), np.float16).dtype == np.float16
    assert tr.poisson(KEY, np.ones(4)).dtype == np.int32
    assert tr.poisson(KEY, 2.0, (3,), np.int64).dtype == np.int64
    assert tr.binomial(KEY, 5, np.full(3, 0.5)).dtype == F32
    np.testing.assert_array_equal(tr.binomial(KEY, np.array([-1, np.inf, 4]), 0.5)[:2],
                                  [np.nan, np.inf])
    assert tr.dirichlet(KEY, np.ones((2, 4))).shape == (2, 4)
    assert tr.dirichlet(KEY, np.ones(4), (5,)).shape == (5, 4)
    assert tr.double_sided_maxwell(KEY, np.zeros(3), 1.0, (2,)).shape == (2, 3)
    assert tr.multivariate_normal(KEY, np.zeros((4, 2)), np.eye(2)).shape == (4, 2)
    assert tr.ball(KEY, 5, 1, (2,)).shape == (2, 5)
    assert tr.bits(KEY, (2,), np.uint8).dtype == np.uint8
    assert tr.randint(KEY, (3,), 0, 5, np.int64).dtype == np.int64
    np.testing.assert_array_equal(tr.key_data(tr.wrap_key_data(KEY)), KEY)
    np.testing.assert_array_equal(tr.key(7), KEY)
    with pytest.warns(DeprecationWarning):
        np.testing.assert_array_equal(tr.shuffle(KEY, np.arange(5)),
                                      tr.permutation(KEY, np.arange(5)))


@pytest.mark.parametrize("call, error, words", [
    (lambda: tr.gamma(KEY, np.ones(3), (2,)), tracer.ShapeError, "gamma"),
    (lambda: tr.exponential(KEY, (2,), np.int32), tracer.DTypeError, "exponential"),
    (lambda: tr.poisson(KEY, 1.0, (2,), np.float32), tracer.DTypeError, "poisson"),
    (lambda: tr.dirichlet(KEY, 1.0), tracer.ShapeError, "dirichlet"),
    (lambda: tr.multivariate_normal(KEY, np.zeros(2), np.eye(3)), tracer.ShapeError,
     "multivariate_normal"),
    (lambda: tr.choice(KEY, 3, (5,), replace=False), tracer.ArgumentError, "population"),
    (lambda: tr.choice(KEY, 3, (2,), p=np.ones(4)), tracer.ShapeError, "p must be"),
    (lambda: tr.orthogonal(KEY, -1), tracer.ArgumentError, "orthogonal"),
    (lambda: tr.bits(KEY, (2,), np.int32), ValueError, "must be an unsigned int"),
    (lambda: tr.wrap_key_data(np.zeros(3, np.uint32)), tracer.ShapeError, "wrap_key_data"),
    (lambda: tr.key(0, impl="rbg"), tracer.ArgumentError, "threefry2x32"),
])
def test_clear_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


# ---- reparameterised gradients ---------------------------------------------------------
GRADS = {
    "pareto": (lambda k, p: tr.pareto(k, p, (50,), np.float64), 3.0),
    "rayleigh": (lambda k, p: tr.rayleigh(k, p, (50,), np.float64), 2.0),
    "weibull_min": (lambda k, p: tr.weibull_min(k, 2.0, p, (50,), np.float64), 1.5),
    "lognormal": (lambda k, p: tr.lognormal(k, p, (50,), np.float64), 0.5),
    "double_sided_maxwell": (lambda k, p: tr.double_sided_maxwell(k, p, p * p, (50,),
                                                                  np.float64), 1.5),
    "truncated_normal": (lambda k, p: tr.truncated_normal(k, -p, p * p, (50,), np.float64),
                         1.2),
    "multivariate_normal": (lambda k, p: tr.multivariate_normal(
        k, np.zeros(2), np.array([[0, 0.5], [0.5, 2.0]]) + p * np.array([[1, 0], [0, 0]]), (25,),
        np.float64), 1.5),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_reparameterised_gradient_matches_finite_differences(name):
    sampler, p = GRADS[name]

    def loss(q):
        return tracer.numpy.sum(tracer.numpy.sin(sampler(KEY, q)))
    g = tracer.grad(loss)(p)
    h = 1e-6
    fd = (float(loss(p + h)) - float(loss(p - h))) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_degenerate_parameters_as_jax():
    np.testing.assert_array_equal(tr.binomial(KEY, 5.0, 0.0, (3,)), [0, 0, 0])
    np.testing.assert_array_equal(tr.binomial(KEY, 5.0, 1.0, (3,)), [5, 5, 5])
    np.testing.assert_array_equal(tr.gamma(KEY, np.array([0.0, -1.0], F32)), [0, np.nan])
    np.testing.assert_array_equal(tr.poisson(KEY, np.array([0.0, -1.0], F32)), [0, -1])


def _mean_gradient(sampler, a, n=2000):
    return float(tracer.grad(lambda q: tracer.numpy.mean(sampler(KEY, q, (n,), np.float64)))(a))


def test_gamma_implicit_gradient_means(a=0.4):
    """d E[x] / da = 1 for Gamma(a), d E[log x] / da = trigamma(a), and d E[beta(a, 3)] / da
    = 3 / (a + 3)**2: the implicit gradients average to the derivatives of the means."""
    assert abs(_mean_gradient(tr.gamma, a) - 1) < 0.1
    trigamma = sum(1 / (a + k) ** 2 for k in range(10 ** 5)) + 1 / (a + 10 ** 5)
    assert abs(_mean_gradient(tr.loggamma, a) - trigamma) < 0.05 * trigamma
    beta = _mean_gradient(lambda k, q, shape, dt: tr.beta(k, q, 3.0, shape, dt), a)
    assert abs(beta - 3 / (a + 3) ** 2) < 0.1 * 3 / (a + 3) ** 2


def test_gamma_gradient_of_one_draw_is_implicit():
    """At a fixed quantile u, x(a) solves P(a, x) = u: compare dx/da with the finite
    difference of the quantile, computed by bisection on P's series in float64."""
    def cdf(a, x):
        term = total = 1.0
        n = 0
        while term > 1e-17 * total:
            n += 1
            term *= x / (a + n)
            total += term
        return math.exp(a * math.log(x) - x - math.lgamma(a + 1)) * total

    def quantile(a, u):
        lo, hi = 0.0, 100.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf(a, mid) < u else (lo, mid)
        return lo
    a = 1.7
    x = float(tr.gamma(KEY, a, (), np.float64))
    g = float(tracer.grad(lambda q: tr.gamma(KEY, q, (), np.float64))(a))
    u, h = cdf(a, x), 1e-5
    fd = (quantile(a + h, u) - quantile(a - h, u)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5)
