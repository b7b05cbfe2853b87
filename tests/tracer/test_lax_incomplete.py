"""tracer.lax.igamma, igammac, igamma_grad_a, random_gamma_grad, betainc, zeta and
polygamma: against closed forms and identities, eagerly and under jit on both backends,
edges, and gradients by finite differences."""
import math

import numpy as np
import pytest

import tracer
from tracer import lax

R = np.random.default_rng(1)


def _p_integer(n, x):
    """P(n, x) for integer n: 1 - exp(-x) sum_{k<n} x^k / k!."""
    return 1 - math.exp(-x) * sum(x ** k / math.factorial(k) for k in range(n))


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_igamma_against_closed_forms(mode):
    x = np.concatenate([R.uniform(0, 3, 20), R.uniform(3, 60, 20)])    # series and fraction
    a = np.repeat([0.5, 1.0, 4.0, 12.0], len(x))
    xs = np.tile(x, 4)
    want_p = np.array([math.erf(math.sqrt(v)) if n == 0.5 else _p_integer(int(n), v)
                       for n, v in zip(a, xs)])
    want_q = np.array([math.erfc(math.sqrt(v)) if n == 0.5 else 1 - p
                       for n, v, p in zip(a, xs, want_p)])
    fn = lambda a, x: (lax.igamma(a, x), lax.igammac(a, x))             # noqa: E731
    p, q = fn(a, xs) if mode == "eager" else tracer.jit(fn, backend=mode)(a, xs)
    np.testing.assert_allclose(p, want_p, rtol=1e-13, atol=1e-14)
    half = a == 0.5                              # Q has a closed form to full precision here
    np.testing.assert_allclose(q[half], want_q[half], rtol=1e-12)
    np.testing.assert_allclose(q[~half], want_q[~half], atol=1e-14)
    with np.errstate(all="ignore"):
        edge = lax.igamma(np.array([2.0, 0.0, -1.0]), np.array([0.0, 1.0, 1.0]))
    assert edge[:2].tolist() == [0.0, 1.0] and np.isnan(edge[2])
    assert lax.igamma(np.float32(4.0), np.float32(3.0)).dtype == np.float32


def test_igamma_grads_and_vmap():
    a, x = np.array([0.7, 3.0, 10.0]), np.array([0.4, 5.0, 8.0])
    tracer.check_grads(lambda x: lax.igamma(a, x), (x,), modes=("rev",))
    tracer.check_grads(lambda a: lax.igammac(a, x), (a,), modes=("rev",))
    np.testing.assert_allclose(tracer.vmap(lax.igamma)(a, x), lax.igamma(a, x), rtol=1e-15)


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_zeta_and_polygamma_identities(mode):
    s, q = R.uniform(1.1, 12, 30), R.uniform(0.05, 20, 30)
    m = R.integers(1, 5, 30).astype(np.float64)

    def f(s, q, m):
        return (lax.zeta(s, q), lax.zeta(s, q + 1), lax.polygamma(m, q), lax.polygamma(m, q + 1),
                lax.polygamma(np.zeros_like(q), q))
    z, z1, p, p1, p0 = f(s, q, m) if mode == "eager" else tracer.jit(f, backend=mode)(s, q, m)
    np.testing.assert_allclose(z - z1, q ** -s, rtol=1e-12)
    fact = np.array([math.factorial(int(k)) for k in m])
    np.testing.assert_allclose(p1 - p, (-1) ** m * fact * q ** -(m + 1), rtol=1e-11)
    np.testing.assert_allclose(p0, lax.digamma(q), rtol=1e-15)


def test_zeta_values_and_edges():
    got = lax.zeta(np.array([2.0, 4.0, 1.0, 0.5, 2.0]), np.array([1.0, 1.0, 1.0, 1.0, 0.0]))
    np.testing.assert_allclose(got[:2], [np.pi ** 2 / 6, np.pi ** 4 / 90], rtol=1e-15)
    assert got[2] == np.inf and np.isnan(got[3]) and got[4] == np.inf
    assert lax.polygamma(1.0, 1.0) == pytest.approx(np.pi ** 2 / 6, rel=1e-15)
    assert np.isnan(lax.polygamma(np.array([1.5, -1.0]), np.array([1.0, 1.0]))).all()
    tracer.check_grads(lambda q: lax.zeta(np.array([2.5, 4.0]), q), (np.array([0.7, 3.0]),),
                       modes=("rev", "fwd"))


def test_igamma_grad_a_and_random_gamma_grad():
    a, x = np.array([0.5, 3.0, 10.0]), np.array([0.3, 2.5, 12.0])
    h = 1e-6
    fd_a = (lax.igamma(a + h, x) - lax.igamma(a - h, x)) / (2 * h)
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), fd_a, rtol=1e-7)
    fd_x = (lax.igamma(a, x + h) - lax.igamma(a, x - h)) / (2 * h)
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), -fd_a / fd_x, rtol=1e-7)
    got = tracer.jit(lax.random_gamma_grad, backend="numpy")(a.astype(np.float32),
                                                            x.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, -fd_a / fd_x, rtol=1e-5)


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_betainc_against_closed_forms(mode):
    x, b = R.uniform(0.01, 0.99, 20), R.uniform(0.2, 20, 20)
    fn = lambda a, b, x: lax.betainc(a, b, x)                        # noqa: E731
    run = fn if mode == "eager" else tracer.jit(fn, backend=mode)
    ones = np.ones_like(x)
    np.testing.assert_allclose(run(ones, b, x), 1 - (1 - x) ** b, rtol=1e-13)
    np.testing.assert_allclose(run(b, ones, x), x ** b, rtol=1e-13)
    np.testing.assert_allclose(run(2 * ones, 2 * ones, x), 3 * x ** 2 - 2 * x ** 3, rtol=1e-13)
    a = R.uniform(0.2, 20, 20)
    np.testing.assert_allclose(run(a, b, x), 1 - run(b, a, 1 - x), rtol=1e-11, atol=1e-14)


def test_betainc_edges_and_gradient():
    got = lax.betainc(np.array([2.0, 2.0, -1.0, 2.0]), np.array([3.0, 3.0, 1.0, 3.0]),
                      np.array([0.0, 1.0, 0.5, 1.5]))
    assert got[:2].tolist() == [0.0, 1.0] and np.isnan(got[2:]).all()
    a, b, x = np.array([0.7, 3.0]), np.array([2.5, 8.0]), np.array([0.2, 0.4])
    density = x ** (a - 1) * (1 - x) ** (b - 1) * np.exp(
        np.vectorize(math.lgamma)(a + b) - np.vectorize(math.lgamma)(a) -
        np.vectorize(math.lgamma)(b))
    np.testing.assert_allclose(tracer.vmap(tracer.grad(lax.betainc, 2))(a, b, x), density,
                               rtol=1e-9)
