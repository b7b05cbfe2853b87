"""jax.lax.linalg's triangular and tridiagonal solves and Cholesky, composed of
tracer.numpy.linalg's kernels (so they batch, differentiate and compile like them).
JAX solves a triangular system by substitution; here `triangular_solve` masks the
triangle it is told to read and calls the general solve: the same values, O(m^3) work.
Real dtypes only, as the rest of the project (`conjugate_a` changes nothing).

    tracer.lax.linalg.triangular_solve(a, b, left_side=True, lower=True)
"""
import tracer.numpy as tnp

__all__ = ["cholesky", "triangular_solve", "tridiagonal_solve"]


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor of each matrix of `x` (..., m, m); `symmetrize_input`
    first averages x with its transpose, as jax does."""
    x = tnp.asarray(x)
    if symmetrize_input:
        x = (x + tnp.swapaxes(x, -1, -2)) / 2
    return tnp.linalg.cholesky(x)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """x with op(a) @ x = b (`left_side`) or x @ op(a) = b, reading only a's lower (or
    upper) triangle, its diagonal taken as ones if `unit_diagonal`; op(a) is a, or its
    transpose if `transpose_a`. a: (..., m, m); b: (..., m, n) or (..., n, m)."""
    a, b = tnp.asarray(a), tnp.asarray(b)
    a = tnp.tril(a) if lower else tnp.triu(a)
    if unit_diagonal:
        eye = tnp.eye(a.shape[-1], dtype=a.dtype)
        a = a * (1 - eye) + eye
    if transpose_a:
        a = tnp.swapaxes(a, -1, -2)
    if left_side:
        return tnp.linalg.solve(a, b)
    return tnp.swapaxes(tnp.linalg.solve(tnp.swapaxes(a, -1, -2), tnp.swapaxes(b, -1, -2)),
                        -1, -2)


def tridiagonal_solve(dl, d, du, b):
    """x with A @ x = b for the tridiagonal A of diagonal `d`, subdiagonal `dl` (dl[i] is
    A[i, i-1]; dl[0] unused) and superdiagonal `du` (du[i] is A[i, i+1]; du[-1] unused),
    each (..., m); b: (..., m, n)."""
    dl, d, du, b = (tnp.asarray(v) for v in (dl, d, du, b))
    m, dtype = d.shape[-1], d.dtype
    a = sum(v[..., :, None] * tnp.eye(m, k=k, dtype=dtype) for v, k in ((d, 0), (dl, -1), (du, 1)))
    return tnp.linalg.solve(a, b)
