"""tracer.lax.erfc, lgamma, digamma, erf_inv, bessel_i0e and bessel_i1e: against Python's
math module (and, for digamma, its defining identities) to near full precision in float64
and float32, poles and infinities, jit on both backends, and gradients by finite
differences."""
import math

import numpy as np
import pytest

import tracer
from tracer import lax

R = np.random.default_rng(0)
XS = np.concatenate([R.uniform(-6, 6, 60), R.uniform(0, 40, 30), [0.5, 1.0, 2.0, 1e-8, 171.5]])
XS = XS[np.abs(XS - np.round(XS)) > 1e-3 * (XS < 0)]              # away from the poles
ERFC_XS = np.concatenate([R.uniform(-5, 27, 60), [0.0, 1.0, -1.0, 8.0, -8.0]])
ERF_XS = np.concatenate([R.uniform(-1, 1, 40), 1 - 10.0 ** -R.uniform(1, 15, 20),
                         -1 + 10.0 ** -R.uniform(1, 15, 20)])


def _lgamma_ref(x):
    return np.array([math.lgamma(v) for v in x])


def _run(mode, fn, x):
    return fn(x) if mode == "eager" else tracer.jit(fn, backend=mode)(x)


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_float64_near_full_precision(mode):
    np.testing.assert_allclose(_run(mode, lax.lgamma, XS), _lgamma_ref(XS), rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_allclose(_run(mode, lax.erfc, ERFC_XS),
                               [math.erfc(v) for v in ERFC_XS], rtol=1e-12, atol=0)
    y = _run(mode, lax.erf_inv, ERF_XS)
    central = np.abs(ERF_XS) <= 0.5
    np.testing.assert_allclose([math.erf(v) for v in y[central]], ERF_XS[central], rtol=1e-15)
    np.testing.assert_allclose([math.erfc(abs(v)) for v in y[~central]],
                               1 - np.abs(ERF_XS[~central]), rtol=1e-14)
    x = XS[np.abs(XS) > 1e-3]                      # d + 1/x would cancel at 1e-8
    np.testing.assert_allclose(_run(mode, lax.digamma, x + 1), _run(mode, lax.digamma, x) + 1 / x,
                               rtol=1e-12, atol=1e-12)


def test_digamma_identities_and_values():
    assert lax.digamma(np.float64(1.0)) == pytest.approx(-0.5772156649015329, rel=1e-15)
    x = R.uniform(0.05, 0.95, 20)
    np.testing.assert_allclose(lax.digamma(1 - x) - lax.digamma(x), np.pi / np.tan(np.pi * x),
                               rtol=1e-12)
    dl = tracer.vmap(tracer.grad(lax.lgamma))(XS)
    np.testing.assert_allclose(dl, lax.digamma(XS), rtol=1e-11, atol=1e-11)


def test_float32_and_half():
    for dt, tol in ((np.float32, 3e-6), (np.float16, 2e-3)):
        x = XS[(XS > -5) & (XS < 9)].astype(dt)
        x = x[(x > 0) | (np.abs(x - np.round(x)) > 0.05)]       # rounding may hit a pole
        got = lax.lgamma(x)
        assert got.dtype == dt
        np.testing.assert_allclose(got, _lgamma_ref(x.astype(np.float64)), rtol=tol, atol=tol)
        e = ERF_XS[np.abs(ERF_XS) < 0.999].astype(dt)
        np.testing.assert_allclose([math.erf(v) for v in lax.erf_inv(e).astype(np.float64)],
                                   e, rtol=tol, atol=tol)


def test_poles_and_infinities():
    with np.errstate(all="ignore"):
        v = np.array([0.0, -3.0, np.inf, -np.inf, np.nan])
        assert lax.lgamma(v).tolist()[:4] == [np.inf] * 4 and np.isnan(lax.lgamma(v)[4])
        assert np.isnan(lax.digamma(np.array([0.0, -3.0, -np.inf]))).all()
        assert lax.erfc(np.array([np.inf, -np.inf, 40.0])).tolist() == [0.0, 2.0, 0.0]
        got = lax.erf_inv(np.array([1.0, -1.0, 1.5, 0.0]))
        assert got[:2].tolist() == [np.inf, -np.inf] and np.isnan(got[2]) and got[3] == 0
    with pytest.raises(TypeError, match="lax.lgamma"):
        lax.lgamma(np.int32(3))


@pytest.mark.parametrize("fn,x", [(lax.erfc, np.array([-1.5, 0.3, 2.0, 4.0])),
                                  (lax.lgamma, np.array([-2.5, 0.3, 1.5, 7.0])),
                                  (lax.digamma, np.array([-1.5, 0.3, 2.5])),
                                  (lax.erf_inv, np.array([-0.9, 0.2, 0.7, 0.999]))])
def test_grads_match_finite_differences(fn, x):
    tracer.check_grads(fn, (x,), modes=("rev", "fwd"))


def _bessel_ie_ref(x, order):
    """exp(-|x|) I_order(x) by the power series summed exactly enough with math.fsum."""
    a = abs(x)
    terms = [(a / 2) ** order]
    for k in range(1, 200):
        terms.append(terms[-1] * (a / 2) ** 2 / (k * (k + order)))
    return math.copysign(1.0, x) ** order * math.fsum(terms) * math.exp(-a)


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_bessel_ie_against_the_series(mode):
    x = np.concatenate([R.uniform(-45, 45, 60), [0.0, 19.999, 20.001, -20.5]])
    fn = lambda v: (lax.bessel_i0e(v), lax.bessel_i1e(v))            # noqa: E731
    i0e, i1e = fn(x) if mode == "eager" else tracer.jit(fn, backend=mode)(x)
    np.testing.assert_allclose(i0e, [_bessel_ie_ref(v, 0) for v in x], rtol=5e-15)
    np.testing.assert_allclose(i1e, [_bessel_ie_ref(v, 1) for v in x], rtol=5e-15, atol=1e-300)
    assert lax.bessel_i0e(np.array([np.inf, 1e5])).tolist()[0] == 0.0


def test_bessel_ie_gradient_identity():
    x = np.array([-25.0, -3.0, 0.5, 7.0, 19.0, 22.0])
    d0 = tracer.vmap(tracer.grad(lax.bessel_i0e))(x)
    np.testing.assert_allclose(d0, lax.bessel_i1e(x) - np.sign(x) * lax.bessel_i0e(x),
                               rtol=1e-12, atol=1e-15)
    tracer.check_grads(lax.bessel_i1e, (x,), modes=("rev", "fwd"))
