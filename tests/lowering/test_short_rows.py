"""Reductions over short rows (a matvec's 32 columns) and what follows them: LLVM
vectorizes along the contiguous row, never the loop around it with a gather per item
(reductions.ROLLED for rows, reductions._SCALAR for column sums into a short row), and a
reduction followed only by values per row is not row-fused (rows.py), so those values
run in a vectorized loop of their own."""
import re

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp


def _optimized_ir(tmp_path, monkeypatch, f, *args):
    monkeypatch.setenv("TRACER_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    out = tracer.jit(f)(*args)
    return out, "".join(p.read_text() for p in tmp_path.glob("*.opt.ll"))


@pytest.mark.parametrize("f, dtype", [
    (lambda lib, x, w: x @ w, np.float32),                          # sum, float32 blocks
    (lambda lib, x, w: lib.max(x * w, axis=-1), np.float32),       # the generic loop
    (lambda lib, x, w: lib.sum(x * w, axis=-1), np.int32),
    (lambda lib, x, w: lib.sum(x * w, axis=0), np.float32),        # a column reduction
])
def test_short_rows_reduce_without_gathers(tmp_path, monkeypatch, f, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((1000, 32)) * 8).astype(dtype)
    w = (rng.standard_normal(32) * 8).astype(dtype)
    got, ir = _optimized_ir(tmp_path, monkeypatch, lambda w: f(tnp, x, w), w)
    assert re.search(r"<(4|8|16) x (float|i64)>", ir) and "masked.gather" not in ir
    np.testing.assert_allclose(got, f(np, x.astype(np.float64), w), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("cols", [7, 8, 9, 33, 256, 257])
def test_short_row_sums_match_numpy_on_every_tail(cols):
    x = np.random.default_rng(cols).standard_normal((37, cols)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal(cols).astype(np.float32)
    v = np.random.default_rng(2).standard_normal(37).astype(np.float32)
    got = tracer.jit(lambda x, w, v: (x @ w, tnp.min(x - w, axis=-1), v @ x))(x, w, v)
    np.testing.assert_allclose(got[0], x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], (x - w).min(-1))
    np.testing.assert_allclose(got[2], v.astype(np.float64) @ x, rtol=1e-5, atol=1e-5)


def _logistic_grad(x, y):
    def logp(w):
        z = x @ w
        return tnp.sum(y * z - tnp.logaddexp(0.0, z)) - 0.5 * tnp.sum(w * w)
    return tracer.grad(logp)


def test_reduction_then_values_per_row_is_not_row_fused():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 32)).astype(np.float32)
    y = (rng.random(300) < 0.5).astype(np.float32)
    w = rng.standard_normal(32).astype(np.float32)
    g = _logistic_grad(x, y)
    kinds = [n.attrs.get("kind") for n in tracer.jit(g).lower(w).graph.nodes]
    assert "rows" not in kinds
    got = tracer.jit(g)(w)
    want = tracer.jit(g, backend="numpy")(w)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axes", [(0,), (0, 1)])
def test_column_sum_reduced_loops_stay_loops(tmp_path, monkeypatch, axes):
    """A short reduced loop around a vectorized row is not unrolled into copies of the
    row's loop (1,663 and 2,543 optimized lines unrolled), and the row stays in vector
    registers across it (vector phis)."""
    x = np.random.default_rng(3).standard_normal((16, 64, 128)).astype(np.float32)
    got, ir = _optimized_ir(tmp_path, monkeypatch, lambda x: tnp.sum(x, axis=axes) * 2.0, x)
    assert len(ir.splitlines()) < 600, len(ir.splitlines())
    assert re.search(r"phi <(8|16) x float>", ir)
    np.testing.assert_allclose(got, x.sum(axis=axes) * 2.0, rtol=1e-5, atol=1e-4)
