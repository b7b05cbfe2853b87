"""Row fusion (lowering/llvm/rows.py): runs of last-axis reductions and the elementwise
loops around them become one per-row kernel; results must match NumPy, including when
values are also returned, read at other rows, or the shapes are 3-D."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tracer
import tracer.numpy as tnp


def _softmax(lib):
    def f(x):
        e = lib.exp(x - lib.max(x, axis=-1, keepdims=True))
        return e / lib.sum(e, axis=-1, keepdims=True)
    return f


def _log_softmax(lib):
    def f(x):
        s = x - lib.max(x, axis=-1, keepdims=True)
        return s - lib.log(lib.sum(lib.exp(s), axis=-1, keepdims=True))
    return f


def _layer_norm(lib):
    def f(x):
        m = lib.mean(x, axis=-1, keepdims=True)
        v = lib.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) / lib.sqrt(v + 1e-5)
    return f


def _kinds(fn, x):
    return [n.attrs.get("kind") for n in tracer.jit(fn).lower(x).graph.nodes]


@pytest.mark.parametrize("make", [_softmax, _log_softmax, _layer_norm])
@pytest.mark.parametrize("shape", [(5, 33), (2, 3, 16), (64, 1024)])
def test_row_fused_matches_numpy(make, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 4
    assert "rows" in _kinds(make(tnp), x)
    got = tracer.jit(make(tnp))(x)
    want = make(np)(x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_intermediates_returned_and_reused_later():
    def f(x):
        m = tnp.max(x, axis=-1)
        e = tnp.exp(x - m[:, None])
        s = tnp.sum(e, axis=-1)
        return e / s[:, None], m, tnp.sum(s) + m[0]
    x = np.random.default_rng(2).standard_normal((40, 24)).astype(np.float32)
    got = tracer.jit(f)(x)
    m = x.max(-1)
    e = np.exp(x - m[:, None])
    s = e.sum(-1)
    for g, w in zip(got, (e / s[:, None], m, s.sum() + m[0])):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_reads_at_other_rows_are_not_row_fused():
    def f(x):
        m = tnp.max(x, axis=-1)
        return x - m[::-1][:, None]        # row i uses the max of another row
    x = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    np.testing.assert_array_equal(tracer.jit(f)(x), x - x.max(-1)[::-1][:, None])


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(8, 40), seed=st.integers(0, 99),
       dtype=st.sampled_from([np.float32, np.float64, np.int32]))
def test_reduce_then_broadcast_any_dtype(rows, cols, seed, dtype):
    def f(x):
        return (x - tnp.min(x, axis=-1, keepdims=True)) * tnp.sum(x, axis=-1, keepdims=True)
    x = (np.random.default_rng(seed).standard_normal((rows, cols)) * 10).astype(dtype)
    spread = x - x.min(-1, keepdims=True)
    want = spread * x.sum(-1, keepdims=True, dtype=dtype)
    # a float sum's error is relative to sum(|x|), not to the (possibly cancelling) sum
    eps = np.finfo(dtype).eps if dtype != np.int32 else 0
    bound = 2 * cols * eps * np.abs(x).astype(np.float64).sum(-1, keepdims=True) * spread
    assert np.all(np.abs(tracer.jit(f)(x) - want.astype(np.float64)) <= bound + 1e-4 * eps)
