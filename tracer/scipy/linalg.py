"""`tracer.scipy.linalg`: jax.scipy.linalg's real-valued names over tracer.numpy.linalg's
kernels (cholesky, solve, slogdet, eigh, svd, qr) and tracer.lax.linalg.triangular_solve,
with SciPy's signatures and defaults (cholesky is upper unless lower=True; qr's mode
'full', 'economic' or 'r'). lu_factor, lu_solve and lu are LU with partial pivoting
composed here of masked rank-1 updates (one unrolled step per column, LAPACK's row
choice, int32 swap indices); expm is JAX's Pade approximant with scaling and squaring.
The constructions (block_diag, toeplitz, hankel, circulant, companion, fiedler, hilbert)
batch over leading dims as JAX's. The overwrite_* and check_finite flags are accepted and
ignored, as in JAX. Not here: generalized eigenproblems (eigh's b), pivoted QR, and what
needs complex numbers or a Schur form (eig, schur, sqrtm, funm, hessenberg, polar, dft),
nor expm_frechet, eigh_tridiagonal, qr_multiply and the rarer
constructions (pascal, invpascal, invhilbert, helmert, leslie, convolution_matrix)."""
import numpy as np

from tracer import lax
from tracer import numpy as tnp
from tracer.lax.linalg import triangular_solve as _triangular_solve
from tracer.scipy._expm import expm  # noqa: F401  (public here, as jax.scipy.linalg's)
from tracer.scipy._util import promote_inexact as _promote

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det",
           "eigh", "svd", "qr", "lu", "lu_factor", "lu_solve", "block_diag", "toeplitz",
           "hankel", "circulant", "companion", "fiedler", "hilbert", "expm",
           "solve_sylvester"]


def _mt(x):
    return tnp.swapaxes(x, -1, -2)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a: lower (from a's lower triangle) or, by default, upper
    (from its upper triangle), as SciPy; no symmetrization."""
    (a,) = _promote(a)
    return tnp.linalg.cholesky(a) if lower else _mt(tnp.linalg.cholesky(_mt(a)))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for cho_solve; c's other triangle is zero (JAX's, not SciPy's garbage)."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a @ x = b from cho_factor's (c, lower); b (..., n) or (..., n, k)."""
    c, lower = c_and_lower
    c, b = _promote(c, b)
    vector = b.ndim == c.ndim - 1
    if vector:
        b = b[..., None]
    y = _triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower)
    x = _triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower)
    return x[..., 0] if vector else x


_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) @ x = b, reading one triangle of a; trans 0/'N', 1/'T' or 2/'C'."""
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans!r}")
    a, b = _promote(a, b)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = b[..., None]
    x = _triangular_solve(a, b, left_side=True, lower=lower, transpose_a=_TRANS[trans],
                         unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """x with a @ x = b; assume_a='pos' solves through the Cholesky factor of a's `lower`
    (or upper) triangle, 'gen', 'sym' and 'her' by the general solve."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of 'gen', 'sym', 'her' or 'pos'; "
                         f"got {assume_a!r}")
    a, b = _promote(a, b)
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    if b.ndim == a.ndim - 1:
        return tnp.linalg.solve(a, b[..., None])[..., 0]
    return tnp.linalg.solve(a, b)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C, batched over leading dims as JAX's. Solved directly as the
    (m n)-square system (A (x) I + I (x) B^T) vec X = vec C rather than by JAX's complex
    Schur or eigen route (there are no complex dtypes here), so `method` and `tol` change
    nothing, and an equation without a unique solution (A and -B sharing an eigenvalue)
    gives what solve gives for a singular matrix where JAX gives NaN; meant for the small
    m and n the O((m n)^3) solve allows."""
    if method not in ("schur", "eigen"):
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    A, B, C = _promote(A, B, C)
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    eye_m, eye_n = np.eye(m, dtype=C.dtype), np.eye(n, dtype=C.dtype)
    k = tnp.einsum("...ik,jl->...ijkl", A, eye_n) + tnp.einsum("ik,...lj->...ijkl", eye_m, B)
    k = tnp.reshape(k, k.shape[:-4] + (m * n, m * n))
    c = tnp.reshape(C, C.shape[:-2] + (m * n, 1))
    batch = tnp.broadcast_shapes(k.shape[:-2], c.shape[:-2])
    x = tnp.linalg.solve(tnp.broadcast_to(k, batch + k.shape[-2:]),
                         tnp.broadcast_to(c, batch + c.shape[-2:]))
    return tnp.reshape(x, batch + (m, n))


def inv(a, overwrite_a=False, check_finite=True):
    (a,) = _promote(a)
    return tnp.linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    (a,) = _promote(a)
    return tnp.linalg.det(a)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    """(w, v) of the symmetric a, read from its lower (or upper) triangle; w only with
    eigvals_only. The generalized problem (b) is not supported, as in JAX."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _promote(a)
    w, v = tnp.linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    (a,) = _promote(a)
    out = tnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r) for mode 'full' or 'economic'; (r,) for 'r', as SciPy."""
    if pivoting:
        raise NotImplementedError("qr with pivoting=True")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _promote(a)
    q, r = tnp.linalg.qr(a, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


# ---- LU with partial pivoting, composed ----

def _lu(a):
    """(lu, swaps, perm) of a (..., m, n): at step k the row with the largest |entry| in
    column k (the first such, as LAPACK) is swapped with row k, then eliminated below by
    a masked rank-1 update. A zero pivot column is left as it is (LAPACK's info > 0)."""
    m, n = a.shape[-2:]
    rows, cols = np.arange(m), np.arange(n)
    batch = a.shape[:-2]
    perm = tnp.broadcast_to(tnp.arange(m), batch + (m,))
    swaps = []
    for k in range(min(m, n)):
        col = tnp.where(rows >= k, tnp.abs(a[..., :, k]), -1.0)
        p = lax.stop_gradient(tnp.argmax(col, axis=-1))
        swaps.append(p)
        p = p[..., None]
        idx = tnp.where(rows == k, p, tnp.where(rows == p, k, rows))
        a = tnp.take_along_axis(a, tnp.broadcast_to(idx[..., None], a.shape), axis=-2)
        perm = tnp.take_along_axis(perm, idx, axis=-1)
        pivot = a[..., k, k][..., None]
        safe = tnp.where(pivot == 0, 1.0, pivot)
        mult = tnp.where((rows > k) & (pivot != 0), a[..., :, k] / safe, 0.0)
        update = mult[..., :, None] * a[..., k, :][..., None, :]
        a = a - tnp.where(cols > k, update, 0.0)
        a = tnp.where((cols == k) & (rows > k)[:, None], mult[..., :, None], a)
    swaps = tnp.astype(tnp.stack(swaps, axis=-1), np.int32) if swaps else \
        tnp.zeros(batch + (0,), np.int32)
    return a, swaps, perm


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L (unit diagonal, below) and U packed in lu, and LAPACK's swap indices
    (row i was swapped with row piv[i], in order)."""
    (a,) = _promote(a)
    lu_, swaps, _ = _lu(a)
    return lu_, swaps


def _swaps_to_perm(piv, m):
    perm = tnp.broadcast_to(tnp.arange(m), piv.shape[:-1] + (m,))
    rows = np.arange(m)
    for k in range(piv.shape[-1]):
        p = piv[..., k][..., None]
        pk = tnp.take_along_axis(perm, p, axis=-1)
        ek = perm[..., k][..., None]
        perm = tnp.where(rows == k, pk, tnp.where(rows == p, ek, perm))
    return perm


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a @ x = b (trans 0) or a.T @ x = b (1 or 2) from lu_factor's (lu, piv)."""
    lu_, piv = lu_and_piv
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans!r}")
    lu_, b = _promote(lu_, b)
    m = lu_.shape[-1]
    vector = b.ndim == lu_.ndim - 1
    if vector:
        b = b[..., None]
    perm = _swaps_to_perm(tnp.asarray(piv), m)
    if not _TRANS[trans]:                    # P a = L U: L U x = b[perm]
        pb = tnp.take_along_axis(b, tnp.broadcast_to(perm[..., None], b.shape), axis=-2)
        y = _triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
        x = _triangular_solve(lu_, y, left_side=True, lower=False)
    else:                                    # a.T = U.T L.T P: x[perm] = L.T^-1 U.T^-1 b
        z = _triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
        w = _triangular_solve(lu_, z, left_side=True, lower=True, transpose_a=True,
                             unit_diagonal=True)
        inverse = tnp.argsort(perm, axis=-1)
        x = tnp.take_along_axis(w, tnp.broadcast_to(inverse[..., None], w.shape), axis=-2)
    return x[..., 0] if vector else x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) with permute_l."""
    (a,) = _promote(a)
    m, n = a.shape[-2:]
    kk = min(m, n)
    packed, _, perm = _lu(a)
    eye = tnp.eye(m, kk, dtype=a.dtype)
    low = tnp.tril(packed[..., :, :kk], -1) + eye
    up = tnp.triu(packed[..., :kk, :])
    p = tnp.astype(perm[..., None, :] == np.arange(m)[:, None], a.dtype)   # p[perm[i], i]
    return (p @ low, up) if permute_l else (p, low, up)


# ---- constructions ----

def block_diag(*arrs):
    """The block-diagonal matrix of arrays of at most 2 dims (scalars and vectors as rows)."""
    if not arrs:
        return tnp.zeros((1, 0))
    for i, x in enumerate(arrs):
        if tnp.ndim(x) > 2:
            raise ValueError(f"Arguments to block_diag must have at most 2 dimensions, got "
                             f"{tnp.shape(x)} at argument {i}.")
    arrs = [tnp.atleast_2d(tnp.asarray(x)) for x in arrs]
    total = sum(x.shape[1] for x in arrs)
    rows, col = [], 0
    for x in arrs:
        rows.append(tnp.pad(x, ((0, 0), (col, total - col - x.shape[1]))))
        col += x.shape[1]
    return tnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r[0] ignored; r = c when
    None), batched over leading dims: (..., N), (..., M) -> (..., N, M)."""
    c = tnp.atleast_1d(tnp.asarray(c))
    r = c if r is None else tnp.atleast_1d(tnp.asarray(r))
    dt = tnp.result_type(c, r)
    c, r = tnp.astype(c, dt), tnp.astype(r, dt)
    batch = tnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = tnp.broadcast_to(c, batch + c.shape[-1:])
    r = tnp.broadcast_to(r, batch + r.shape[-1:])
    n, m = c.shape[-1], r.shape[-1]
    vals = tnp.concatenate([tnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    idx = n - 1 - np.arange(n)[:, None] + np.arange(m)[None, :]
    return tnp.take(vals, idx, axis=-1)


def _batched(*vs):
    """1-d-at-least arrays of one dtype whose leading (batch) dims broadcast together."""
    vs = [tnp.atleast_1d(tnp.asarray(v)) for v in vs]
    dt = tnp.result_type(*vs)
    batch = tnp.broadcast_shapes(*(v.shape[:-1] for v in vs))
    return [tnp.broadcast_to(tnp.astype(v, dt), batch + v.shape[-1:]) for v in vs]


def hankel(c, r=None):
    """The Hankel matrix h[i, j] = v[i + j], v = c then r[1:] (r defaults to zeros):
    (..., N), (..., M) -> (..., N, M)."""
    c = tnp.atleast_1d(tnp.asarray(c))
    c, r = _batched(c, tnp.zeros_like(c) if r is None else r)
    n, m = c.shape[-1], r.shape[-1]
    vals = tnp.concatenate([c, r[..., 1:]], axis=-1)
    return tnp.take(vals, np.arange(n)[:, None] + np.arange(m)[None, :], axis=-1)


def circulant(c):
    """The circulant matrix with first column c: m[i, j] = c[(i - j) % n], batched."""
    (c,) = _batched(c)
    n = c.shape[-1]
    return tnp.take(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n, axis=-1)


def companion(a):
    """The companion matrix of the polynomial coefficients a (..., N): first row
    -a[1:] / a[0], ones on the first subdiagonal, (..., N - 1, N - 1)."""
    (a,) = _promote(a)
    a = tnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got "
                         f"shape {a.shape}.")
    m = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = tnp.eye(m, k=-1, dtype=a.dtype)
    return tnp.where((np.arange(m) == 0)[:, None], first[..., None, :], below)


def fiedler(a):
    """The symmetric Fiedler matrix |a[i] - a[j]|, batched."""
    (a,) = _batched(a)
    return tnp.abs(a[..., :, None] - a[..., None, :])


def hilbert(n):
    """The n x n Hilbert matrix 1 / (i + j + 1)."""
    i = np.arange(int(n), dtype=np.float64)
    return tnp.asarray(1 / (i[:, None] + i[None, :] + 1))

