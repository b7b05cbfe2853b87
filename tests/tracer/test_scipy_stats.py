"""tracer.scipy.stats: densities and distribution functions against closed forms (always)
and scipy.stats (where scipy is importable), float64 and float32, loc/scale and
broadcasting, out-of-support values as JAX gives them, jit on both backends, gradients by
finite differences and vmap."""
import math

import numpy as np
import pytest

import tracer
from tracer.scipy import stats

R = np.random.default_rng(2)
X = np.concatenate([R.uniform(-3, 6, 8), [0.0, 1.0, -1.0, 2.0]])
Q = R.uniform(0.01, 0.99, 8)
K = np.array([-1.0, 0, 1, 2, 3, 5, 1.5, 7])
MODES = ["eager", "numpy", "llvm"]


def _run(mode, f, *args):
    return f(*args) if mode == "eager" else tracer.jit(f, backend=mode)(*args)


@pytest.mark.parametrize("mode", MODES)
def test_closed_forms(mode):
    z = (X - 0.5) / 2
    with np.errstate(all="ignore"):
        pins = [
            (stats.norm.logpdf, (X, 0.5, 2.0), -z ** 2 / 2 - np.log(2 * np.sqrt(2 * np.pi))),
            (stats.norm.cdf, (X, 0.5, 2.0), [math.erfc(-v / math.sqrt(2)) / 2 for v in z]),
            (stats.norm.ppf, (Q,), [math.sqrt(2) * _erfinv(2 * v - 1) for v in Q]),
            (stats.cauchy.cdf, (X, 0.5, 2.0), 0.5 + np.arctan(z) / np.pi),
            (stats.laplace.logpdf, (X, 0.5, 2.0), -np.abs(z) - np.log(4.0)),
            (stats.logistic.cdf, (X, 0.5, 2.0), 1 / (1 + np.exp(-z))),
            (stats.expon.logpdf, (X, 0.5, 2.0), np.where(X < 0.5, -np.inf, -z - np.log(2.0))),
            (stats.expon.cdf, (X,), np.where(X < 0, 0, 1 - np.exp(-X))),
            (stats.uniform.pdf, (X, -1.0, 3.0), np.where((X >= -1) & (X <= 2), 1 / 3, 0)),
            (stats.gumbel_r.cdf, (X, 0.5, 2.0), np.exp(-np.exp(-z))),
            (stats.gumbel_l.sf, (X, 0.5, 2.0), np.exp(-np.exp(z))),
            (stats.pareto.sf, (X, 2.5), np.where(X < 1, 1, X ** -2.5)),
            (stats.gamma.cdf, (X, 1.0), np.where(X < 0, 0, 1 - np.exp(-X))),
            (stats.chi2.sf, (X, 2.0), np.where(X < 0, 1, np.exp(-X / 2))),
            (stats.beta.cdf, (Q, 2.0, 1.0), Q ** 2),
            (stats.t.pdf, (X, 1.0), 1 / (np.pi * (1 + X ** 2))),
            (stats.poisson.pmf, (K, 2.5), [2.5 ** k * math.exp(-2.5) / math.factorial(int(k))
                                           if k >= 0 and k == int(k) else 0 for k in K]),
            (stats.binom.pmf, (K, 6.0, 0.3), [math.comb(6, int(k)) * 0.3 ** k * 0.7 ** (6 - k)
                                              if 0 <= k <= 6 and k == int(k) else 0 for k in K]),
            (stats.geom.pmf, (K, 0.3), np.where(K >= 1, 0.7 ** (K - 1) * 0.3, 0)),
            (stats.bernoulli.pmf, (K, 0.3), np.where(K == 0, 0.7, np.where(K == 1, 0.3, 0))),
        ]
    for f, args, want in pins:
        if f is stats.binom.pmf:          # the gamma form at the non-integer 1.5
            want = np.where(K == 1.5, math.gamma(7) / math.gamma(2.5) / math.gamma(5.5)
                            * 0.3 ** 1.5 * 0.7 ** 4.5, want)
        for dt, tol in ((np.float64, 1e-11), (np.float32, 2e-5)):
            a = [np.asarray(v, dt) for v in args]
            got = _run(mode, f, *a)
            assert np.asarray(got).dtype == dt, (f, dt)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(f))


def _erfinv(y):
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def test_tails_support_and_nans():
    with np.errstate(all="ignore"):
        assert stats.norm.logcdf(-40.0) == pytest.approx(-804.6084420137538, rel=1e-12)
        assert stats.norm.logsf(40.0) == pytest.approx(-804.6084420137538, rel=1e-12)
        assert stats.expon.logpdf(-1.0) == -np.inf and stats.expon.cdf(-1.0) == 0
        assert np.isnan(stats.expon.ppf(1.5)) and np.isnan(stats.uniform.ppf(-0.1))
        assert stats.beta.logpdf(1.5, 2.0, 3.0) == -np.inf
        assert np.isnan(stats.beta.logpdf(0.5, -1.0, 3.0))
        assert stats.gamma.logpdf(-0.1, 2.0) == -np.inf and stats.gamma.sf(-1.0, 2.0) == 1
        assert stats.chi2.logpdf(-1.0, 3.0) == -np.inf
        assert stats.pareto.logpdf(0.5, 2.0) == -np.inf and stats.pareto.cdf(0.5, 2.0) == 0
        assert stats.poisson.logpmf(1.5, 2.0) == -np.inf and stats.poisson.cdf(-1.0, 2.0) == 0
        assert stats.geom.logpmf(0.0, 0.3) == -np.inf
        assert stats.binom.logpmf(7.0, 6.0, 0.3) == -np.inf
        assert stats.binom.pmf(0.0, 0.0, 0.3) == 1
        assert stats.bernoulli.logpmf(2.0, 0.3) == -np.inf
        assert np.isnan(stats.bernoulli.cdf(0.5, 1.5))
        np.testing.assert_array_equal(stats.bernoulli.ppf(np.array([0.5, 0.8]), 0.3), [0, 1])
        assert np.isnan(stats.gumbel_l.logpdf(0.0, 0.0, -1.0))
        assert np.isnan(stats.gumbel_r.ppf(1.0))
        assert stats.truncnorm.logpdf(2.0, -1.0, 1.0) == -np.inf
        assert np.isnan(stats.truncnorm.logpdf(0.0, 1.0, -1.0))
        assert stats.truncnorm.cdf(1.0, -1.0, 1.0) == 1
        assert stats.truncnorm.cdf(-1.0, -1.0, 1.0) == 0
        assert stats.dirichlet.logpdf(np.array([0.5, 0.6, 0.1]), np.ones(3)) == -np.inf


def test_truncnorm_and_mvn_closed_forms():
    a, b = -0.5, 1.5
    mass = (math.erfc(-b / math.sqrt(2)) - math.erfc(-a / math.sqrt(2))) / 2
    x = np.linspace(-0.4, 1.4, 5)
    np.testing.assert_allclose(stats.truncnorm.pdf(x, a, b),
                               np.exp(-x ** 2 / 2) / np.sqrt(2 * np.pi) / mass, rtol=1e-12)
    cdf = [(math.erfc(-v / math.sqrt(2)) - math.erfc(-a / math.sqrt(2))) / 2 / mass for v in x]
    np.testing.assert_allclose(stats.truncnorm.cdf(x, a, b), cdf, rtol=1e-12)
    np.testing.assert_allclose(stats.truncnorm.sf(x, a, b), 1 - np.array(cdf), rtol=1e-11)
    far = stats.truncnorm.logpdf(30.5, 30.0, 31.0)          # mass from the right tail
    mass = (math.erfc(30 / math.sqrt(2)) - math.erfc(31 / math.sqrt(2))) / 2   # ~1e-198
    assert far == pytest.approx(-30.5 ** 2 / 2 - 0.5 * math.log(2 * math.pi) - math.log(mass),
                                rel=1e-9)                   # log_ndtr's 3-term series
    mean, A = R.normal(size=3), R.normal(size=(3, 3))
    cov = A @ A.T + np.eye(3)
    xs = R.normal(size=(5, 3))
    d = xs - mean
    want = (-0.5 * np.einsum("ni,ij,nj->n", d, np.linalg.inv(cov), d)
            - 1.5 * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(cov)[1])
    for mode in MODES:
        np.testing.assert_allclose(_run(mode, stats.multivariate_normal.logpdf, xs, mean, cov),
                                   want, rtol=1e-12)
    got = stats.multivariate_normal.logpdf(xs.astype(np.float32), mean.astype(np.float32),
                                           cov.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4)
    np.testing.assert_allclose(stats.multivariate_normal.pdf(xs, mean, 2.0),
                               np.exp(-0.25 * np.sum(d * d, 1)) / (4 * np.pi) ** 1.5, rtol=1e-12)
    alpha = np.array([1.5, 2.0, 3.0])
    p = np.array([0.2, 0.3, 0.5])
    want = (math.lgamma(6.5) - sum(math.lgamma(v) for v in alpha)
            + np.sum((alpha - 1) * np.log(p)))
    assert stats.dirichlet.logpdf(p, alpha) == pytest.approx(want, rel=1e-13)
    assert stats.dirichlet.logpdf(p[:2], alpha) == pytest.approx(want, rel=1e-13)


GRADS = [
    (stats.norm.logpdf, (0.3, 0.1, 1.5)), (stats.norm.logcdf, (-3.0, 0.1, 1.5)),
    (stats.norm.ppf, (0.3, 0.1, 1.5)), (stats.cauchy.logpdf, (0.3, 0.1, 1.5)),
    (stats.laplace.logpdf, (0.3, 0.1, 1.5)), (stats.logistic.logpdf, (0.3, 0.1, 1.5)),
    (stats.expon.logpdf, (0.3, 0.1, 1.5)), (stats.uniform.logpdf, (0.3, 0.1, 1.5)),
    (stats.gumbel_l.logpdf, (0.3, 0.1, 1.5)), (stats.gumbel_r.logcdf, (0.3, 0.1, 1.5)),
    (stats.t.logpdf, (0.3, 3.5, 0.1, 1.5)), (stats.chi2.logpdf, (1.3, 3.5)),
    (stats.gamma.logpdf, (1.3, 2.5, 0.1, 1.5)), (stats.gamma.cdf, (1.3, 2.5)),
    (stats.beta.logpdf, (0.3, 2.5, 1.5)), (stats.beta.cdf, (0.3, 2.5, 1.5)),
    (stats.pareto.logpdf, (2.3, 2.5)), (stats.truncnorm.logpdf, (0.3, -0.5, 1.5)),
    (stats.truncnorm.logcdf, (0.3, -0.5, 1.5)),
]


@pytest.mark.parametrize("f,args", GRADS, ids=[f"{g[0].__module__.split('.')[-1]}.{g[0].__name__}"
                                                for g in GRADS])
def test_check_grads(f, args):
    tracer.check_grads(f, tuple(np.float64(a) for a in args), order=1)


def test_discrete_grads_in_their_parameters():
    for f, k in ((stats.poisson.logpmf, 3.0), (stats.geom.logpmf, 3.0),
                 (stats.bernoulli.logpmf, 1.0), (stats.bernoulli.logpmf, 0.0)):
        tracer.check_grads(lambda p: f(k, p), (np.float64(0.3),), order=1)
    tracer.check_grads(lambda n, p: stats.binom.logpmf(3.0, n, p), (6.0, 0.3), order=1)
    assert tracer.grad(lambda mu: stats.poisson.logpmf(3.0, mu))(2.5) == pytest.approx(3 / 2.5 - 1)


def test_mvn_grad_and_vmap():
    mean, A = R.normal(size=3), R.normal(size=(3, 3))
    cov = A @ A.T + np.eye(3)
    x = R.normal(size=3)
    tracer.check_grads(lambda x, m: stats.multivariate_normal.logpdf(x, m, cov), (x, mean),
                       order=1)
    g = tracer.grad(stats.multivariate_normal.logpdf)(x, mean, cov)
    np.testing.assert_allclose(g, -np.linalg.solve(cov, x - mean), rtol=1e-12)
    xs = R.normal(size=(4, 3))
    np.testing.assert_allclose(tracer.vmap(stats.multivariate_normal.logpdf,
                                           in_axes=(0, None, None))(xs, mean, cov),
                               stats.multivariate_normal.logpdf(xs, mean, cov), rtol=1e-13)
    out = tracer.vmap(stats.gamma.logpdf, in_axes=(0, None))(X[X > 0], 2.5)
    np.testing.assert_allclose(out, stats.gamma.logpdf(X[X > 0], 2.5), rtol=1e-14)
    out = tracer.jit(tracer.vmap(tracer.grad(stats.norm.logcdf)))(X - 20)
    assert np.all(np.isfinite(out))


def test_poisson_entropy():
    mu = np.array([0.0, 0.5, 3.0, 50.0, 1000.0])
    k = np.arange(400.0)[:, None]
    with np.errstate(all="ignore"):
        logp = k * np.log(mu) - mu - np.vectorize(math.lgamma)(k + 1)
        want = -np.sum(np.where(np.isfinite(logp), np.exp(logp) * logp, 0.0), axis=0)
    want[-1] = 0.5 * np.log(2 * np.pi * np.e * 1000) - 1 / 12000         # JAX's series
    for mode in MODES:
        np.testing.assert_allclose(_run(mode, stats.poisson.entropy, mu), want, rtol=1e-10,
                                   atol=1e-12)
    assert stats.poisson.entropy(np.ones((2, 1)), np.zeros(3)).shape == (2, 3)


def test_module_namespaces_hold_jax_names():
    for name in stats.__all__:
        public = {n for n in dir(getattr(stats, name)) if not n.startswith("_")}
        assert public - {"np", "tnp", "math", "nn"} <= {
            "logpdf", "pdf", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf",
            "entropy"}, name


def test_half_precision_keeps_dtype():
    import ml_dtypes
    for dt in (np.float16, ml_dtypes.bfloat16):
        x = np.array([0.25, 1.5, 2.5], dt)
        for f in (stats.norm.logpdf, stats.norm.cdf, stats.cauchy.logpdf, stats.t.logpdf,
                  stats.expon.logpdf, stats.uniform.cdf, stats.logistic.logpdf):
            args = (x, x + 3) if f is stats.t.logpdf else (x,)
            assert np.asarray(f(*args)).dtype == dt, (f, dt)
            assert np.asarray(tracer.jit(f)(*args)).dtype == dt, (f, dt)
        np.testing.assert_allclose(np.asarray(stats.norm.logpdf(x), np.float64),
                                   stats.norm.logpdf(x.astype(np.float64)), rtol=1e-2)
    assert stats.norm.logpdf(np.ones(2, ml_dtypes.bfloat16), np.float32(0)).dtype == np.float32


def test_broadcasting():
    out = stats.norm.logpdf(np.zeros((3, 1)), np.zeros(4), np.ones((1, 4)))
    assert out.shape == (3, 4)
    assert stats.beta.cdf(np.full((2, 3), 0.5), np.array([1.0, 2.0, 3.0]), 2.0).shape == (2, 3)


CONT = {"norm": (), "cauchy": (), "laplace": (), "logistic": (), "uniform": (), "expon": (),
        "gumbel_l": (), "gumbel_r": (), "t": (3.5,), "chi2": (2.5,), "gamma": (1.7,),
        "pareto": (2.5,), "beta": (2.0, 3.0), "truncnorm": (-0.5, 1.5)}
FUNCS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


@pytest.mark.parametrize("name", sorted(CONT))
def test_against_scipy(name):
    ss = pytest.importorskip("scipy.stats")
    dist, ours = getattr(ss, name), getattr(stats, name)
    x = X if name != "beta" else Q * 1.4 - 0.2
    for fn in FUNCS:
        if not hasattr(ours, fn):
            continue
        arg = Q if fn in ("ppf", "isf") else x
        for loc, scale in ((0.0, 1.0), (0.5, 2.0)):
            with np.errstate(all="ignore"):
                want = getattr(dist, fn)(arg, *CONT[name], loc=loc, scale=scale)
                got = getattr(ours, fn)(arg, *CONT[name], loc=loc, scale=scale)
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-12, err_msg=f"{name}.{fn}")


def test_discrete_against_scipy():
    ss = pytest.importorskip("scipy.stats")
    k = np.array([-1.0, 0, 1, 2, 3, 5, 7])
    for name, args in {"bernoulli": (0.3,), "binom": (6.0, 0.3), "geom": (0.3,),
                       "poisson": (2.5,)}.items():
        for fn in ("logpmf", "pmf", "cdf"):
            if hasattr(getattr(stats, name), fn):
                with np.errstate(all="ignore"):
                    np.testing.assert_allclose(getattr(getattr(stats, name), fn)(k, *args),
                                               getattr(getattr(ss, name), fn)(k, *args),
                                               rtol=1e-10, err_msg=f"{name}.{fn}")
