"""numpy 2's signal and polynomial functions (issue 26): convolve correlate interp
trapezoid unwrap histogram histogram_bin_edges, the windows, poly* and vander, against
NumPy eagerly and jitted on both backends, with size-1/0-d and empty inputs where they
mean something, check_grads where the math is differentiable, and vmap of a few."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ConcretizationError

RNG = np.random.default_rng(7)


def some(full):
    """Both backends for a table's representative cases, the interpreter for the rest
    (each llvm compile costs; the kernels are the same)."""
    return agreement.BACKENDS if full else ["numpy"]

A = RNG.normal(size=6)
V = RNG.normal(size=4)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("a,v", [(A, V), (V, A), (A[:1], V), (A[:5], V[:2]), (A[:2], V[:2]),
                                 (np.array([1, 2, 3], np.int8), np.array([3, -1], np.int16))],
                         ids=["long-short", "short-long", "one", "odd-even", "equal", "ints"])
def test_convolve_correlate(name, mode, a, v):
    fn, np_fn = getattr(tnp, name), getattr(np, name)
    agreement.agree(lambda a, v: fn(a, v, mode), np_fn(a, v, mode), a, v, rtol=1e-12,
                    backends=some((a is A and v is V) or a.dtype == np.int8))


def test_convolve_grad_vmap_and_errors():
    tracer.check_grads(lambda a, v: tnp.convolve(a, v, "same"), (A, V), order=1)
    tracer.check_grads(lambda a, v: tnp.correlate(a, v, "full"), (V, A), order=1)
    got = tracer.vmap(tnp.convolve)(A.reshape(2, 3), V[:2].reshape(2, 1) * np.ones((2, 2)))
    want = [np.convolve(a, v) for a, v in zip(A.reshape(2, 3), V[:2, None] * np.ones((2, 2)))]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="convolve: v cannot be empty"):
        tnp.convolve(A, [])
    with pytest.raises(ValueError, match="convolve: mode"):
        tnp.convolve(A, V, "middle")


XP, FP = np.array([1., 2, 4, 4.5]), np.array([3., 0, 5, -1])
X = np.array([0, 1, 1.5, 2, 3, 4, 4.2, 4.5, 5, np.nan])


@pytest.mark.parametrize("kw", [{}, {"left": -9.0, "right": 9.0}, {"period": 3.0}],
                         ids=["plain", "left-right", "period"])
def test_interp(kw):
    agreement.agree(lambda x, xp, fp: tnp.interp(x, xp, fp, **kw), np.interp(X, XP, FP, **kw),
                    X, XP, FP, rtol=1e-12)
    agreement.agree(lambda x: tnp.interp(x, XP, FP, **kw), np.interp(X[2], XP, FP, **kw),
                    X[2])
    agreement.agree(lambda x: tnp.interp(x, XP[:1], FP[:1], **kw),
                    np.interp(X, XP[:1], FP[:1], **kw), X)
    agreement.agree(lambda x: tnp.interp(x, XP, FP, **kw), np.interp(X[:0], XP, FP, **kw),
                    X[:0])


def test_interp_grad_and_vmap():
    x = np.array([1.2, 2.5, 3.9, 4.3])
    tracer.check_grads(lambda x, fp: tnp.interp(x, XP, fp), (x, FP), order=1)
    got = tracer.vmap(lambda x: tnp.interp(x, XP, FP))(x.reshape(2, 2))
    np.testing.assert_allclose(got, np.interp(x, XP, FP).reshape(2, 2))


@pytest.mark.parametrize("args,kw", [((A,), {}), ((A.reshape(2, 3),), {"axis": 0}),
                                     ((A.reshape(2, 3), np.array([0., 1, 3])), {}),
                                     ((A.reshape(3, 2), np.array([0., 2, 3])), {"axis": 0}),
                                     ((np.array([1, 2, 4], np.int32),), {"dx": 0.5}),
                                     ((A[:1],), {}), ((A[:0],), {})],
                         ids=["1d", "axis0", "x", "x-axis0", "int-dx", "one", "empty"])
def test_trapezoid(args, kw):
    agreement.agree(lambda *a: tnp.trapezoid(*a, **kw), np.trapezoid(*args, **kw), *args,
                    rtol=1e-12)


def test_trapezoid_grad():
    tracer.check_grads(lambda y, x: tnp.trapezoid(y, x), (A, np.cumsum(np.abs(A))), order=1)


@pytest.mark.parametrize("p,kw", [(np.array([0., 3, 6.5, 7, 0.2, -3, 2]), {}),
                                  (np.array([[0., 4, 9], [1, -6, 2]]), {"axis": 0}),
                                  (np.array([0., 3, 6.5, 7]), {"discont": 4.0}),
                                  (np.array([0, 5, 9, 3, 12], np.int64), {"period": 8}),
                                  (np.array([0, 5, 9, 3], np.int32), {"period": 7}),
                                  (np.array([1.5]), {}), (np.zeros(0), {})],
                         ids=["float", "axis0", "discont", "int-even", "int-odd", "one",
                              "empty"])
def test_unwrap(p, kw):
    agreement.agree(lambda p: tnp.unwrap(p, **kw), np.unwrap(p, **kw), p, rtol=1e-12)


def test_unwrap_grad():
    tracer.check_grads(tnp.unwrap, (np.array([0., 3, 6.5, 7, 0.2, -3, 2]),), order=1)


D = np.array([1., 2, 2, 3, 7, 9, 9.5, 4])


@pytest.mark.parametrize("a,kw", [(D, {}), (D, {"bins": 4}), (D, {"bins": 3, "range": (0, 10)}),
                                  (D, {"bins": np.array([0., 2, 3, 9])}),
                                  (D, {"bins": 4, "weights": D / 3}),
                                  (D, {"bins": 4, "density": True}),
                                  (D.astype(np.float32), {"bins": 3, "range": (0, 10)}),
                                  (np.array([1, 1, 1], np.int32), {}),
                                  (np.array([3, 1, 4, 1, 5], np.int64), {"bins": 3}),
                                  (np.zeros(0), {"bins": 2}), (np.float64(3), {})],
                         ids=["default", "4", "range", "edges", "weights", "density",
                              "f32", "constant", "ints", "empty", "0d"])
def test_histogram(a, kw):
    want = np.histogram(a, **kw)
    for got in [tnp.histogram(a, **kw)] + [tracer.jit(lambda a: tnp.histogram(a, **kw),
                                                      backend=b)(a) for b in agreement.BACKENDS]:
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)
    kw.pop("density", None)
    np.testing.assert_allclose(tnp.histogram_bin_edges(a, **kw), np.histogram_bin_edges(a, **kw))


def test_histogram_string_bins_eagerly_only_and_weights_grad():
    np.testing.assert_array_equal(tnp.histogram(D, "auto")[0], np.histogram(D, "auto")[0])
    with pytest.raises(ConcretizationError, match="histogram_bin_edges: bins='auto'"):
        tracer.jit(lambda a: tnp.histogram(a, "auto"))(D)
    with pytest.raises(ValueError, match="histogram: autodetected range"):
        tnp.histogram(np.array([1., np.nan]))
    tracer.check_grads(lambda w: tnp.histogram(D, 4, weights=w)[0], (D / 3,), order=1)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [0, 1, 6, 7])
def test_windows(name, M):
    agreement.agree(lambda: getattr(tnp, name)(M), getattr(np, name)(M), backends=some(M == 7))


@pytest.mark.parametrize("M", [0, 1, 6, 7])
def test_kaiser_with_traced_beta(M):
    agreement.agree(lambda b: tnp.kaiser(M, b), np.kaiser(M, 3.5), 3.5, rtol=1e-12)
    if M > 1:
        tracer.check_grads(lambda b: tnp.kaiser(M, b), (3.5,), order=1)


P, Q = np.array([2., -1, 0.5, 3]), np.array([1.5, -2])


@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul"])
@pytest.mark.parametrize("a,b", [(P, Q), (Q, P), (np.array([1, 2], np.int32), np.int64(3)),
                                 (P[:1], Q)], ids=["long-short", "short-long", "int-0d", "one"])
def test_poly_arithmetic(name, a, b):
    agreement.agree(getattr(tnp, name), getattr(np, name)(a, b), a, b, rtol=1e-12,
                    backends=some(a is P))
    tracer.check_grads(getattr(tnp, name), (P, Q), order=1)


@pytest.mark.parametrize("p,x", [(P, np.linspace(-2, 2, 5)), (P, np.float32(1.5)),
                                 (np.array([1, 2, 3]), np.array([2, -1], np.int32)),
                                 (np.zeros(0), np.arange(3.0)), (P, np.zeros(0))],
                         ids=["float", "0d-f32", "ints", "no-coeffs", "empty-x"])
def test_polyval(p, x):
    agreement.agree(tnp.polyval, np.polyval(p, x), p, x, rtol=1e-12)


def test_polyval_grad_and_vmap():
    tracer.check_grads(tnp.polyval, (P, np.linspace(-2, 2, 5)), order=1)
    got = tracer.vmap(tnp.polyval, in_axes=(None, 0))(P, np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(got, np.polyval(P, np.arange(6.0).reshape(3, 2)))


@pytest.mark.parametrize("m", [0, 1, 2, 5])
@pytest.mark.parametrize("p", [P, np.array([1, 2, 3], np.int32), P[:1]], ids=["f", "i", "one"])
def test_polyder_polyint(p, m):
    backends = some(p is P)
    agreement.agree(lambda p: tnp.polyder(p, m), np.polyder(p, m), p, backends=backends)
    agreement.agree(lambda p: tnp.polyint(p, m), np.polyint(p, m), p, rtol=1e-12,
                    backends=backends)
    k = np.arange(1.0, m + 1)
    agreement.agree(lambda p: tnp.polyint(p, m, k=k), np.polyint(p, m, k=k), p, rtol=1e-12,
                    backends=backends)
    if m:
        tracer.check_grads(lambda p: tnp.polyint(tnp.polyder(p, m), m), (P,), order=1)


@pytest.mark.parametrize("x", [np.array([0., 2, -1.5]), np.array([1, 2, 3], np.int32),
                               np.array([1.5, 2], np.float32), np.zeros(0)],
                         ids=["f64", "i32", "f32", "empty"])
@pytest.mark.parametrize("N,increasing", [(None, False), (4, True), (1, False), (0, False)])
def test_vander(x, N, increasing):
    agreement.agree(lambda x: tnp.vander(x, N, increasing), np.vander(x, N, increasing), x,
                    backends=some(N is None))


@pytest.mark.parametrize("deg", [0, 1, 3])
def test_polyfit(deg):
    x = np.linspace(-1, 2, 9)
    y = 3 * x ** 2 - x + 0.5 + 0.1 * np.sin(9 * x)
    agreement.agree(lambda x, y: tnp.polyfit(x, y, deg), np.polyfit(x, y, deg), x, y,
                    rtol=1e-9, atol=1e-10)
    w = 1 + x ** 2
    agreement.agree(lambda x, y, w: tnp.polyfit(x, y, deg, w=w), np.polyfit(x, y, deg, w=w),
                    x, y, w, rtol=1e-9, atol=1e-10)
    y2 = np.stack([y, -2 * y], 1)
    agreement.agree(lambda x, y: tnp.polyfit(x, y, deg), np.polyfit(x, y2, deg), x, y2,
                    rtol=1e-9, atol=1e-10)
    tracer.check_grads(lambda y: tnp.polyfit(x, y, deg), (y,), order=1)


def test_convolve_in_blocks_of_the_shorter_signal(monkeypatch):
    import tracer.numpy.signal as signal
    monkeypatch.setattr(signal, "GATHER_LIMIT", 7)      # blocks of one or two taps
    x, y = np.arange(1.0, 8.0), np.array([1.0, -2, 3, 0.5])
    for mode in ["full", "same", "valid"]:
        agreement.agree(lambda a, b: tnp.convolve(a, b, mode), np.convolve(x, y, mode), x, y,
                        rtol=1e-12, backends=["numpy"])
        agreement.agree(lambda a, b: tnp.correlate(a, b, mode), np.correlate(y, x, mode), y, x,
                        rtol=1e-12, backends=["numpy"])
