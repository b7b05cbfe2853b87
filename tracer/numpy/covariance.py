"""cov and corrcoef, composed of average, matmul and elementwise ops (so they trace,
differentiate and batch like their parts). Result dtypes follow JAX: the inputs' float
type (float64 for integers), where NumPy widens every input to float64."""
import numpy as np

from ir import check_dtype
from ir.errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from ir.types import dtype_kind
from tracer.core import Tracer
from tracer.numpy._base import FLOAT64, convert, dtype_of, result_dtype, shape, value
from tracer.numpy.elementwise import clip, divide, multiply, sqrt, subtract
from tracer.numpy.products import matmul
from tracer.numpy.reductions import computation, sum
from tracer.numpy.shape_ops import atleast_2d, concatenate, reshape, squeeze, transpose
from tracer.numpy.statistics import average


def _weights(name, w, n, integer):
    """A 1-D weight vector of n samples; concrete negative weights are refused, as NumPy
    does (JAX takes their absolute values)."""
    w = value(w, "cov")
    if len(shape(w)) != 1 or shape(w)[0] != n:
        raise ShapeError(f"cov: {name} of shape {shape(w)} must be 1-D with one weight per "
                         f"sample ({n})")
    if integer and dtype_kind(dtype_of(w)) not in "biu":
        raise DTypeError(f"cov: {name} must be integer, got {dtype_of(w)}")
    if not isinstance(w, Tracer) and np.any(np.asarray(w) < 0):
        raise ArgumentValueError(f"cov: {name} cannot be negative")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """numpy.cov. Each row of m (each column if not rowvar) is a variable, y adds more;
    the normalization is the number of samples (or the weights' sum) minus ddof (default
    1, 0 with bias). A normalization <= 0 divides as it is, as in JAX (NumPy clamps it to
    0 with a warning)."""
    m = value(m, "cov")
    ys = [] if y is None else [value(y, "cov")]
    for v, label in [(m, "m")] + [(v, "y") for v in ys]:
        if len(shape(v)) > 2:
            raise ShapeError(f"cov: {label} has more than 2 dimensions ({shape(v)})")
    if dtype is not None and dtype_kind(check_dtype(dtype, "cov")) != "f":
        raise ArgumentValueError(f"cov: dtype must be a subclass of float or complex, got "
                                 f"{np.dtype(dtype)}")
    dt = np.dtype(dtype) if dtype is not None else result_dtype("cov", m, *ys)
    dt = dt if dtype_kind(dt) == "f" else FLOAT64
    ct = computation(dt)
    x = atleast_2d(convert(m, ct, "cov"))
    if not rowvar and len(shape(m)) != 1:
        x = transpose(x)
    if shape(x)[0] == 0:
        return np.zeros((0, 0), dt)
    for v in ys:
        v = atleast_2d(convert(v, ct, "cov"))
        x = concatenate([x, transpose(v) if not rowvar and shape(v)[0] != 1 else v], axis=0)
    k, n = shape(x)
    if n == 0:
        return np.full(() if k == 1 else (k, k), np.nan, dt)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = convert(_weights("fweights", fweights, n, True), ct, "cov")
    if aweights is not None:
        a = convert(_weights("aweights", aweights, n, False), ct, "cov")
        w = a if w is None else multiply(w, a)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = float(n - ddof)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = subtract(w_sum, ddof)
    else:
        fact = subtract(w_sum, divide(multiply(sum(multiply(w, a)), ddof), w_sum))
    d = subtract(x, reshape(avg, (k, 1)))
    c = matmul(d, transpose(d if w is None else multiply(d, w)))
    return convert(squeeze(divide(c, fact)), dt, "cov")


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """numpy.corrcoef: cov scaled by the variables' standard deviations, clipped to
    [-1, 1]; a single variable gives c / c (1, or NaN for a constant one)."""
    if y is not None and not isinstance(rowvar, (bool, np.bool_)):
        raise ArgumentError("corrcoef: rowvar must be a bool")
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape(c)) == 0:
        return divide(c, c)
    from tracer.numpy.assembly import diagonal
    s = sqrt(diagonal(c))
    c = divide(divide(c, reshape(s, (-1, 1))), reshape(s, (1, -1)))
    return clip(c, -1, 1)
