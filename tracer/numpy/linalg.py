"""tracer.numpy.linalg: numpy.linalg's names, values and signatures, batched over leading
dims, eagerly and under tracing.

solve, slogdet, cholesky, qr, eigh and svd are kernels (tracer.numpy.linalg_kernels, with
the gradients and their degenerate cases); the rest are composites: inv is a solve against
the identity, det comes from slogdet, eigvalsh from eigh, pinv and lstsq from the svd,
matrix_power squares repeatedly, multi_dot multiplies in the cheapest order, norm is
made of reductions. Integer and bool inputs become float64, as in NumPy.
"""
import builtins
from collections import namedtuple

import numpy as np

from ir.errors import ArgumentError, DTypeError, ShapeError
from ir.types import dtype_kind
from lowering.numpy_linalg import LinAlgError
from tracer.core import Tracer, run_kernel
from tracer.numpy import linalg_kernels
from tracer.numpy._base import broadcast_shapes, convert, dtype_of, shape, value
from tracer.numpy.creation import eye
from tracer.numpy.elementwise import abs, exp, sqrt, where
from tracer.numpy.products import dot, matmul
from tracer.numpy.reductions import count_nonzero, max, min, sum
from tracer.numpy.shape_ops import broadcast_to, expand_dims, reshape, swapaxes

SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
QRResult = namedtuple("QRResult", "Q R")
EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
SVDResult = namedtuple("SVDResult", "U S Vh")


def _float(a, op):
    a = value(a, op)
    dt = dtype_of(a)
    if dtype_kind(dt) in "biu":
        return convert(a, np.float64, op)
    if dt not in linalg_kernels.FLOATS:
        raise DTypeError(f"linalg.{op}: array type {dt} is unsupported (use float32 or "
                         f"float64)")
    return a


def _matrices(a, op, square=True):
    a = _float(a, op)
    s = shape(a)
    if len(s) < 2 or square and s[-1] != s[-2]:
        raise ShapeError(f"linalg.{op}: needs {'square ' if square else ''}matrices of "
                         f"shape (..., M, {'M' if square else 'N'}), got shape {s}")
    return a


def _t(x):
    return swapaxes(x, -1, -2)


def _to(x, shp):
    """x broadcast to shp (no node, and eagerly no copy, when it has that shape)."""
    return x if shape(x) == shp else broadcast_to(x, shp)


def solve(a, b):
    """x with a @ x == b; b is a vector (n,) only when 1-D (NumPy 2), else (..., n, k)."""
    a = _matrices(a, "solve")
    b = _float(b, "solve")
    dt = np.result_type(dtype_of(a), dtype_of(b))
    a, b = convert(a, dt, "solve"), convert(b, dt, "solve")
    sa, sb, vector = shape(a), shape(b), len(shape(b)) == 1
    if vector:
        b = reshape(b, sb + (1,))
    if shape(b)[-2] != sa[-1]:
        raise ShapeError(f"linalg.solve: a {sa} and b {sb} do not match (b needs {sa[-1]} "
                         f"rows)")
    batch = broadcast_shapes("solve", sa[:-2], shape(b)[:-2])
    x = run_kernel("solve", [_to(a, batch + sa[-2:]), _to(b, batch + shape(b)[-2:])])
    return reshape(x, batch + sa[-1:]) if vector else x


def inv(a):
    a = _matrices(a, "inv")
    return run_kernel("solve", [a, _to(eye(shape(a)[-1], dtype=dtype_of(a)), shape(a))])


def slogdet(a):
    sign, logabsdet = run_kernel("slogdet", [_matrices(a, "slogdet")])
    return SlogdetResult(sign, logabsdet)


def det(a):
    sign, logabsdet = slogdet(a)
    return sign * exp(logabsdet)


def cholesky(a, /, *, upper=False):
    low = run_kernel("cholesky", [_matrices(a, "cholesky")])
    return _t(low) if upper else low


def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentError(f"linalg.qr: mode {mode!r} is not supported (use 'reduced', "
                            f"'complete' or 'r')")
    q, r = run_kernel("qr", [_matrices(a, "qr", square=False)],
                      {"full_matrices": mode == "complete"})
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO="L"):
    if UPLO not in ("L", "U"):
        raise ArgumentError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    w, v = run_kernel("eigh", [_matrices(a, "eigh")], {"lower": UPLO == "L"})
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """hermitian=True is accepted and ignored (same values, computed the general way)."""
    a = _matrices(a, "svd", square=False)
    u, s, vh = run_kernel("svd", [a], {"full_matrices": bool(full_matrices and compute_uv)})
    return SVDResult(u, s, vh) if compute_uv else s


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """Singular values at most rcond * the largest one count as zero (default
    max(M, N) * eps, as in NumPy)."""
    a = _matrices(a, "pinv", square=False)
    m, n = shape(a)[-2:]
    cut = rtol if rcond is None else rcond
    if cut is None:
        cut = np.finfo(dtype_of(a)).eps * builtins.max(m, n)
    u, s, vh = svd(a, full_matrices=False)
    big = s > expand_dims(max(s, axis=-1), -1) * cut if builtins.min(m, n) else s > 0
    s_inv = where(big, 1 / where(big, s, 1), 0).astype(dtype_of(a))
    return matmul(_t(vh) * expand_dims(s_inv, -2), _t(u))


def matrix_power(a, n):
    """a multiplied by itself n times by repeated squaring; n < 0 inverts first."""
    if not isinstance(n, (int, np.integer)):
        raise ArgumentError(f"linalg.matrix_power: exponent must be an integer, got {n!r}")
    a = value(a, "matrix_power")
    if len(shape(a)) < 2 or shape(a)[-1] != shape(a)[-2]:
        raise ShapeError(f"linalg.matrix_power: needs square matrices (..., M, M), got "
                         f"shape {shape(a)}")
    if n == 0:
        return _to(eye(shape(a)[-1], dtype=dtype_of(a)), shape(a))
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else matmul(result, a)
        n >>= 1
        if n:
            a = matmul(a, a)
    return result


def lstsq(a, b, rcond=None):
    """(x, residuals, rank, s) via the svd. Eagerly as NumPy (residuals empty unless
    rank == N < M); under tracing, as JAX, residuals are computed whenever M > N."""
    a = _matrices(a, "lstsq", square=False)
    b = _float(b, "lstsq")
    if len(shape(a)) != 2 or len(shape(b)) not in (1, 2) or shape(b)[0] != shape(a)[0]:
        raise ShapeError(f"linalg.lstsq: needs a (M, N) and b (M,) or (M, K), got "
                         f"{shape(a)} and {shape(b)}")
    dt = np.result_type(dtype_of(a), dtype_of(b))
    a, b = convert(a, dt, "lstsq"), convert(b, dt, "lstsq")
    m, n = shape(a)
    cut = np.finfo(dt).eps * builtins.max(m, n) if rcond is None else rcond
    u, s, vh = svd(a, full_matrices=False)
    big = s > max(s) * cut if builtins.min(m, n) else s > 0
    s_inv = where(big, 1 / where(big, s, 1), 0).astype(dt)
    vec = len(shape(b)) == 1
    b2 = reshape(b, (m, 1)) if vec else b
    x = matmul(_t(vh), expand_dims(s_inv, -1) * matmul(_t(u), b2))
    rank = count_nonzero(big)
    resid = sum((b2 - matmul(a, x)) ** 2, axis=0)
    if m <= n or not isinstance(rank, Tracer) and int(rank) < n:
        resid = np.zeros((0,), dt)
    x = reshape(x, (n,)) if vec else x
    return x, resid, rank, s


def multi_dot(arrays, *, out=None):
    """dot of several arrays in the order that needs the fewest multiplications (the
    matrix-chain dynamic program over the static shapes)."""
    if out is not None:
        raise ArgumentError("linalg.multi_dot: out= is not supported; use the result")
    arrays = [value(x, "multi_dot") for x in arrays]
    if len(arrays) < 2:
        raise ArgumentError("linalg.multi_dot: needs at least two arrays")
    first, last = len(shape(arrays[0])) == 1, len(shape(arrays[-1])) == 1
    if first:
        arrays[0] = reshape(arrays[0], (1, -1))
    if last:
        arrays[-1] = reshape(arrays[-1], (-1, 1))
    if any(len(shape(x)) != 2 for x in arrays):
        raise ShapeError(f"linalg.multi_dot: arrays must be 2-D (the first and last may be "
                         f"1-D), got shapes {[shape(x) for x in arrays]}")
    dims = [shape(arrays[0])[0]] + [shape(x)[1] for x in arrays]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j], split[i][j] = builtins.min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s)
                for s in range(i, j))

    def chain(i, j):
        return arrays[i] if i == j else dot(chain(i, split[i][j]), chain(split[i][j] + 1, j))
    result = chain(0, k - 1)
    if first and last:
        return reshape(result, ())
    if first or last:
        return reshape(result, (-1,))
    return result


def _vector_norm(x, ord, axis, keepdims):
    ax = abs(x)
    if ord is None or ord == 2:
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return max(ax, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum((x != 0).astype(dtype_of(x)), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(ax, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ArgumentError(f"linalg.norm: invalid norm order {ord!r} for vectors")
    return sum(ax ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    nd = len(shape(x))
    if ord in (2, -2, "nuc"):
        rest = [i for i in range(nd) if i not in (r, c)]
        from tracer.numpy.shape_ops import transpose
        s = svd(transpose(x, rest + [r, c]), compute_uv=False)
        out = max(s, axis=-1) if ord == 2 else min(s, axis=-1) if ord == -2 else \
            sum(s, axis=-1)
    elif ord in (None, "fro"):
        out = sqrt(sum(x * x, axis=axes))
    elif ord in (1, -1, np.inf, -np.inf):
        over, across = (r, c) if ord in (1, -1) else (c, r)
        sums = sum(abs(x), axis=over, keepdims=True)
        pick = max if ord in (1, np.inf) else min
        out = reshape(pick(sums, axis=across, keepdims=True),
                      tuple(d for i, d in enumerate(shape(x)) if i not in axes))
    else:
        raise ArgumentError(f"linalg.norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape(x))))
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms over one axis, matrix norms over two, as numpy.linalg.norm."""
    x = _float(x, "norm")
    nd = len(shape(x))
    if axis is None:
        if ord is None:
            out = sqrt(sum(x * x))
            return reshape(out, (1,) * nd) if keepdims else out
        if nd not in (1, 2):
            raise ShapeError(f"linalg.norm: ord={ord!r} with axis=None needs a 1-D or 2-D "
                             f"array, got shape {shape(x)}")
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if any(not -nd <= a < nd for a in axes) or len(set(a % nd for a in axes)) != len(axes):
        raise ShapeError(f"linalg.norm: invalid axis {axis!r} for shape {shape(x)}")
    axes = tuple(a % nd for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ShapeError(f"linalg.norm: axis must name one or two axes, got {axis!r}")


__all__ = ["norm", "solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh",
           "eigvalsh", "pinv", "matrix_power", "lstsq", "multi_dot", "LinAlgError"]
