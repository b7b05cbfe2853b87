"""The primitive kernels of tracer.numpy.linalg: solve, slogdet, cholesky, qr, eigh, svd.

Each is declared here (shape rule, gradient, family "linalg"); vmap batches them with the
family's shared rule (the batch dim to the front). Their NumPy/LAPACK kernels are
lowering.numpy_linalg's, which the llvm backend runs inside the compiled program, on
purpose (lowering.llvm.linalg). Kernels take float32/float64 matrices with any leading batch dims
(equal across operands: the ops broadcast first).

Gradients follow JAX and are written with traceable ops (so they differentiate again):
solve/slogdet through solves with a^T; cholesky, qr, eigh, svd through the decomposition
formulas. As in JAX, cholesky and eigh gradients are symmetrized (the derivative along
symmetric perturbations; the kernels, like NumPy, read one triangle only). Degenerate
cases, as in JAX: repeated eigenvalues (eigh) or singular values (svd) give inf/nan
gradients for the vectors; svd gradients also need non-zero singular values when u/vh
are rectangular (rank deficiency); qr gradients need m >= n and reduced mode; a singular
matrix makes the solve/slogdet gradient raise LinAlgError (NumPy raises on the solve).
"""
import numpy as np

from ir import ShapedArray
from ir.errors import DTypeError, GradientError, ShapeError
from registry import declare_kernel
from tracer.core import run_kernel
from tracer.numpy.assembly import tril, triu
from tracer.numpy.creation import eye
from tracer.numpy.elementwise import where
from tracer.numpy.shape_ops import broadcast_to, swapaxes

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# ---- shape rules --------------------------------------------------------------------------
def _matrix(kernel, a, square=True):
    if a.dtype not in FLOATS:
        raise DTypeError(f"{kernel}: needs a float32 or float64 matrix, got {a.dtype}")
    if a.ndim < 2 or square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{kernel}: needs {'square ' if square else ''}matrices "
                         f"(..., m, n), got shape {a.shape}")
    return a.shape[:-2], a.shape[-2], a.shape[-1]


def _solve_rule(a, b):
    batch, n, _ = _matrix("solve", a)
    if b.ndim != a.ndim or b.shape[:-1] != batch + (n,) or b.dtype != a.dtype:
        raise ShapeError(f"solve: kernel wants a (..., n, n) and b (..., n, k) of one dtype "
                         f"and equal batch dims, got {a.shape} {a.dtype} and {b.shape} "
                         f"{b.dtype}")
    return ShapedArray(b.shape, a.dtype)


def _slogdet_rule(a):
    batch, _, _ = _matrix("slogdet", a)
    return ShapedArray(batch, a.dtype), ShapedArray(batch, a.dtype)


def _cholesky_rule(a):
    _matrix("cholesky", a)
    return ShapedArray(a.shape, a.dtype)


def _qr_rule(a, *, full_matrices):
    batch, m, n = _matrix("qr", a, square=False)
    k = m if full_matrices else min(m, n)
    return ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype)


def _eigh_rule(a, *, lower):
    batch, n, _ = _matrix("eigh", a)
    return ShapedArray(batch + (n,), a.dtype), ShapedArray(a.shape, a.dtype)


def _svd_rule(a, *, full_matrices):
    batch, m, n = _matrix("svd", a, square=False)
    k = min(m, n)
    um, vn = (m, n) if full_matrices else (k, k)
    return (ShapedArray(batch + (m, um), a.dtype), ShapedArray(batch + (k,), a.dtype),
            ShapedArray(batch + (vn, n), a.dtype))


RULES = {"solve": _solve_rule, "slogdet": _slogdet_rule, "cholesky": _cholesky_rule,
         "qr": _qr_rule, "eigh": _eigh_rule, "svd": _svd_rule}


# ---- gradients (traceable) ----------------------------------------------------------------
def _t(x):
    return swapaxes(x, -1, -2)


def _sym(x):
    return (x + _t(x)) / 2


def _solve_grad(dy, inputs, x, attrs):
    a, _ = inputs
    db = run_kernel("solve", [_t(a), dy])
    return -db @ _t(x), db


def _slogdet_grad(dy, inputs, outputs, attrs):
    (a,), (_, dlog) = inputs, dy
    n = a.shape[-1]
    inv_t = run_kernel("solve", [_t(a), broadcast_to(eye(n, dtype=a.dtype), a.shape)])
    return (dlog[..., None, None] * inv_t,)


def _cholesky_grad(dl, inputs, l, attrs):
    """P = Phi(L^T dL) (lower triangle, halved diagonal); dA = sym(L^-T P L^-1)."""
    p = _t(l) @ dl
    p = tril(p) - tril(triu(p)) / 2
    y = run_kernel("solve", [_t(l), p])                 # L^-T P
    return (_sym(_t(run_kernel("solve", [_t(l), _t(y)]))),)


def _qr_grad(dy, inputs, outputs, attrs):
    """(m >= n, reduced): M = R dR^T - dQ^T Q, copied lower -> upper; dA = (dQ + Q M) R^-T."""
    (a,), (q, r), (dq, dr) = inputs, outputs, dy
    m, n = a.shape[-2:]
    if m < n or attrs["full_matrices"] and m != n:
        raise GradientError(f"qr: gradient defined only for m >= n in reduced mode (as in "
                            f"JAX); got shape {a.shape}, full_matrices="
                            f"{attrs['full_matrices']}")
    mm = r @ _t(dr) - _t(dq) @ q
    mm = tril(mm) + _t(tril(mm, -1))
    return (_t(run_kernel("solve", [r, _t(dq + q @ mm)])),)


def _over(x, d, diagonal=True):
    """x / d, with exact zeros where x is zero (and, with `diagonal`, on the diagonal). d
    is a gap between eigen- or singular values (0 where they repeat) or a singular value
    (0 where the rank is deficient): only a non-zero cotangent through it is inf/nan, as
    in JAX, whose symbolic zeros keep eigvalsh and svdvals gradients finite."""
    skip = x == 0
    if diagonal:
        skip = skip | (eye(x.shape[-1]) != 0)
    return where(skip, 0, x / where(skip, 1, d))


def _gaps(w):
    """D[i, j] = w[j] - w[i]."""
    return w[..., None, :] - w[..., :, None]


def _eigh_grad(dy, inputs, outputs, attrs):
    """dA = sym(V (diag(dw) + F * (V^T dV)) V^T), F[i, j] = 1/(w_j - w_i) off the diagonal."""
    (w, v), (dw, dv) = outputs, dy
    inner = _over(_t(v) @ dv, _gaps(w)) + dw[..., None] * eye(w.shape[-1], dtype=w.dtype)
    return (_sym(v @ inner @ _t(v)),)


def _svd_grad(dy, inputs, outputs, attrs):
    """Townsend (2016): dA = U[(F*(U^T dU - dU^T U)) S + diag(dS) + S (F*(V^T dV - dV^T V))]
    V^T + (I - U U^T) dU S^-1 V^T + U S^-1 dV^T (I - V V^T), F[i, j] = 1/(s_j^2 - s_i^2)
    off the diagonal, 0 on it."""
    (a,), (u, s, vh), (du, ds, dvh) = inputs, outputs, dy
    m, n = a.shape[-2:]
    k = min(m, n)
    if attrs["full_matrices"] and m != n:
        raise GradientError(f"svd: gradient of full_matrices=True defined only for square "
                            f"matrices (as in JAX); got shape {a.shape}")
    v, dv = _t(vh), _t(dvh)
    gaps = _gaps(s * s)
    j = _over(_t(u) @ du - _t(du) @ u, gaps)
    kk = _over(_t(v) @ dv - _t(dv) @ v, gaps)
    core = j * s[..., None, :] + s[..., :, None] * kk + ds[..., None] * eye(k, dtype=s.dtype)
    out = u @ core @ vh
    if m > k:
        out = out + _over(du - u @ (_t(u) @ du), s[..., None, :], False) @ vh
    if n > k:
        out = out + u @ _over(_t(dv - v @ (_t(v) @ dv)), s[..., :, None], False)
    return (out,)


GRADIENTS = {"solve": _solve_grad, "slogdet": _slogdet_grad, "cholesky": _cholesky_grad,
             "qr": _qr_grad, "eigh": _eigh_grad, "svd": _svd_grad}


for _name, _rule in RULES.items():
    declare_kernel(_name, shape=_rule, family="linalg", gradient=GRADIENTS[_name])
