"""Every op spec row under jit(backend="llvm") against NumPy: values, dtypes, shapes; plus
the semantics where the llvm kernels must copy NumPy exactly (NaN through max/min and
reductions, float -> int conversion, integer division and power, bool arithmetic)."""
import os
import sys
import warnings

sys.path.append(os.path.dirname(os.path.dirname(__file__)))
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tracer  # noqa: E402
import tracer.numpy as tnp  # noqa: E402
from spec import case_id, cases, make_input  # noqa: E402
from spec_dtypes import check_row  # noqa: E402

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_spec_row_under_llvm_jit_matches_numpy(case):
    spec, shapes, dt = case
    rng = np.random.default_rng(0)
    xs = [make_input(s, dt, spec.domain, rng) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = spec.ref(np, *xs)
    # the llvm math library is within a few ulp of NumPy's: 1e-5 on float32
    check_row(tracer.jit(lambda *a: spec.fn(tnp, *a), backend="llvm")(*xs), want, dt,
              spec.atol, f32_rtol=1e-5)


def llvm(f):
    return tracer.jit(f, backend="llvm")


NAN_DATA = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0], [np.nan, np.nan, 0.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_propagates_through_max_min_and_their_reductions(dtype):
    x = NAN_DATA.astype(dtype)
    y = np.flip(x, 1).copy()
    f = llvm(lambda x, y: (tnp.maximum(x, y), tnp.minimum(x, y), tnp.max(x, axis=1),
                           tnp.min(x, axis=0), tnp.max(x), tnp.argmax(x, axis=1),
                           tnp.argmin(x, axis=0), tnp.sum(x, axis=1)))
    want = (np.maximum(x, y), np.minimum(x, y), np.max(x, axis=1), np.min(x, axis=0),
            np.max(x), np.argmax(x, axis=1), np.argmin(x, axis=0), np.sum(x, axis=1))
    for g, w in zip(f(x, y), want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("src", [np.float32, np.float64])
@pytest.mark.parametrize("dst", [np.int32, np.int64, np.bool_])
def test_float_to_int_conversion_is_the_eager_one(src, dst):
    x = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, 3e9, -3e9, 2.7, -2.7, -0.0, 0.5,
                  2147483647.5, -2147483648.9], dtype=src)
    want = tnp.astype(x, dst)
    np.testing.assert_array_equal(llvm(lambda x: tnp.astype(x, dst))(x), want)


def test_integer_kernels_follow_the_numpy_kernels():
    """int div is float64 true division converted back; pow wraps; negative exponents
    raise (the numpy kernel raises too)."""
    from lowering.llvm import compile_graph
    from lowering.numpy_kernels import IMPLS
    a = np.array([7, -7, 1, 0, 2**31 - 1, -2**31], np.int32)
    b = np.array([2, 2, 0, 0, -1, -1], np.int32)
    graph = tracer.make_graph(lambda a, b: tracer.run_kernel("div", [a, b]))(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = IMPLS["div"](a, b).astype(np.int32)
    np.testing.assert_array_equal(compile_graph(graph).run([a, b])[0], want)
    e = np.array([0, 1, 5, 31, 62], np.int64)
    x = np.array([3, -2, 7, 2, 3], np.int64)
    np.testing.assert_array_equal(llvm(lambda x, e: x ** e)(x, e), np.power(x, e))
    with pytest.raises(ValueError):
        np.power(x, -e)
    with pytest.raises(tracer.KernelError, match="negative integer powers"):
        llvm(lambda x, e: x ** e)(x, -e)


def test_division_is_exact_like_numpy():
    x = np.arange(1.0, 200.0)
    got = llvm(lambda x: (x / 49.0, tnp.astype(x / 49.0, np.int64), tnp.mean(x)))(x)
    np.testing.assert_array_equal(got[0], x / 49.0)
    np.testing.assert_array_equal(got[1], (x / 49.0).astype(np.int64))
    assert got[2] == np.mean(x)


def test_bool_arithmetic_and_abs_of_int_min():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    f = llvm(lambda a, b: (a + b, a * b, tnp.maximum(a, b), tnp.minimum(a, b), a > b,
                           tnp.sum(a), tnp.prod(a), tnp.max(a)))
    want = (a + b, a * b, np.maximum(a, b), np.minimum(a, b), a > b, np.sum(a), np.prod(a),
            np.max(a))
    for g, w in zip(f(a, b), want):
        np.testing.assert_array_equal(g, w)
    m = np.array([-2**31, -3, 0, 5], np.int32)
    np.testing.assert_array_equal(llvm(tnp.abs)(m), np.abs(m))
    np.testing.assert_array_equal(llvm(tnp.sign)(np.array([-0.0, 0.0, np.nan, -2.0])),
                                  np.sign(np.array([-0.0, 0.0, np.nan, -2.0])))


@pytest.mark.parametrize("n", [5000, 100_003])
def test_float32_sum_is_as_accurate_as_numpy(n):
    x = np.random.default_rng(1).uniform(0, 1, (3, n)).astype(np.float32)
    exact = x.astype(np.float64).sum(axis=1)
    got = llvm(lambda x: tnp.sum(x, axis=1))(x).astype(np.float64)
    err_np = np.abs(x.sum(axis=1).astype(np.float64) - exact).max()
    assert np.abs(got - exact).max() <= max(2 * err_np, 1e-7 * exact.max())


@pytest.mark.parametrize("n", [64, 4096, 5000, 100_003])
def test_float32_column_sums_are_as_accurate_as_numpy(n):
    """Up to BLOCK rows accumulate in float32 registers, longer sums in float64."""
    x = np.random.default_rng(2).uniform(0, 1, (n, 24)).astype(np.float32)
    exact = x.astype(np.float64).sum(axis=0)
    got = llvm(lambda x: tnp.sum(x, axis=0))(x).astype(np.float64)
    err_np = np.abs(x.sum(axis=0).astype(np.float64) - exact).max()
    assert np.abs(got - exact).max() <= max(2 * err_np, 2e-7 * exact.max())


def test_short_float32_column_sums_keep_their_accumulators_in_float32():
    text = tracer.jit(lambda x: tnp.sum(x, axis=0)).lower(np.ones((64, 64), np.float32)).as_text()
    assert "double" not in text
    text = tracer.jit(lambda x: tnp.sum(x, axis=0)).lower(np.ones((5000, 64), np.float32)).as_text()
    assert "double" in text
