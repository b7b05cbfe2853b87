"""tracer.lax.linalg (jax.lax.linalg's cholesky, triangular_solve, tridiagonal_solve):
values against NumPy (a triangular solve reads only its triangle), eagerly and under jit
on both backends, under vmap with JAX's batching_test's in_axes, and gradients against
finite differences."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
B = RNG.standard_normal((4, 3))


def runs(f):
    return (f, tracer.jit(f), tracer.jit(f, backend="numpy"))


def solve_ref(a, b, left_side=False, lower=False, transpose_a=False, unit_diagonal=False):
    a = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        a = a - np.diag(np.diag(a)) + np.eye(len(a))
    if transpose_a:
        a = a.T
    return np.linalg.solve(a, b) if left_side else np.linalg.solve(a.T, b.T).T


@pytest.mark.parametrize("kw", [{}, {"left_side": True}, {"left_side": True, "lower": True},
                                {"lower": True, "transpose_a": True},
                                {"left_side": True, "unit_diagonal": True, "transpose_a": True}])
def test_triangular_solve(kw):
    b = B if kw.get("left_side") else B.T
    for run in runs(lambda a, b: lax.linalg.triangular_solve(a, b, **kw)):
        np.testing.assert_allclose(run(A, b), solve_ref(A, b, **kw), rtol=1e-10)
    tracer.check_grads(lambda a, b: lax.linalg.triangular_solve(a, b, **kw), (A, b), order=1)


def test_triangular_solve_batches_as_in_jax():
    a = RNG.standard_normal((4, 10, 4)).astype(np.float32) + np.eye(4, dtype=np.float32)[:, None]
    b = RNG.standard_normal((5, 4, 10)).astype(np.float32)
    got = tracer.vmap(lax.linalg.triangular_solve, in_axes=(1, 2))(a, b)
    want = np.stack([solve_ref(a[:, i], b[..., i]) for i in range(10)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_cholesky():
    s = A @ A.T
    for run in runs(lax.linalg.cholesky):
        np.testing.assert_allclose(run(s), np.linalg.cholesky(s), rtol=1e-10)
    lopsided = np.tril(s) + np.triu(RNG.standard_normal((4, 4)), 1)   # symmetrized first
    np.testing.assert_allclose(lax.linalg.cholesky(lopsided),
                               np.linalg.cholesky((lopsided + lopsided.T) / 2), rtol=1e-10)
    batch = np.stack([s, 2 * s])
    np.testing.assert_allclose(tracer.vmap(lax.linalg.cholesky)(batch),
                               np.linalg.cholesky(batch), rtol=1e-10)
    tracer.check_grads(lambda x: lax.linalg.cholesky(x @ x.T), (A,), order=1)


def test_tridiagonal_solve():
    dl, d, du = RNG.standard_normal(4), RNG.standard_normal(4) + 4, RNG.standard_normal(4)
    dense = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    for run in runs(lax.linalg.tridiagonal_solve):
        np.testing.assert_allclose(run(dl, d, du, B), np.linalg.solve(dense, B), rtol=1e-10)
    got = tracer.vmap(lax.linalg.tridiagonal_solve, in_axes=(None, None, None, 2))(
        dl, d, du, np.stack([B, 2 * B], -1))
    np.testing.assert_allclose(got, np.stack([np.linalg.solve(dense, B)] * 2) * [[[1]], [[2]]],
                               rtol=1e-10)
    tracer.check_grads(lax.linalg.tridiagonal_solve, (dl, d, du, B), order=1)
