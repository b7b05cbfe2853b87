"""Scatter and gather semantics: `x.at[idx]` in every mode with duplicate, negative,
out-of-range and traced indices, eagerly, under both jit backends and under vmap, against
NumPy (`ufunc.at`, assignment); and lax.dynamic_index / dynamic_update_index's start index
(negative counts from the end, then clamped, as jax.lax)."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

N = 10
XV = np.arange(N, dtype=np.float64) * 1.5 - 4.0


def _jax_slot(i, n):
    i = i + n if i < 0 else i
    return min(max(i, 0), n - 1)


RUNS = {
    "eager": lambda f: f,
    "numpy": lambda f: tracer.jit(f, backend="numpy"),
    "llvm": lambda f: tracer.jit(f, backend="llvm"),
}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("i", [-1, -3, -10, -30, 0, 4, 12])
def test_dynamic_index_counts_negative_starts_from_the_end(run, i):
    idx = np.int32(i)
    got = RUNS[run](lax.dynamic_index)(XV, idx)
    assert got == XV[_jax_slot(i, N)]
    upd = RUNS[run](lambda x, i: lax.dynamic_update_index(x, i, x[0] * 0 + 99.0))(XV, idx)
    want = XV.copy()
    want[_jax_slot(i, N)] = 99.0
    np.testing.assert_array_equal(upd, want)


def test_dynamic_index_negative_under_vmap_and_grad():
    ii = np.array([-1, -3, 2, -30], np.int64)
    np.testing.assert_array_equal(tracer.vmap(lambda i: lax.dynamic_index(XV, i))(ii),
                                  XV[[_jax_slot(int(i), N) for i in ii]])
    g = tracer.grad(lambda x: lax.dynamic_index(x, np.int64(-3)) * 2.0)(XV)
    np.testing.assert_array_equal(g, np.eye(N)[N - 3] * 2.0)
