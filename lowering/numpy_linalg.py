"""The `numpy` backend's linalg kernels (solve, slogdet, cholesky, qr, eigh, svd): LAPACK
through NumPy, on float32/float64 matrices with any leading batch dims. The llvm backend
runs these inside its compiled programs too (lowering.llvm.linalg)."""
import numpy as np

from ir.errors import KernelError
from registry import register_kernel


class LinAlgError(KernelError, np.linalg.LinAlgError):
    """A matrix the kernel cannot factor (singular, not positive definite, no
    convergence); also a numpy.linalg.LinAlgError, so NumPy-style handlers catch it."""


def _lapack(kernel, fn):
    def impl(*xs, **attrs):
        try:
            return fn(*xs, **attrs)
        except np.linalg.LinAlgError as e:
            raise LinAlgError(f"{kernel}: {e} (input shapes {[np.shape(x) for x in xs]}, "
                              f"dtype {np.asarray(xs[0]).dtype}); check the matrix is "
                              f"well conditioned / positive definite") from None
    return impl


def _svd(a, *, full_matrices):
    if 0 in a.shape[-2:]:       # LAPACK rejects empty matrices; NumPy special-cases them
        m, n = a.shape[-2:]
        k = min(m, n)
        um, vn = (m, n) if full_matrices else (k, k)
        eye = lambda r, c: np.broadcast_to(np.eye(r, c, dtype=a.dtype),   # noqa: E731
                                           a.shape[:-2] + (r, c)).copy()
        return eye(m, um), np.zeros(a.shape[:-2] + (k,), a.dtype), eye(vn, n)
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


IMPLS = {
    "solve": lambda a, b: np.linalg.solve(a, b),
    "slogdet": lambda a: tuple(np.linalg.slogdet(a)),
    "cholesky": lambda a: np.linalg.cholesky(a),
    "qr": lambda a, *, full_matrices: tuple(
        np.linalg.qr(a, mode="complete" if full_matrices else "reduced")),
    "eigh": lambda a, *, lower: tuple(np.linalg.eigh(a, "L" if lower else "U")),
    "svd": _svd,
}

for _name, _impl in IMPLS.items():
    register_kernel(_name, "numpy", _lapack(_name, _impl))
