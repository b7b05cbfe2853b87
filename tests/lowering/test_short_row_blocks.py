"""Reductions of many short rows, several rows at a time (lowering.llvm.short_rows):
equal to NumPy for every row length around the vector widths, every leftover row count,
each dtype, with fused producers, and the block path is the one taken."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import short_rows

LENGTHS = (1, 2, 7, 8, 31, 32, 33, 256, 257)
SHAPES = ([(m, n) for n in LENGTHS for m in (9, 40 if n > 33 else 1000)] +
          [(m, 32) for m in (0, 1, 7, 8)] + [(3, 9, 32), (1, 17, 8)])


def _reductions(lib, xs, w):
    """sum of x * w (a fused producer), max and min of each x over its last axis."""
    outs = []
    for x in xs:
        outs.append(lib.sum(x * w[: x.shape[-1]], axis=-1))
        if x.shape[-1]:
            outs += [lib.max(x, axis=-1), lib.min(-x, axis=-1)]
    return outs


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16,
                                   ml_dtypes.bfloat16])
def test_short_row_reductions_equal_numpy(dtype):
    rng = np.random.default_rng(0)
    xs = [(rng.standard_normal(s) * 4).astype(dtype) for s in SHAPES]
    w = (rng.standard_normal(257) * 2).astype(dtype)
    got = tracer.jit(lambda xs, w: _reductions(tnp, xs, w))(xs, w)
    same = _reductions(np, xs, w)     # NumPy's dtypes (int32 sums give int64), and
    exact = np.dtype(dtype) in (np.float64, np.int32)     # values where they are exact
    want = same if exact else _reductions(np, [x.astype(np.float64) for x in xs],
                                          w.astype(np.float64))
    assert len(got) == len(want)
    tol = {np.float64: 1e-13, np.int32: 0, np.float32: 1e-5}.get(dtype, 2e-2)
    for g, d, x in zip(got, same, want):
        g = np.asarray(g)
        assert g.dtype == d.dtype and g.shape == x.shape
        np.testing.assert_allclose(g.astype(np.float64), x.astype(np.float64), rtol=tol,
                                   atol=tol * 64)

def test_short_row_extremes_propagate_nan_and_sums_keep_zero_sign():
    x = np.ones((20, 24), np.float32)
    x[3, 5] = x[12, 23] = np.nan
    zeros = np.full((20, 24), -0.0, np.float32)
    mx, mn, s = tracer.jit(lambda x, z: (tnp.max(x, axis=-1), tnp.min(x, axis=-1),
                                         tnp.sum(z, axis=-1)))(x, zeros)
    np.testing.assert_array_equal(mx, x.max(-1))
    np.testing.assert_array_equal(mn, x.min(-1))
    assert not np.signbit(s).any()      # 0.0, as the row path and the numpy backend give


def _dumped(tmp_path, monkeypatch, f, *args):
    monkeypatch.setenv("TRACER_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    out = tracer.jit(f)(*args)
    ll = [p for p in tmp_path.glob("*.ll") if not p.name.endswith(".opt.ll")]
    return out, "".join(p.read_text() for p in ll), "".join(
        p.read_text() for p in tmp_path.glob("*.opt.ll"))


def test_matvec_rows_are_reduced_in_blocks(tmp_path, monkeypatch):
    """A thin matvec's rows run ROWS at a time: their fused reads become vector loads
    and multiplies (no element inserted one by one), and no row ends in a horizontal
    reduction of its own."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2000, 32)).astype(np.float32)
    w = rng.standard_normal(32).astype(np.float32)
    got, text, opt = _dumped(tmp_path, monkeypatch, lambda w: x @ w, w)
    assert "rowblk.body" in text
    assert "insertelement" not in opt and "vector.reduce" not in opt
    assert "fmul <8 x float>" in opt or "fmul <16 x float>" in opt
    np.testing.assert_allclose(got, x.astype(np.float64) @ w, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype, n, lanes", [
    (np.float32, 32, {"avx512": 16, "avx2": 8}), (np.float64, 32, {"avx512": 8, "avx2": 4}),
    (np.float32, 7, {"avx512": 8, "avx2": 8}), (np.float32, 2, {"avx512": 2, "avx2": 2})])
def test_row_vectors_are_a_register_or_the_row(dtype, n, lanes):
    from lowering.llvm.cpu import CURRENT
    assert short_rows.lanes(np.dtype(dtype), n) == lanes[CURRENT.isa]
