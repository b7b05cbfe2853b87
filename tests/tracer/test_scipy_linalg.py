"""tracer.scipy.linalg: factorizations reconstruct their input and solves solve (always,
against NumPy), SciPy's values where scipy is importable (LU pivots, expm), float32 kept,
jit on both backends, gradients by finite differences and vmap."""
import numpy as np
import pytest

import tracer
from tracer.scipy import linalg as la

R = np.random.default_rng(4)
A = R.normal(size=(4, 4))
S = A @ A.T + 4 * np.eye(4)
B = R.normal(size=(4, 2))
V = R.normal(size=4)
MODES = ["eager", "numpy", "llvm"]


def _run(mode, f, *args, **kw):
    g = lambda *a: f(*a, **kw)  # noqa: E731
    return g(*args) if mode == "eager" else tracer.jit(g, backend=mode)(*args)


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_family(mode):
    u = _run(mode, la.cholesky, S)
    np.testing.assert_allclose(np.triu(u), u)
    np.testing.assert_allclose(u.T @ u, S, rtol=1e-12)
    low = _run(mode, la.cholesky, S, lower=True)
    np.testing.assert_allclose(low, np.linalg.cholesky(S), rtol=1e-12)
    for lower in (False, True):
        c = la.cho_factor(S, lower=lower)
        assert c[1] is lower
        np.testing.assert_allclose(_run(mode, lambda c0, b: la.cho_solve((c0, lower), b), c[0], B),
                                   np.linalg.solve(S, B), rtol=1e-11)
        np.testing.assert_allclose(la.cho_solve(c, V), np.linalg.solve(S, V), rtol=1e-11)
    np.testing.assert_allclose(_run(mode, la.solve, S, B, assume_a="pos"), np.linalg.solve(S, B),
                               rtol=1e-11)


@pytest.mark.parametrize("mode", MODES)
def test_solves_inv_det(mode):
    for lower in (False, True):
        for trans in (0, 1, "T", 2):
            for unit in (False, True):
                t = np.tril(A) if lower else np.triu(A)
                if unit:
                    t = t - np.diag(np.diag(t)) + np.eye(4)
                op = t.T if trans in (1, "T", 2) else t
                got = _run(mode, la.solve_triangular, A, B, trans=trans, lower=lower,
                           unit_diagonal=unit)
                np.testing.assert_allclose(got, np.linalg.solve(op, B), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(la.solve_triangular(A, V, lower=True),
                               np.linalg.solve(np.tril(A), V), rtol=1e-10)
    np.testing.assert_allclose(_run(mode, la.solve, A, B), np.linalg.solve(A, B), rtol=1e-11)
    np.testing.assert_allclose(la.solve(A, V), np.linalg.solve(A, V), rtol=1e-11)
    np.testing.assert_allclose(_run(mode, la.inv, A), np.linalg.inv(A), rtol=1e-11)
    np.testing.assert_allclose(_run(mode, la.det, A), np.linalg.det(A), rtol=1e-12)


def test_decompositions():
    w, v = la.eigh(S)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, S, rtol=1e-12)
    np.testing.assert_allclose(la.eigh(np.triu(S), lower=False, eigvals_only=True),
                               np.linalg.eigvalsh(S), rtol=1e-12)
    u, s, vh = la.svd(A)
    np.testing.assert_allclose(u * s @ vh, A, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(la.svd(A, compute_uv=False), np.linalg.svd(A)[1], rtol=1e-12)
    m = R.normal(size=(5, 3))
    q, r = la.qr(m)
    assert q.shape == (5, 5) and r.shape == (5, 3)
    np.testing.assert_allclose(q @ r, m, rtol=1e-12, atol=1e-13)
    q, r = la.qr(m, mode="economic")
    assert q.shape == (5, 3) and r.shape == (3, 3)
    (r,) = la.qr(m, mode="r")
    assert r.shape == (5, 3)
    with pytest.raises(NotImplementedError):
        la.eigh(S, S)
    with pytest.raises(NotImplementedError):
        la.qr(m, pivoting=True)


@pytest.mark.parametrize("mode", MODES)
def test_lu(mode):
    lu, piv = _run(mode, la.lu_factor, A)
    assert np.asarray(piv).dtype == np.int32
    p_vec = np.arange(4)
    for k, pk in enumerate(np.asarray(piv)):                    # LAPACK's swaps, replayed
        p_vec[[k, pk]] = p_vec[[pk, k]]
    low, up = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    np.testing.assert_allclose(A[p_vec], low @ up, rtol=1e-12, atol=1e-13)
    assert np.all(np.abs(low) <= 1)                                # partial pivoting
    for trans, op in ((0, A), (1, A.T)):
        np.testing.assert_allclose(_run(mode, la.lu_solve, (lu, piv), B, trans=trans),
                                   np.linalg.solve(op, B), rtol=1e-11)
    np.testing.assert_allclose(la.lu_solve((lu, piv), V), np.linalg.solve(A, V), rtol=1e-11)
    for m in (A, R.normal(size=(5, 3)), R.normal(size=(3, 5))):
        p, l, u = _run(mode, la.lu, m)
        np.testing.assert_allclose(p @ l @ u, m, rtol=1e-12, atol=1e-13)
        pl, u2 = la.lu(m, permute_l=True)
        np.testing.assert_allclose(pl @ u2, m, rtol=1e-12, atol=1e-13)
    sing = np.array([[0.0, 1.0], [0.0, 2.0]])                     # a zero pivot column
    p, l, u = la.lu(sing)
    np.testing.assert_allclose(p @ l @ u, sing)


def test_lu_against_scipy():
    sl = pytest.importorskip("scipy.linalg")
    lu, piv = la.lu_factor(A)
    lu2, piv2 = sl.lu_factor(A)
    np.testing.assert_allclose(lu, lu2, rtol=1e-12)
    np.testing.assert_array_equal(piv, piv2)
    for got, want in zip(la.lu(R.normal(size=(5, 3))), sl.lu(R.normal(size=(5, 3)))):
        assert got.shape == want.shape


def test_constructions():
    got = la.block_diag(np.ones((2, 3)), np.array([1.0, 2.0]), 3.0)
    want = np.zeros((4, 6))
    want[:2, :3], want[2, 3:5], want[3, 5] = 1, [1, 2], 3
    np.testing.assert_array_equal(got, want)
    assert la.block_diag().shape == (1, 0)
    np.testing.assert_array_equal(la.toeplitz(np.array([1, 2, 3])),
                                  [[1, 2, 3], [2, 1, 2], [3, 2, 1]])
    np.testing.assert_array_equal(la.toeplitz(np.array([1, 2, 3]), np.array([-1, -2])),
                                  [[1, -2], [2, 1], [3, 2]])
    batched = la.toeplitz(np.arange(6.0).reshape(2, 3))
    assert batched.shape == (2, 3, 3)
    np.testing.assert_array_equal(batched[1], la.toeplitz(np.arange(3.0, 6.0)))


def test_more_constructions():
    np.testing.assert_array_equal(la.hankel(np.array([1, 2, 3])),
                                  [[1, 2, 3], [2, 3, 0], [3, 0, 0]])
    np.testing.assert_array_equal(la.hankel(np.array([1, 2, 3]), np.array([9, 4, 5, 6])),
                                  [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]])
    np.testing.assert_array_equal(la.circulant(np.array([1, 2, 3])),
                                  [[1, 3, 2], [2, 1, 3], [3, 2, 1]])
    assert la.circulant(np.arange(6).reshape(2, 3)).shape == (2, 3, 3)
    comp = la.companion(np.array([1.0, -10.0, 31.0, -30.0]))     # roots 2, 3, 5
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(comp).real), [2, 3, 5], rtol=1e-10)
    np.testing.assert_array_equal(la.companion(np.array([2.0, -4.0, 6.0])), [[2, -3], [1, 0]])
    np.testing.assert_array_equal(la.fiedler(np.array([1.0, 4.0, 12.0])),
                                  [[0, 3, 11], [3, 0, 8], [11, 8, 0]])
    np.testing.assert_allclose(la.hilbert(3), 1 / (np.arange(3)[:, None] + np.arange(3) + 1))
    tracer.check_grads(lambda c, r: la.hankel(c, r) * 1.0, (V, V[:3]), order=1)
    got = tracer.jit(la.companion, backend="llvm")(np.array([1.0, -10.0, 31.0, -30.0]))
    np.testing.assert_allclose(got, comp)


def _expm_ref(a):
    """exp(a) by eigendecomposition of the diagonalizable test matrices (reference)."""
    w, v = np.linalg.eig(a)
    return np.real(v @ np.diag(np.exp(w)) @ np.linalg.inv(v))


@pytest.mark.parametrize("mode", MODES)
def test_expm(mode):
    for scale in (1e-3, 0.1, 0.5, 1.5, 3.0, 20.0):          # every Pade degree, squarings
        want = _expm_ref(A * scale)
        got = _run(mode, la.expm, A * scale)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
        got32 = _run(mode, la.expm, (A * scale).astype(np.float32))
        assert got32.dtype == np.float32
        np.testing.assert_allclose(got32, want, rtol=3e-5, atol=3e-5 * np.abs(want).max())
    d = np.diag([1.0, -2.0, 0.5])
    np.testing.assert_allclose(la.expm(d), np.diag(np.exp([1.0, -2.0, 0.5])), rtol=1e-14)
    np.testing.assert_allclose(la.expm(np.zeros((3, 3))), np.eye(3))
    n = np.array([[0.0, 1.0], [0.0, 0.0]])                  # nilpotent: I + N
    np.testing.assert_allclose(la.expm(n), np.eye(2) + n, atol=1e-15)
    t = np.triu(A)
    np.testing.assert_allclose(la.expm(t, upper_triangular=True), la.expm(t), rtol=1e-12)
    assert np.all(np.isnan(la.expm(A * 1e6)))                # more than 16 squarings
    batch = la.expm(np.stack([A, S * 0.1]))
    np.testing.assert_allclose(batch[1], _expm_ref(S * 0.1), rtol=1e-10)


def test_expm_against_scipy():
    sl = pytest.importorskip("scipy.linalg")
    for scale in (0.01, 1.0, 7.0):
        np.testing.assert_allclose(la.expm(A * scale), sl.expm(A * scale), rtol=1e-11)


def test_grads_and_vmap():
    tracer.check_grads(lambda a: la.expm(a * 0.3), (A,), order=1)
    tracer.check_grads(lambda a: la.expm(a * 3.0), (A,), order=1)        # with squarings
    spd = lambda x: x @ x.T + 4 * np.eye(4)  # noqa: E731  (Cholesky's gradient is symmetric)
    tracer.check_grads(lambda x, b: la.cho_solve(la.cho_factor(spd(x)), b), (A, B), order=1)
    tracer.check_grads(lambda a, b: la.solve_triangular(a, b, lower=True, trans=1), (A, B),
                       order=1)
    tracer.check_grads(lambda a, b: la.lu_solve(la.lu_factor(a), b), (A, B), order=1)
    tracer.check_grads(lambda a: la.lu(a)[2], (A,), order=1)
    tracer.check_grads(lambda x: la.cholesky(spd(x)), (A,), order=1)
    tracer.check_grads(lambda x: la.solve(spd(x), B, assume_a="pos"), (A,), order=1)
    rot = np.array([[0.0, 1.0], [-1.0, 0.0]])
    g = tracer.grad(lambda t: tracer.numpy.sum(la.expm(t * rot)))(0.5)
    assert g == pytest.approx(-2 * np.sin(0.5), rel=1e-12)          # d/dt sum(rotation(t))
    stack = np.stack([A, A.T, S])
    np.testing.assert_allclose(tracer.vmap(la.expm)(stack * 0.2), la.expm(stack * 0.2), rtol=1e-13)
    lu, piv = tracer.vmap(la.lu_factor)(stack)
    lu1, piv1 = la.lu_factor(stack)                                   # batched directly
    np.testing.assert_allclose(lu, lu1)
    np.testing.assert_array_equal(piv, piv1)
    np.testing.assert_allclose(tracer.vmap(la.lu_solve, in_axes=((0, 0), None))((lu, piv), B),
                               np.linalg.solve(stack, B), rtol=1e-10)
    np.testing.assert_allclose(tracer.vmap(la.solve_triangular, in_axes=(None, 0))(A, B.T),
                               np.linalg.solve(np.triu(A), B).T, rtol=1e-10)


@pytest.mark.parametrize("mode", MODES)
def test_solve_sylvester(mode):
    b = R.normal(size=(2, 2))
    x = _run(mode, la.solve_sylvester, A, b, B)
    np.testing.assert_allclose(A @ x + x @ b, B, rtol=1e-11, atol=1e-12)
    stack = np.stack([A, S])                     # batch dims broadcast across A, B and C
    xs = la.solve_sylvester(stack, b, B)
    np.testing.assert_allclose(stack @ xs + xs @ b, np.broadcast_to(B, (2, 4, 2)), atol=1e-11)
    np.testing.assert_allclose(tracer.vmap(la.solve_sylvester, in_axes=(0, None, None))(
        stack, b, B), xs, rtol=1e-12)
    tracer.check_grads(la.solve_sylvester, (A, b, B), order=2)
    x32 = la.solve_sylvester(A.astype(np.float32), b.astype(np.float32), B.astype(np.float32))
    assert x32.dtype == np.float32
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation"):
        la.solve_sylvester(A, b, B.T)
    with pytest.raises(ValueError, match="method must be 'schur' or 'eigen', got 'qr'"):
        la.solve_sylvester(A, b, B, method="qr")


def test_solve_sylvester_against_scipy():
    sl = pytest.importorskip("scipy.linalg")
    b = R.normal(size=(2, 2))
    np.testing.assert_allclose(la.solve_sylvester(A, b, B), sl.solve_sylvester(A, b, B),
                               rtol=1e-11)
