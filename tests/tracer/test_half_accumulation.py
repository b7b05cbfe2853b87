"""Reductions and scans of float16/bfloat16 accumulate in a wider float and count in a wide
type, eagerly and on both jit backends, at sizes past float16's largest number (65,504:
a float16 sum or count overflows) and past 2**24 (a float32 running sum stalls)."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

BF16 = np.dtype(ml_dtypes.bfloat16)
HALVES = [np.dtype(np.float16), BF16]
RTOL = {np.dtype(np.float16): 2.0**-10, BF16: 2.0**-7}     # one epsilon of each


def modes(f, *args):
    """f eagerly, then jitted on the numpy and on the llvm backend."""
    yield "eager", f(*args)
    for backend in ("numpy", "llvm"):
        yield backend, tracer.jit(f, backend=backend)(*args)


def check(f, want, *args):
    dt = args[0].dtype
    for mode, got in modes(f, *args):
        got = np.asarray(got)
        assert got.dtype == dt, (mode, got.dtype)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=RTOL[dt], atol=0,
                                   err_msg=mode)


def test_mean_of_70000_float16_ones_and_of_tiny_values():
    """The issue's rows: NumPy gives 1.0 and 1e-05."""
    check(tnp.mean, 1.0, np.full(70000, 1.0, np.float16))
    check(tnp.mean, float(np.float16(1e-5)), np.full(100_000, 1e-5, np.float16))


STATS = {   # name: (tracer function, float64 reference)
    "mean": (tnp.mean, np.mean),
    "var": (tnp.var, np.var),
    "std": (tnp.std, np.std),
    "nanmean": (tnp.nanmean, np.nanmean),
    "nanvar": (tnp.nanvar, np.nanvar),
    "nanstd": (tnp.nanstd, np.nanstd),
    "average": (lambda x: tnp.average(x, weights=tnp.ones_like(x)), np.mean),
    "mean_axis": (lambda x: tnp.mean(tnp.reshape(x, (2, -1)), axis=1),
                  lambda x: np.mean(x.reshape(2, -1), axis=1)),
}


@pytest.mark.parametrize("dt", HALVES, ids=str)
@pytest.mark.parametrize("name", STATS)
def test_statistics_past_65504_elements(name, dt):
    x = (1.0 + np.random.default_rng(0).uniform(0, 1, 140_000)).astype(dt)
    f, ref = STATS[name]
    check(f, ref(x.astype(np.float64)), x)


@pytest.mark.parametrize("dt", HALVES, ids=str)
def test_median_and_mean_of_large_values(dt):
    """The mean of two float16 numbers near the top of the range is in range."""
    x = np.array([60000.0, 61000.0, 62000.0, 63000.0], dt)
    check(tnp.median, float(np.median(x.astype(np.float64))), x)
    check(tnp.mean, float(np.mean(x.astype(np.float64))), x)


@pytest.mark.parametrize("dt", HALVES, ids=str)
def test_cumsum_past_2_to_the_24_steps(dt):
    """1e-2 steps of a float32 running sum lose 2% from 16,384 on; the last of 2**22 + 1
    partial sums must be the float64 one rounded (through float32, as the kernels do)."""
    x = np.full(2**22 + 1, 1e-2, dt)
    want = float(np.float32(np.sum(x.astype(np.float64))).astype(dt))
    for mode, got in modes(lambda x: tnp.cumsum(x)[-1], x):
        assert float(got) == want, (mode, float(got), want)


def test_mean_past_2_to_the_24_elements():
    x = np.full(2**24 + 2**20, 0.5, np.float16)
    check(tnp.mean, 0.5, x)


PRODUCTS = {    # name: function of (a: (2, k), b: (k, 3)), the same in NumPy on float64
    "matmul": lambda m, a, b: m.matmul(a, b),
    "dot": lambda m, a, b: m.dot(a[0], b[:, 0]),
    "einsum": lambda m, a, b: m.einsum("ik,kj->ij", a, b),
    "einsum_dot": lambda m, a, b: m.einsum("k,k", a[1], b[:, 2]),
    "tensordot": lambda m, a, b: m.tensordot(a, b, axes=1),
    "vdot": lambda m, a, b: m.vdot(a[0], b[:, 1]),
}


@pytest.mark.parametrize("dt", HALVES, ids=str)
@pytest.mark.parametrize("name", PRODUCTS)
def test_products_over_70000_terms(name, dt):
    """Products of two half floats are exact in float32; their sum over k is rounded once
    (the llvm matmul rounded its output after every block of k)."""
    r = np.random.default_rng(1)
    a = (r.uniform(0.5, 1.5, (2, 70_000)) * 1e-3).astype(dt)
    b = r.uniform(0.5, 1.5, (70_000, 3)).astype(dt)
    f = PRODUCTS[name]
    want = f(np, a.astype(np.float64), b.astype(np.float64))
    for mode, got in modes(lambda a, b: f(tnp, a, b), a, b):
        got = np.asarray(got)
        assert got.dtype == dt, (mode, got.dtype)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=RTOL[dt], err_msg=mode)


@pytest.mark.parametrize("dt", HALVES, ids=str)
@pytest.mark.parametrize("n", [64, 4096])      # unrolled in llvm code; the NumPy kernel
def test_window_sums(n, dt):
    """Sum pooling adds in float32 (bfloat16 windows of 4096 quarters came to 64, not 1024)."""
    x = np.full((2, n), 0.25, dt)
    check(lambda x: tracer.lax.reduce_window(x, 0.0, tracer.lax.add, (1, n), (1, 1), "VALID"),
          n / 4, x)
