"""numpy's poly* functions on coefficient arrays, highest power first (issue 26): each
is NumPy's own formula in tracer.numpy ops (Horner for polyval, convolve for polymul,
least squares on a scaled Vandermonde matrix for polyfit), so it traces and
differentiates in the coefficients and points. Lengths are static (from shapes). (Not
named polynomial: tnp.polynomial would read as numpy.polynomial's classes.)"""
import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, ShapeError
from tracer.core import Tracer
from tracer.numpy._base import convert, dtype_of, result_dtype, shape, value
from tracer.numpy.creation import ones, zeros, zeros_like
from tracer.numpy.elementwise import add, divide, multiply, sqrt, subtract
from tracer.numpy.indexing import getitem
from tracer.numpy.reductions import cumprod, sum
from tracer.numpy.shape_ops import broadcast_to, concatenate, expand_dims, reshape
from tracer.numpy.signal import convolve


def _coefficients(op, p):
    p = value(p, op)
    if len(shape(p)) > 1:
        raise ShapeError(f"{op}: coefficients must be 1-d (highest power first), got shape "
                         f"{shape(p)}")
    return reshape(p, (-1,))


def polyval(p, x, *, unroll=16):
    """p[0] * x**(N-1) + ... + p[N-1] by Horner's scheme, as numpy.polyval (JAX's
    `unroll` is accepted: the loop here is always unrolled into the graph)."""
    p = _coefficients("polyval", p)
    y = zeros_like(value(x, "polyval"))
    for i in range(shape(p)[0]):
        y = add(multiply(y, x), getitem(p, i))
    return y


def _aligned(op, a1, a2):
    a, b = _coefficients(op, a1), _coefficients(op, a2)
    dt = result_dtype(op, a, b)
    a, b = convert(a, dt, op), convert(b, dt, op)
    n = max(shape(a)[0], shape(b)[0])
    pad = [zeros(n - shape(c)[0], dt) for c in (a, b)]
    return (concatenate([pad[0], a]) if shape(a)[0] < n else a,
            concatenate([pad[1], b]) if shape(b)[0] < n else b)


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros)."""
    return add(*_aligned("polyadd", a1, a2))


def polysub(a1, a2):
    """The difference of two polynomials (the shorter padded with leading zeros)."""
    return subtract(*_aligned("polysub", a1, a2))


def polymul(a1, a2):
    """The product of two polynomials: the convolution of their coefficients."""
    return convolve(_coefficients("polymul", a1), _coefficients("polymul", a2))


def _order(op, m):
    if isinstance(m, Tracer) or isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise ArgumentError(f"{op}: the order m must be a static int, got {m!r}")
    if m < 0:
        raise ArgumentValueError(f"{op}: order of derivative/integral must be positive "
                                 f"(see polyint/polyder), got {m}")
    return int(m)


def polyder(p, m=1):
    """The m-th derivative's coefficients, as numpy.polyder."""
    m = _order("polyder", m)
    p = _coefficients("polyder", p)
    for _ in range(m):
        n = shape(p)[0] - 1
        p = multiply(getitem(p, slice(0, max(n, 0))), np.arange(n, 0, -1))
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative's coefficients, with integration constants k (highest
    order first; default 0), as numpy.polyint."""
    m = _order("polyint", m)
    p = _coefficients("polyint", p)
    if k is None:
        k = np.zeros(m)
    k = value(k, "polyint")
    if not shape(k):
        k = broadcast_to(k, (m,))
    elif shape(k)[0] != m:
        raise ArgumentValueError(f"polyint: k must be a scalar or a rank-1 array of length "
                                 f"m = {m}, got shape {shape(k)}")
    for i in range(m):
        n = shape(p)[0]
        p = concatenate([divide(p, np.arange(n, 0, -1)), reshape(getitem(k, i), (1,))])
    return p


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-d x, columns x**(N-1) ... x**0 (reversed when
    increasing), as numpy.vander: products accumulated, so 0**0 is 1."""
    x = value(x, "vander")
    if len(shape(x)) != 1:
        raise ShapeError(f"vander: x must be a one-dimensional array or sequence, got "
                         f"shape {shape(x)}")
    n = shape(x)[0] if N is None else int(N)
    if n < 0:
        raise ArgumentValueError(f"vander: N must be non-negative, got {N}")
    dt = result_dtype("vander", x, np.zeros((), np.int64))
    x = convert(x, dt, "vander")
    if n == 0:
        return zeros((shape(x)[0], 0), dt)
    cols = concatenate([ones((shape(x)[0], 1), dt),
                        broadcast_to(expand_dims(x, 1), (shape(x)[0], n - 1))], axis=1)
    v = cumprod(cols, axis=1)
    return v if increasing else getitem(v, (slice(None), slice(None, None, -1)))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through (x, y), highest power first,
    as numpy.polyfit (y may be 2-d: one fit per column). full=True also returns
    (residuals, rank, singular values, rcond); cov= is not supported."""
    from tracer.numpy import linalg
    if cov:
        raise ArgumentError("polyfit: cov= is not supported; compute it from the residuals "
                            "of full=True")
    deg = int(deg)
    if deg < 0:
        raise ArgumentValueError(f"polyfit: expected deg >= 0, got {deg}")
    x, y = add(value(x, "polyfit"), 0.0), add(value(y, "polyfit"), 0.0)   # floats, as NumPy
    if len(shape(x)) != 1 or not shape(x)[0]:
        raise ShapeError(f"polyfit: expected a non-empty 1-d x, got shape {shape(x)}")
    if len(shape(y)) not in (1, 2) or shape(y)[0] != shape(x)[0]:
        raise ShapeError(f"polyfit: expected y of 1 or 2 dimensions with x's length "
                         f"{shape(x)[0]}, got shape {shape(y)}")
    order = deg + 1
    if rcond is None:
        rcond = shape(x)[0] * np.finfo(np.dtype(dtype_of(x))).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = value(w, "polyfit")
        if shape(w) != shape(x):
            raise ShapeError(f"polyfit: expected w of x's shape {shape(x)}, got {shape(w)}")
        lhs = multiply(lhs, expand_dims(w, 1))
        rhs = multiply(rhs, w if len(shape(y)) == 1 else expand_dims(w, 1))
    scale = sqrt(sum(multiply(lhs, lhs), axis=0))
    lhs = divide(lhs, scale)
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = divide(c, scale if len(shape(c)) == 1 else expand_dims(scale, 1))
    return (c, resids, rank, s, rcond) if full else c
