"""ONNX export of the rounding, remainder, atan, signbit, bitwise, shift and conversion
kernels at their edge values, against the numpy backend bit for bit (signed zeros, NaN,
infinities, negative operands of % and //, half-way cases, shift counts out of range,
float -> int out of range)."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
import tracer.random  # noqa: F401
from tracer import lax
from spec import BF16
from tracer.export import to_onnx

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from test_onnx_kernels import run_onnx  # noqa: E402

FLOATS = (np.float16, BF16, np.float32, np.float64)
INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def same_bits(fun, *args, rtol=0):
    """ONNX Runtime's results equal the numpy backend's exactly (signed zeros and NaN
    included; nonzero floats to rtol)."""
    with np.errstate(all="ignore"):
        want = tracer.jit(fun, backend="numpy")(*args)
    got = run_onnx(to_onnx(fun, *args), *args)
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype == BF16:         # NumPy compares bfloat16 NaNs as unequal
            g, w = g.astype(np.float32), w.astype(np.float32)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0)
        if w.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_rounding_and_remainders_of_floats(dtype):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 0.0, np.inf, -np.inf, np.nan, 3.75,
                  -3.75, 7, -7, 7, -7, 1e4, 5.0, -5.0], dtype)
    y = np.array([2, -2, 2, -2, 0.0, 1, 1, -1, 2, 3, 1, -0.0, 0.5, 2, 2, -2, -2, 3, np.inf,
                  np.inf], dtype)
    same_bits(lambda a, b: (tnp.floor(a), tnp.ceil(a), tnp.trunc(a), tnp.rint(a),
                            tnp.round(a, 1), tnp.fmod(a, b), a % b, a // b, tnp.signbit(a),
                            tnp.copysign(b, a)), x, y)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_shifts_and_bitwise_ops_of_ints(dtype):
    info, width = np.iinfo(dtype), 8 * np.dtype(dtype).itemsize
    x = np.array([info.min, info.max, 0, 1, 5, info.max // 3, 3, 3, 3, 3, 6], dtype)
    n = np.array([0, 1, width - 1, width, width + 1, 2 * width, 3, 7, 1, 0, 2], dtype)
    if info.min:            # negative values, negative counts
        x[-3:] = [-3, -3, -6]
        n[-3:] = [-1, -width, 1]
    same_bits(lambda a, b: (a << b, a >> b, a & b, a | b, a ^ b, ~a, a % (b + 1),
                            a // (b + 1)), x, n)


def test_bitwise_ops_of_bools():
    a, b = np.array([True, False, True, False]), np.array([True, True, False, False])
    same_bits(lambda a, b: (a & b, a | b, a ^ b, ~a), a, b)


@pytest.mark.parametrize("dtype", (np.float32, np.float64), ids=str)
def test_atan_and_arcsin(dtype):
    """float64: within an ulp of NumPy (Cephes' algorithm); float32: correctly rounded
    (NumPy's own float32 arctan is off by up to 2 ulp, so bit equality is not the test)."""
    x = np.concatenate([np.linspace(-4, 4, 4001), np.geomspace(1e-30, 1e30, 601)])
    x = np.concatenate([x, -x, [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1.5]])
    x = x.astype(dtype)
    with np.errstate(invalid="ignore"):
        at, asin = run_onnx(to_onnx(lambda a: (tnp.arctan(a), tnp.arcsin(a)), x), x)
        exact = np.arctan(x.astype(np.float64))
        np.testing.assert_array_equal(np.isnan(asin), np.isnan(np.arcsin(x)))
    if dtype == np.float32:
        np.testing.assert_array_equal(at, exact.astype(np.float32))
    else:
        assert np.nanmax(np.abs(at - exact) / np.spacing(np.abs(exact))) <= 1
    np.testing.assert_array_equal(np.signbit(at), np.signbit(x))
    np.testing.assert_allclose(asin, np.arcsin(x), rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_to_int_saturates(dtype):
    x = np.array([np.nan, np.inf, -np.inf, -1.5, -0.7, 0.7, 1.9, 127.9, 128, -128.5, -129,
                  255.5, 256, 3e9, -3e9, 1e19, 2e19, -1e19, 65504, -65504], dtype)
    same_bits(lambda a: tuple(a.astype(t) for t in INTS + (np.bool_,)), x)


@pytest.mark.parametrize("dtype", (np.float32, np.float64), ids=str)
def test_select_log1p_and_expm1_keep_signed_zeros(dtype):
    """ONNX Runtime's Where turns a -0.0 it selects into +0.0 (and its optimizer swaps
    Where's slots), which where, log1p and expm1 of -0.0 went through."""
    x = np.array([-0.0, 0.0, -0.0, 1.5, -0.0, np.nan, -2.0, 0.0], dtype)
    c = np.array([True, True, False, False, True, True, False, False])
    same_bits(lambda c, x: (tnp.where(c, x, -x), tnp.where(~c, x, 0.0), tnp.log1p(x),
                            tnp.expm1(x), tnp.where(c, -0.0, x)), c, x, rtol=1e-6)


BITCASTS = [(np.float32, np.uint32), (np.float32, np.int32), (np.float64, np.uint64),
            (np.float64, np.int64), (np.float16, np.int16), (BF16, np.uint16),
            (np.float16, BF16), (np.int8, np.uint8), (np.int32, np.uint32)]


@pytest.mark.parametrize("src,dst", BITCASTS, ids=lambda d: np.dtype(d).name)
def test_bitcast_both_ways(src, dst):
    """Every bit of zeros, signed zeros, subnormals, extremes, infinities and NumPy's NaN;
    a NaN's sign and payload cannot be read in ONNX (so no other NaN is tried)."""
    if np.dtype(src).kind in "iu":
        info = np.iinfo(src)
        x = np.array([info.min, -1, 0, 1, info.max // 3, info.max], src)
    else:
        fi = np.finfo(np.float32 if src == BF16 else src)
        x = np.concatenate([[0.0, -0.0, 1.0, -1.5, np.pi, fi.max, -fi.max, fi.tiny,
                             fi.tiny / 2, fi.smallest_subnormal, np.inf, -np.inf, np.nan],
                            np.geomspace(1e-30, 1e30, 200) * np.tile([1, -1], 100)])
        x = x.astype(src)
        if {np.dtype(src), np.dtype(dst)} == {np.dtype(np.float16), np.dtype(BF16)}:
            x = x[~np.isnan(x.view(dst).astype(np.float32))]     # no NaN bits in dst
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(src).itemsize]
    for fun, arg in ((lambda a: lax.bitcast_convert_type(a, dst), x),
                     (lambda a: lax.bitcast_convert_type(a, src), x.view(dst))):
        want = tracer.jit(fun, backend="numpy")(arg)
        got = run_onnx(to_onnx(fun, arg), arg)[0]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(width), want.view(width))


def test_random_numbers_export_bit_for_bit():
    key = tracer.random.PRNGKey(3)

    def draws(k):
        k1, k2, k3 = tracer.random.split(k, 3)
        return (tracer.random.uniform(k1, (500,)), tracer.random.normal(k2, (500,)),
                tracer.random.bernoulli(k3, 0.3, (100,)),
                tracer.random.normal(k1, (100,), dtype=np.float64))
    same_bits(draws, key)
