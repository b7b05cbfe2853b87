"""One answer per program: the NumPy interpreter (backend="numpy", which also runs a large
graph's first calls while it compiles in the background) and the llvm code give the same
values on edge inputs -- every conversion between every pair of dtypes (NaN, infinities,
-0.0, out-of-range and negative-to-unsigned values), every elementwise kernel on every
pair of edge values of each dtype, and reductions and scans over edge values. Float ->
int conversion is JAX's on CPU: truncate, saturate, NaN -> 0."""
import math

import ml_dtypes
import numpy as np
import pytest

import tracer
from ir import SUPPORTED_DTYPES
from lowering.llvm.scalars import BINARY, TRANSCENDENTAL, UNARY
from lowering.numpy_kernels import IMPLS

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOAT_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, -0.9, 1.5, -1.5, 2.5, 127.5,
               128.0, -129.0, 255.9, 256.0, 32767.5, 32768.0, -32769.0, 65504.0, 65535.9,
               65536.0, -40000.0, 2.0**31 - 128, 2.0**31, -2.0**31, -2.0**31 - 256, 3e9, -3e9,
               4294967295.0, 2.0**32, 2.0**53 + 2, 2.0**63 - 1024, 2.0**63, -2.0**63, 2.0**64,
               1e20, -1e20, 1e-40, 1e-5, 3.4e38, 1e300, -1e300]


def edges(dt):
    """Edge values of dtype dt: extremes, zeros, signs, NaN and infinities."""
    if dt.kind == "b":
        return np.array([True, False])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = {info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 7, info.max // 2}
        vals |= {-1, -2, -7} if dt.kind == "i" else set()
        return np.array(sorted(vals), dt)
    with np.errstate(over="ignore"):
        return np.array(FLOAT_EDGES).astype(dt)


def saturated(v, dt):
    """JAX's float -> int on CPU, from Python numbers: truncated, clamped, NaN -> 0."""
    if math.isnan(v):
        return 0
    info = np.iinfo(dt)
    return info.max if v >= info.max + 1 else info.min if v <= info.min - 1 else math.trunc(v)


def same(got, want):
    """Equal dtypes and values; floats bit for bit (signed zeros too), NaN matching NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    if got.dtype.kind in "fV":
        g, w = got.astype(np.float64), want.astype(np.float64)
        return (g == w) & (np.signbit(g) == np.signbit(w)) | np.isnan(g) & np.isnan(w)
    return got == want


def both(f, *args):
    """f jitted on the numpy and the llvm backend, called on args."""
    return [tracer.jit(f, backend=b)(*args) for b in ("numpy", "llvm")]


DTYPES = list(SUPPORTED_DTYPES)


@pytest.mark.parametrize("src", DTYPES, ids=str)
def test_every_conversion_has_one_answer(src):
    x = edges(src)
    dsts = [d for d in DTYPES if d != src]
    conv = lambda x: tuple(tracer.numpy.astype(x, d) for d in dsts)
    eager = conv(x)
    interp, native = both(conv, x)
    for d, e, i, n in zip(dsts, eager, interp, native):
        for other in (i, n):
            ok = same(other, e)
            assert ok.all(), (src, d, x[~ok], e[~ok], other[~ok])
        if src.kind in "fV" and d.kind in "iu":
            want = np.array([saturated(float(v), d) for v in x.astype(np.float64)], d)
            assert (e == want).all(), (src, d, x[e != want], e[e != want], want[e != want])


def test_float_to_uint32_of_nan_and_negatives():
    x = np.array([np.nan, -np.inf, -3e9, -1.0, 3e9, np.inf], np.float32)
    want = np.array([0, 0, 0, 0, 3000000000, 2**32 - 1], np.uint32)
    f = lambda x: tracer.numpy.astype(x, np.uint32)
    for got in (f(x), f(x[::-1][::-1]), *both(f, x)):
        np.testing.assert_array_equal(got, want)


def _defined(name, arity, dt):
    """Whether the numpy kernel takes dt (NumPy has no bool negative or subtract: the ops
    never emit those)."""
    try:
        IMPLS[name](*[np.ones(1, dt)] * arity)
        return True
    except TypeError:
        return False


def _kernels(dt):
    """(name, arity) of the elementwise kernels defined for dt's kind on both backends."""
    k = "f" if dt == BF16 else dt.kind
    return [(n, a) for table, a in ((UNARY, 1), (BINARY, 2)) for n, (ops, _) in table.items()
            if k in ops and _defined(n, a, dt)]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_elementwise_kernels_on_edge_values_have_one_answer(dt):
    """Each kernel on every pair of edge values (x down, y across); transcendentals agree
    to the llvm math library's 1 ulp (same NaN, infinity and sign), the rest bit for bit."""
    x = edges(dt)
    xs, ys = np.repeat(x, len(x)), np.tile(x, len(x))
    kernels = _kernels(dt)
    if dt.kind in "iu":         # integer powers: non-negative exponents (others raise)
        ys_pow = np.abs(ys % np.array(9, dt)).astype(dt)
    else:
        ys_pow = ys

    def f(xs, ys, ys_pow):
        return tuple(tracer.run_kernel(n, [xs] if a == 1 else [xs, ys_pow if n == "pow"
                                                                else ys]) for n, a in kernels)
    with np.errstate(all="ignore"):
        interp, native = both(f, xs, ys, ys_pow)
    for (name, _), i, n in zip(kernels, interp, native):
        ok = same(n, i)
        if name in ("sin", "cos"):  # the llvm sin/cos give NaN for finite |x| >= 2**50
            ok |= np.isfinite(xs.astype(np.float64)) & (np.abs(xs.astype(np.float64)) >= 2**50)
        if name in TRANSCENDENTAL or name == "pow" and dt.kind in "fV":
            close = np.isclose(n.astype(np.float64), i.astype(np.float64), rtol=3e-7 if
                               dt.itemsize > 4 else 2e-3 if dt.itemsize == 2 else 3e-7,
                               atol=0)
            ok |= close & (np.signbit(n.astype(np.float64)) == np.signbit(i.astype(np.float64)))
        assert ok.all(), (name, dt, xs[~ok][:4], ys[~ok][:4], i[~ok][:4], n[~ok][:4])


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_reductions_and_scans_of_edge_values_have_one_answer(dt):
    """Edge values at random places, reduced along each axis: max/min and argmax/argmin
    (NaN wins), scans (in order on both backends, signed zeros too), and integer sums and
    products (they wrap: any order gives them). Float sums and products of edge values
    depend on the order (3e38 + 3e38 - 3e38), which the backends do not share."""
    e = edges(dt)
    x = e[np.random.default_rng(0).integers(0, len(e), (len(e) + 5,) * 2)]
    x[0, :len(e)], x[:len(e), 1] = e, e                # each value first along both axes
    reduce = ["reduce_max", "reduce_min"] + ["reduce_sum", "reduce_prod"] * (dt.kind in "iu")
    along = ["argmax", "argmin"] + ["cumsum", "cumprod"] * (dt.kind != "b")

    def f(x):
        return tuple([tracer.run_kernel(k, [x], {"axes": a}) for k in reduce
                      for a in ((0,), (1,), (0, 1))] +
                     [tracer.run_kernel(k, [x], {"axis": a}) for k in along for a in (0, 1)])
    names = [f"{k}{a}" for k in reduce for a in ((0,), (1,), (0, 1))] + [
        f"{k}{a}" for k in along for a in (0, 1)]
    with np.errstate(all="ignore"):
        interp, native = both(f, x)
    for name, i, n in zip(names, interp, native):
        ok = same(n, i)
        assert ok.all(), (name, dt, np.asarray(i)[~ok][:4], np.asarray(n)[~ok][:4])


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.kind in "fV"], ids=str)
def test_a_sum_of_negative_zeros_is_zero(dt):
    """The sum starts at 0.0 (NumPy's and JAX's answer), which LLVM may not fold away."""
    x = np.full((3, 70), -0.0, dt)
    f = lambda x: (tracer.numpy.sum(x), tracer.numpy.sum(x, axis=0),
                   tracer.numpy.sum(x, axis=1))
    for got in (f(x), *both(f, x)):
        for g in got:
            assert not np.signbit(np.asarray(g, np.float64)).any(), got


def test_a_background_compile_does_not_change_the_answer(monkeypatch):
    """The first calls of a large graph are interpreted; the native code that follows
    gives the same conversions."""
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "4")
    x = edges(np.dtype(np.float32))
    f = tracer.jit(lambda x: tuple(tracer.numpy.astype(x * 1.0, d) for d in
                                   (np.uint32, np.int32, np.uint8, np.int64, np.uint64)))
    first = f(x)
    f.lower(x)                                            # waits for the native module
    for a, b in zip(first, f(x)):
        np.testing.assert_array_equal(a, b)
