"""tracer.scipy.special: values against Python's math module and closed forms (always) and
against scipy.special (where scipy is importable), in float64 and float32 (which stays
float32), under jit on both backends, gradients by finite differences, vmap, and the edge
values (0, inf, out of the domain) JAX gives."""
import math

import numpy as np
import pytest

import tracer
from tracer.scipy import special as sp

R = np.random.default_rng(0)
X = R.uniform(0.1, 5, 6)
Y = R.uniform(0.1, 5, 6)
P = R.uniform(0.01, 0.99, 6)
MODES = ["eager", "numpy", "llvm"]

# (name, args, reference from math / numpy) for the functions with a closed form there
CLOSED = [
    ("expit", (X - 2,), lambda x: 1 / (1 + np.exp(-x))),
    ("logit", (P,), lambda p: np.log(p / (1 - p))),
    ("erf", (X - 2,), np.vectorize(math.erf)),
    ("erfc", (X,), np.vectorize(math.erfc)),
    ("gammaln", (X - 3.3,), np.vectorize(math.lgamma)),
    ("gamma", (X - 3.3,), np.vectorize(math.gamma)),
    ("beta", (X, Y), np.vectorize(lambda a, b: math.gamma(a) * math.gamma(b) / math.gamma(a + b))),
    ("betaln", (X, Y * 10), np.vectorize(lambda a, b: math.lgamma(a) + math.lgamma(b)
                                         - math.lgamma(a + b))),
    ("xlogy", (X, Y), lambda x, y: x * np.log(y)),
    ("xlog1py", (X, Y), lambda x, y: x * np.log1p(y)),
    ("entr", (P,), lambda p: -p * np.log(p)),
    ("rel_entr", (P, Y), lambda p, q: p * np.log(p / q)),
    ("kl_div", (P, Y), lambda p, q: p * np.log(p / q) - p + q),
    ("ndtr", (X * 3 - 8,), np.vectorize(lambda x: math.erfc(-x / math.sqrt(2)) / 2)),
    ("i0", (X - 2,), np.i0),
    ("factorial", (X,), np.vectorize(lambda n: math.gamma(n + 1))),
    ("poch", (X, Y), np.vectorize(lambda z, m: math.gamma(z + m) / math.gamma(z))),
    ("comb", (X * 3 + 5, Y), np.vectorize(lambda n, k: math.gamma(n + 1) / math.gamma(k + 1)
                                      / math.gamma(n - k + 1))),
    ("boxcox", (X, Y - 2), lambda x, lm: (x ** lm - 1) / lm),
    ("boxcox1p", (X, Y - 2), lambda x, lm: ((1 + x) ** lm - 1) / lm),
]


def _run(mode, f, *args):
    return f(*args) if mode == "eager" else tracer.jit(f, backend=mode)(*args)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,args,ref", CLOSED, ids=[c[0] for c in CLOSED])
def test_closed_forms(name, args, ref, mode):
    want = ref(*args)
    # betaln beyond 8 is cdflib's algdiv, good to ~1e-8 (as JAX's)
    for dt, tol in ((np.float64, 3e-8 if name == "betaln" else 1e-11), (np.float32, 1e-4)):
        got = _run(mode, getattr(sp, name), *(a.astype(dt) for a in args))
        assert np.asarray(got).dtype == dt
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-3)


def test_inverse_pairs_and_identities():
    np.testing.assert_allclose(sp.ndtr(sp.ndtri(P)), P, rtol=1e-13)
    np.testing.assert_allclose(sp.erf(sp.erfinv(2 * P - 1)), 2 * P - 1, rtol=1e-13)
    np.testing.assert_allclose(sp.expit(sp.logit(P)), P, rtol=1e-13)
    np.testing.assert_allclose(sp.i0e(X - 2), np.exp(-np.abs(X - 2)) * np.i0(X - 2), rtol=1e-13)
    np.testing.assert_allclose(sp.digamma(X + 1), sp.digamma(X) + 1 / X, rtol=1e-12)
    np.testing.assert_allclose(sp.polygamma(np.array(1), 1.0), np.pi ** 2 / 6, rtol=1e-12)
    np.testing.assert_allclose(sp.zeta(2.0), np.pi ** 2 / 6, rtol=1e-13)
    np.testing.assert_allclose(sp.zeta(4.0, 1.0), np.pi ** 4 / 90, rtol=1e-13)
    np.testing.assert_allclose(sp.gammainc(1.0, X), 1 - np.exp(-X), rtol=1e-12)
    np.testing.assert_allclose(sp.gammaincc(1.0, X), np.exp(-X), rtol=1e-12)
    np.testing.assert_allclose(sp.betainc(1.0, 1.0, P), P, rtol=1e-12)
    np.testing.assert_allclose(sp.betainc(2.0, 1.0, P), P ** 2, rtol=1e-12)
    np.testing.assert_allclose(sp.multigammaln(X + 2, 2),
                               0.5 * np.log(np.pi) + sp.gammaln(X + 2) + sp.gammaln(X + 1.5),
                               rtol=1e-13)
    np.testing.assert_allclose(sp.i1(1.0), 0.5651591039924851, rtol=1e-13)
    np.testing.assert_allclose(sp.comb(5, 2, repetition=True), 15.0)
    # log_ndtr: JAX's asymptotic series where ndtr underflows, log ndtr(x) ~ -x^2/2 ...
    x = np.array([-40.0, -100.0])
    lead = -x * x / 2 - np.log(-x) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(sp.log_ndtr(x), lead + np.log1p(-1 / x ** 2 + 3 / x ** 4),
                               rtol=1e-9)
    assert sp.log_ndtr(np.float32(-30.0)).dtype == np.float32
    np.testing.assert_allclose(sp.log_ndtr(np.array([-3.0, 0.0, 10.0])),
                               [np.log(0.0013498980316300946), np.log(0.5), -7.61985302416047e-24],
                               rtol=1e-12)


def test_edges():
    with np.errstate(all="ignore"):
        assert sp.ndtri(0.0) == -np.inf and sp.ndtri(1.0) == np.inf
        assert np.isnan(sp.loggamma(-1.5)) and np.isnan(sp.gammasgn(-2.0))
        assert sp.gammasgn(-1.5) == 1 and sp.gammasgn(-0.5) == -1 and sp.gammasgn(-0.0) == -1
        assert sp.gamma(-0.5) == pytest.approx(-2 * np.sqrt(np.pi), rel=1e-13)
        assert sp.xlogy(0.0, 0.0) == 0 and sp.xlog1py(0.0, -1.0) == 0
        assert np.isnan(sp.xlogy(0.0, np.nan))
        np.testing.assert_array_equal(sp.entr(np.array([0.0, -1.0, np.inf])), [0, -np.inf, -np.inf])
        np.testing.assert_array_equal(sp.rel_entr(np.array([0.0, 1.0, 1.0]),
                                                  np.array([0.0, 0.0, -1.0])),
                                      [0, np.inf, np.inf])
        assert sp.kl_div(0.0, 2.0) == 2.0
        assert sp.factorial(-1.0) == 0 and sp.comb(3.0, 4.0) == 0 and sp.comb(3.0, -1.0) == 0
        assert sp.poch(2.5, 0.0) == 1
        assert sp.boxcox(2.0, 0.0) == pytest.approx(np.log(2.0))
        assert sp.log_ndtr(np.inf) == 0 and sp.log_ndtr(-np.inf) == -np.inf
        assert sp.logit(0.0) == -np.inf and sp.logit(1.0) == np.inf
        assert sp.i0e(np.inf) == 0 and sp.erfinv(1.0) == np.inf


def test_logsumexp_and_softmax():
    a, b = R.normal(size=(3, 4)), R.normal(size=(3, 4))
    ref = np.log(np.sum(np.exp(a)))
    for mode in MODES:
        np.testing.assert_allclose(_run(mode, sp.logsumexp, a), ref, rtol=1e-14)
    np.testing.assert_allclose(sp.logsumexp(a, axis=1, keepdims=True),
                               np.log(np.sum(np.exp(a), 1, keepdims=True)), rtol=1e-14)
    s = np.sum(b * np.exp(a), 0)
    out, sign = sp.logsumexp(a, axis=0, b=b, return_sign=True)
    np.testing.assert_allclose(out, np.log(np.abs(s)), rtol=1e-13)
    np.testing.assert_array_equal(sign, np.sign(s))
    np.testing.assert_array_equal(np.isnan(sp.logsumexp(a, axis=0, b=b)), s < 0)
    m = a > 0
    np.testing.assert_allclose(sp.logsumexp(a, axis=(1,), where=m),
                               np.log(np.sum(np.where(m, np.exp(a), 0), 1)), rtol=1e-14)
    assert sp.logsumexp(np.full(3, -np.inf)) == -np.inf
    assert sp.logsumexp(np.array([1e4, 1e4])) == pytest.approx(1e4 + np.log(2))
    assert sp.logsumexp(a.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(np.sum(sp.softmax(a)), 1.0, rtol=1e-14)      # over all axes
    np.testing.assert_allclose(sp.log_softmax(a, axis=1), a - np.log(np.sum(np.exp(a), 1))[:, None],
                               rtol=1e-13)


GRADS = [("expit", (0.3,)), ("logit", (0.3,)), ("erf", (0.3,)), ("erfc", (0.7,)),
         ("erfinv", (0.4,)), ("gammaln", (2.5,)), ("gamma", (2.5,)), ("digamma", (2.5,)),
         ("betaln", (1.5, 9.5)), ("beta", (1.5, 2.5)), ("betainc", (1.5, 2.5, 0.3)),
         ("gammainc", (1.5, 2.0)), ("gammaincc", (1.5, 2.0)), ("xlogy", (1.5, 2.0)),
         ("xlog1py", (1.5, 2.0)), ("entr", (0.3,)), ("rel_entr", (0.3, 0.6)),
         ("kl_div", (0.3, 0.6)), ("ndtr", (0.3,)), ("ndtri", (0.3,)), ("log_ndtr", (-3.0,)),
         ("log_ndtr", (-30.0,)), ("i0e", (0.7,)), ("i1e", (0.7,)), ("i0", (0.7,)),
         ("i1", (0.7,)), ("factorial", (2.5,)), ("poch", (2.5, 1.5)), ("comb", (6.5, 2.5)),
         ("boxcox", (2.5, 0.5)), ("boxcox1p", (2.5, 0.5)), ("zeta", (3.0, 1.5))]


@pytest.mark.parametrize("name,args", GRADS, ids=[g[0] + str(g[1][0]) for g in GRADS])
def test_check_grads(name, args):
    tracer.check_grads(getattr(sp, name), tuple(np.float64(a) for a in args), order=1)


def test_custom_gradients_and_vmap():
    assert tracer.grad(sp.xlogy)(0.0, 2.0) == pytest.approx(np.log(2.0))    # JAX's jvp
    assert tracer.grad(sp.xlogy, argnums=1)(0.0, 2.0) == 0
    g = tracer.grad(sp.log_ndtr)(-50.0)                        # finite far in the tail
    assert g == pytest.approx(50.02, rel=1e-3)
    g = tracer.grad(lambda a: sp.logsumexp(a))(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, np.exp([1, 2, 3]) / np.sum(np.exp([1, 2, 3])), rtol=1e-13)
    out = tracer.vmap(sp.logsumexp)(R.normal(size=(4, 3)))
    assert out.shape == (4,)
    out = tracer.vmap(sp.gammainc, in_axes=(None, 0))(2.0, X)
    np.testing.assert_allclose(out, sp.gammainc(2.0, X), rtol=1e-14)
    out = tracer.jit(tracer.vmap(tracer.grad(sp.log_ndtr)))(X - 3)
    np.testing.assert_allclose(out, np.exp(-0.5 * (X - 3) ** 2 - 0.5 * np.log(2 * np.pi)
                                           - sp.log_ndtr(X - 3)), rtol=1e-12)


def test_half_precision_keeps_dtype():
    import ml_dtypes
    for dt in (np.float16, ml_dtypes.bfloat16):
        x = np.array([0.3, 1.5, 2.5], dt)
        for f in (sp.ndtr, sp.log_ndtr, sp.gammaln, sp.expit, sp.i0, sp.entr):
            assert np.asarray(f(x)).dtype == dt, (f, dt)
            assert np.asarray(tracer.jit(f)(x)).dtype == dt, (f, dt)
        assert sp.betaln(x, x + 1).dtype == dt and sp.xlogy(x, x).dtype == dt
        assert sp.polygamma(np.array([1, 2, 3]), x).dtype == dt
        np.testing.assert_allclose(np.asarray(sp.ndtr(x), np.float64),
                                   sp.ndtr(x.astype(np.float64)), rtol=1e-2)


def test_argument_checks():
    with pytest.raises(ValueError):
        sp.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError):
        sp.factorial(3, exact=True)
    with pytest.raises(NotImplementedError):
        sp.comb(3, 2, exact=True)
    assert sp.erf(1).dtype == np.float64 and sp.gammaln(np.int32(3)) == pytest.approx(np.log(2))


SCIPY = ["expit", "logit", "erf", "erfc", "erfinv", "gammaln", "loggamma", "gammasgn",
         "gamma", "digamma", "zeta", "betaln", "beta", "betainc", "gammainc", "gammaincc",
         "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "ndtr", "ndtri", "log_ndtr", "i0e",
         "i1e", "i0", "i1", "factorial", "poch", "comb", "boxcox", "boxcox1p"]
ARGS = {1: (X * 4 - 8,), 2: (X, Y), 3: (X, Y, P)}
UNIT = {"logit", "erfinv", "ndtri", "entr"}


@pytest.mark.parametrize("name", SCIPY)
def test_against_scipy(name):
    ss = pytest.importorskip("scipy.special")
    f = getattr(ss, name)
    nargs = 3 if name == "betainc" else 2 if name in (
        "zeta", "betaln", "beta", "gammainc", "gammaincc", "xlogy", "xlog1py", "rel_entr",
        "kl_div", "poch", "comb", "boxcox", "boxcox1p") else 1
    args = ((2 * P - 1 if name == "erfinv" else P),) if name in UNIT else ARGS[nargs]
    if name in ("zeta",):
        args = (X + 1.1, Y)
    with np.errstate(all="ignore"):
        want = f(*args)
        for dt, tol, atol in ((np.float64, 1e-8, 1e-11), (np.float32, 2e-4, 2e-6)):
            got = getattr(sp, name)(*(a.astype(dt) for a in args))
            assert np.asarray(got).dtype == dt
            np.testing.assert_allclose(got, want, rtol=tol, atol=atol)
    np.testing.assert_allclose(sp.multigammaln(X + 2, 3), ss.multigammaln(X + 2, 3), rtol=1e-13)
