"""The small, unsigned and half-float dtypes: NumPy 2's promotion (bfloat16 as JAX
promotes it), weak Python scalars, iinfo/finfo, conversions, wrap-around, unsigned shifts,
and half floats that reduce, sort and differentiate in float32. The spec table (spec.py)
runs a sample of these dtypes on every op; this file checks what it cannot."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir import SUPPORTED_DTYPES, DTypeError

BF16 = np.dtype(ml_dtypes.bfloat16)
NUMPY_DTYPES = [d for d in SUPPORTED_DTYPES if d != BF16]
WEAK = [None, True, 3, 2.5]


def _jit(f):
    return tracer.jit(f, backend="numpy")


@pytest.mark.parametrize("weak", WEAK, ids=repr)
def test_promotion_is_numpys_for_every_pair(weak):
    extra = () if weak is None else (weak,)
    for a, b in itertools.product(NUMPY_DTYPES, repeat=2):
        want = np.result_type(np.empty(0, a), np.empty(0, b), *extra)
        assert tnp.result_type(a, b, *extra) == want, (a, b, weak)
    assert tnp.promote_types(np.uint64, np.int64) == np.float64
    assert tnp.promote_types(np.uint8, np.int8) == np.int16


def test_ops_give_the_promoted_dtype_eagerly_and_under_jit():
    for a, b in [(np.uint8, np.int8), (np.uint32, np.int32), (np.uint64, np.int64),
                 (np.float16, np.int16), (np.uint16, np.float16), (np.int8, np.float32)]:
        x, y = np.ones(2, a), np.ones(2, b)
        want = (x + y).dtype
        assert tnp.add(x, y).dtype == want and _jit(tnp.add)(x, y).dtype == want
        assert _jit(lambda x: x * 2)(x).dtype == a          # weak Python scalars
        assert _jit(lambda x: x + 1.5)(x).dtype == np.result_type(a, 1.5)


# JAX's documented lattice for bfloat16: ints and bools -> bfloat16, float16 -> float32,
# wider floats win, weak Python scalars never change it
BF16_WITH = {**{d: BF16 for d in NUMPY_DTYPES if d.kind in "biu"},
             np.dtype(np.float16): np.dtype(np.float32),
             np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64)}


@pytest.mark.parametrize("other", NUMPY_DTYPES, ids=str)
def test_bfloat16_promotes_as_jax(other):
    want = BF16_WITH[other]
    assert tnp.result_type(BF16, other) == want == tnp.result_type(other, BF16)
    assert tnp.promote_types(BF16, other) == want
    x, y = np.ones(3, BF16), np.ones(3, other)
    assert tnp.add(x, y).dtype == want
    assert _jit(tnp.multiply)(y, x).dtype == want


def test_weak_scalars_keep_bfloat16_and_the_narrow_ints():
    x = np.array([1.5, -2.0], BF16)
    for s in WEAK[1:]:
        assert tnp.result_type(x, s) == BF16
        assert tnp.add(x, s).dtype == BF16 and _jit(lambda v: v * s)(x).dtype == BF16
        assert _jit(lambda v, t: v - t)(x, s).dtype == BF16     # a weak jit argument
    assert tnp.add(np.ones(2, np.uint8), 3).dtype == np.uint8
    assert tnp.add(np.ones(2, np.float16), 2.5).dtype == np.float16
    with pytest.raises(DTypeError, match="300 does not fit in uint8"):
        tnp.add(np.ones(2, np.uint8), 300)          # NumPy raises too (OverflowError)


def test_float_functions_of_small_ints_are_numpys_small_floats():
    for dt in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint64):
        x = np.arange(1, 4).astype(dt)
        for f in ("exp", "sqrt", "arctan2", "hypot", "log10"):
            args = (x, x) if f in ("arctan2", "hypot") else (x,)
            assert getattr(tnp, f)(*args).dtype == getattr(np, f)(*args).dtype, (dt, f)


def test_dtype_info_and_kinds():
    assert tnp.finfo(tnp.bfloat16).eps == 2.0 ** -7 and tnp.finfo(tnp.bfloat16).bits == 16
    assert tnp.finfo(np.float16).max == 65504 and tnp.finfo(np.float32).eps == 2.0 ** -23
    assert tnp.iinfo(tnp.uint32).max == 2 ** 32 - 1 and tnp.iinfo(tnp.int8).min == -128
    assert tnp.issubdtype(tnp.bfloat16, np.floating) and tnp.issubdtype(BF16, np.number)
    assert not tnp.issubdtype(tnp.uint8, np.floating) and tnp.issubdtype(tnp.uint8, np.integer)
    assert [tnp.dtype(n) for n in ("int8", "uint16", "bfloat16")] == [
        np.int8, np.uint16, BF16]


def test_astype_round_trips_through_every_dtype():
    x = np.array([0, 1, 7, 100, 127], np.int64)
    for a, b in itertools.product(SUPPORTED_DTYPES[1:], repeat=2):
        there_and_back = _jit(lambda v: tnp.astype(tnp.astype(v, a), b))(x.astype(b))
        assert there_and_back.dtype == b
        np.testing.assert_array_equal(there_and_back, x.astype(b), err_msg=f"{a} {b}")


def test_integer_arithmetic_wraps_as_numpy():
    cases = [(np.uint8, [200, 255], [100, 1]), (np.int8, [127, -128], [1, -1]),
             (np.uint16, [0, 3], [1, 65535]), (np.uint32, [2 ** 32 - 1, 7], [2, 2 ** 31]),
             (np.int16, [32767, -32768], [3, 2]), (np.uint64, [2 ** 64 - 1, 0], [2, 1])]
    for dt, a, b in cases:
        x, y = np.array(a, dt), np.array(b, dt)
        with np.errstate(over="ignore"):
            want = [x + y, x - y, x * y, -x if dt().dtype.kind == "i" else x // y]
        got = _jit(lambda x, y: (x + y, x - y, x * y, -x if dt().dtype.kind == "i" else x // y))
        for g, w in zip(got(x, y), want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w, err_msg=str(dt))
    assert tnp.sum(np.full(3, 200, np.uint8)).dtype == np.uint64 == np.sum(np.uint8([1])).dtype
    assert tnp.cumsum(np.full(3, 100, np.int8))[-1] == 300


def test_reciprocal_of_narrow_and_unsigned_ints_is_numpys():
    """1 // x toward zero; 1 / 0 is C's (int)inf, whose low bits narrow ints keep (0)."""
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64):
        x = np.array([0, 1, 2, 3] + ([-1, -2] if np.dtype(dt).kind == "i" else []), dt)
        with np.errstate(all="ignore"):
            want = np.reciprocal(x)
        for f in (tnp.reciprocal, _jit(tnp.reciprocal)):
            np.testing.assert_array_equal(f(x), want, err_msg=str(dt))


def test_unsigned_shifts_are_logical():
    u = np.array([0xFFFFFFFF, 0x80000000, 5], np.uint32)
    i = u.view(np.int32)
    by = np.array([31, 4, 1], np.uint32)
    for f in (_jit(tnp.right_shift), tnp.right_shift):
        np.testing.assert_array_equal(f(u, by), [1, 0x08000000, 2])
        np.testing.assert_array_equal(f(i, by.astype(np.int32)), np.right_shift(i, by))
    np.testing.assert_array_equal(_jit(lambda x: x << np.uint8(7))(np.uint8([3, 1])),
                                  np.uint8([3, 1]) << np.uint8(7))
    np.testing.assert_array_equal(_jit(lambda x: (x >> 3) ^ (x << 13))(u),
                                  (u >> 3) ^ (u << 13))


def test_half_floats_accumulate_in_float32():
    ones = np.ones(4096, BF16)
    assert np.sum(ones, dtype=BF16) == 256         # bfloat16 accumulation stalls
    for f in (tnp.sum, _jit(tnp.sum)):
        assert f(ones) == 4096 and f(ones).dtype == BF16
    assert tnp.cumsum(ones)[-1] == 4096
    a = np.full((3, 300), 0.5, BF16)
    prod = tnp.matmul(a, a.T)
    assert prod.dtype == BF16 and np.all(prod == 75)     # ml_dtypes' matmul gives float32
    assert tnp.mean(np.full(5000, 1.5, np.float16)) == np.float16(1.5)


def test_bfloat16_sorts_nan_last():
    x = np.array([1, np.nan, -1, 0.5, np.nan, 2], BF16)     # np.sort leaves it unsorted
    want = np.sort(x.astype(np.float32))
    for f in (tnp.sort, _jit(tnp.sort)):
        np.testing.assert_array_equal(f(x).astype(np.float32), want)
    assert tnp.argmax(x) == 1 and tnp.nanmax(x) == 2 and tnp.max(x) != tnp.max(x)


@pytest.mark.parametrize("dt", [np.float16, BF16], ids=str)
def test_half_floats_are_differentiable(dt):
    """Gradients in the half dtype, within its rounding of the float32 gradient."""
    def f(x):
        return tnp.sum(tnp.sin(x) * x + tracer.nn.gelu(x) + tnp.logaddexp(x, 0.5))
    x32 = np.linspace(-1.5, 1.5, 7, dtype=np.float32)
    want = tracer.grad(f)(x32)
    for g in (tracer.grad(f), tracer.jit(tracer.grad(f), backend="numpy")):
        got = g(x32.astype(dt))
        assert got.dtype == dt
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=3e-2, atol=3e-2)
    tracer.check_grads(lambda v: f(tnp.astype(v, dt)).astype(np.float32), (x32,), order=1,
                       eps=1e-1, rtol=5e-2, atol=5e-2)


def test_bool_ops_numpy_computes_in_int8_or_float16_give_its_dtype():
    b = np.array([True, False])
    for name, args in [("conj", (b,)), ("reciprocal", (b,)), ("round", (b,)), ("rint", (b,)),
                       ("power", (b, b)), ("power", (b, 2)), ("floor_divide", (b, b)),
                       ("mod", (b, b)), ("fmod", (b, b)), ("divmod", (b, b))]:
        with np.errstate(all="ignore"):
            want = np.stack(getattr(np, name)(*args))
        for f in (getattr(tnp, name), _jit(getattr(tnp, name))):
            got = np.stack(f(*args))
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_linalg_needs_float32_or_float64():
    with pytest.raises(DTypeError, match="linalg.inv: array type float16 is unsupported"):
        tnp.linalg.inv(np.eye(2, dtype=np.float16))
    np.testing.assert_allclose(tnp.linalg.inv(np.eye(2, dtype=np.uint8)), np.eye(2))
