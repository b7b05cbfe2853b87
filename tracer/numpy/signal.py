"""1-d signal functions of numpy 2 (issue 26): convolve correlate interp trapezoid unwrap
histogram histogram_bin_edges and the windows. Each is NumPy's formula in tracer.numpy ops
(convolve is one gather of the longer signal and a matmul with the shorter; interp and
histogram search with searchsorted), so it traces, differentiates (in the values, not in
the bin choice) and batches. Sizes are static: window lengths, bin counts and the modes'
output lengths come from shapes."""

import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, ConcretizationError, ShapeError
from ir.types import dtype_kind
from tracer.core import Tracer, as_array
from tracer.numpy._base import (FLOAT64, convert, dtype_of, normalize_axis, result_dtype,
                                shape, value)
from tracer.numpy.array_api import jax_product_keywords
from tracer.numpy.bitwise import logical_and
from tracer.numpy.creation import linspace, zeros
from tracer.numpy.elementwise import (abs, add, divide, equal, greater, greater_equal, less,
                                      less_equal, multiply, not_equal, subtract, where)
from tracer.numpy.indexing import getitem, take
from tracer.numpy.products import matmul
from tracer.numpy.reductions import amax, amin, cumsum, sum
from tracer.numpy.rounding import mod
from tracer.numpy.shape_ops import concatenate, ravel, reshape
from tracer.numpy.sorting import argsort, searchsorted
from tracer.numpy.statistics import bincount, diff

MODES = ("full", "same", "valid")


def _signals(op, a, v, precision=None, preferred_element_type=None):
    a, v = jax_product_keywords(op, (a, v), precision, preferred_element_type)
    if len(shape(a)) > 1 or len(shape(v)) > 1:
        raise ShapeError(f"{op}: a and v must be 1-d (or 0-d), got shapes {shape(a)} and "
                         f"{shape(v)}")
    a, v = reshape(a, (-1,)), reshape(v, (-1,))
    if not shape(a)[0] or not shape(v)[0]:
        raise ArgumentValueError(f"{op}: {'a' if not shape(a)[0] else 'v'} cannot be empty")
    dt = result_dtype(op, a, v)
    return convert(a, dt, op), convert(v, dt, op)


GATHER_LIMIT = 1 << 22      # elements per gathered block (NumPy's convolve needs O(n) memory)


def _convolve(op, a, v, mode):
    """The `mode` part of full[k] = sum_i s[i] l[k - i] (s the shorter signal): the window
    of l each output reads, gathered as a matrix and multiplied by s, in blocks of s so a
    long pair gathers at most GATHER_LIMIT elements at a time."""
    if mode not in MODES:
        raise ArgumentValueError(f"{op}: mode must be one of {MODES}, got {mode!r}")
    n, m = shape(a)[0], shape(v)[0]
    long_, short = (a, v) if n >= m else (v, a)
    nl, ns = max(n, m), min(n, m)
    pad = zeros(ns - 1, dtype_of(a))
    padded = concatenate([pad, long_, pad]) if ns > 1 else long_
    start, size = {"full": (0, nl + ns - 1), "same": ((ns - 1) // 2, nl),
                   "valid": (ns - 1, nl - ns + 1)}[mode]
    k = np.arange(start, start + size)[:, None]
    step = max(1, GATHER_LIMIT // size)
    out = None
    for lo in range(0, ns, step):
        i = np.arange(lo, min(ns, lo + step))[None, :]
        part = matmul(take(padded, k - i + ns - 1), getitem(short, slice(lo, lo + step)))
        out = part if out is None else add(out, part)
    return out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of 1-d a and v, as numpy.convolve (JAX's
    precision= and preferred_element_type= too)."""
    a, v = _signals("convolve", a, v, precision, preferred_element_type)
    return _convolve("convolve", a, v, mode)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation c[k] = sum_n a[n + k] v[n] of 1-d a and v, as
    numpy.correlate (a convolution with v reversed; a shorter a correlates the other way
    round and reverses, as NumPy, which moves 'same''s window)."""
    a, v = _signals("correlate", a, v, precision, preferred_element_type)
    rev = slice(None, None, -1)
    if shape(a)[0] < shape(v)[0]:
        return getitem(_convolve("correlate", v, getitem(a, rev), mode), rev)
    return _convolve("correlate", a, getitem(v, rev), mode)


def interp(x, xp, fp, left=None, right=None, period=None):
    """The piecewise-linear interpolant of (xp, fp) at x, as numpy.interp: float64,
    left/right (default fp[0]/fp[-1]) outside xp, `period` for angles."""
    x, xp, fp = (convert(value(t, "interp"), FLOAT64, "interp") for t in (x, xp, fp))
    if len(shape(xp)) != 1 or shape(xp) != shape(fp):
        raise ShapeError(f"interp: xp and fp must be 1-d sequences of one length, got "
                         f"shapes {shape(xp)} and {shape(fp)}")
    if not shape(xp)[0]:
        raise ArgumentValueError("interp: array of sample points (xp) is empty")
    if period is not None:
        if not isinstance(period, Tracer) and period == 0:
            raise ArgumentValueError("interp: period must be a non-zero value")
        period = abs(value(period, "interp"))
        left = right = None
        x, xp = mod(x, period), mod(xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([subtract(getitem(xp, slice(-1, None)), period), xp,
                          add(getitem(xp, slice(0, 1)), period)])
        fp = concatenate([getitem(fp, slice(-1, None)), fp, getitem(fp, slice(0, 1))])
    n = shape(xp)[0]
    if n == 1:
        mid = where(equal(x, getitem(xp, 0)), getitem(fp, 0), getitem(fp, 0))
    else:
        j = subtract(searchsorted(xp, x, side="right"), 1)
        j = where(less(j, 0), 0, where(greater(j, n - 2), n - 2, j))
        x0, x1 = take(xp, j), take(xp, add(j, 1))
        f0, f1 = take(fp, j), take(fp, add(j, 1))
        slope = divide(subtract(f1, f0), subtract(x1, x0))
        mid = add(multiply(slope, subtract(x, x0)), f0)
        back = add(multiply(slope, subtract(x, x1)), f1)       # NumPy's NaN fallbacks
        mid = where(not_equal(mid, mid), where(equal(f0, f1), f0, back), mid)
        mid = where(equal(x, x0), f0, where(equal(x, getitem(xp, -1)), getitem(fp, -1), mid))
    lo = getitem(fp, 0) if left is None else convert(value(left, "interp"), FLOAT64)
    hi = getitem(fp, -1) if right is None else convert(value(right, "interp"), FLOAT64)
    out = where(less(x, getitem(xp, 0)), lo, where(greater(x, getitem(xp, -1)), hi, mid))
    return out if n == 1 else where(not_equal(x, x), x, out)   # NaN x: NaN, as NumPy


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along `axis` by the trapezoidal rule, as numpy.trapezoid."""
    y = value(y, "trapezoid")
    if not shape(y):
        raise ShapeError("trapezoid: y must have at least one axis")
    ax = normalize_axis("trapezoid", axis, len(shape(y)))
    if x is None:
        d = dx
    else:
        x = value(x, "trapezoid")
        d = diff(x, axis=axis)
        if len(shape(x)) == 1:
            d = reshape(d, tuple(-1 if i == ax else 1 for i in range(len(shape(y)))))
    n = shape(y)[ax]
    head = getitem(y, (slice(None),) * ax + (slice(1, None),))
    tail = getitem(y, (slice(None),) * ax + (slice(None, n - 1 if n else 0),))
    return sum(divide(multiply(d, add(head, tail)), 2.0), axis=ax)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """p with jumps larger than discont (default period / 2) along `axis` corrected by
    multiples of period, as numpy.unwrap (integer p with integer period stays integer)."""
    p = value(p, "unwrap")
    if not shape(p):
        raise ShapeError("unwrap: p must have at least one axis")
    ax = normalize_axis("unwrap", axis, len(shape(p)))
    dd = diff(p, axis=ax)
    if discont is None:
        discont = divide(period, 2) if isinstance(period, Tracer) else period / 2
    integer = dtype_kind(result_dtype("unwrap", dd, period)) in "iu"
    if integer:
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = divide(period, 2) if isinstance(period, Tracer) else period / 2, True
    low = multiply(high, -1) if isinstance(high, Tracer) else -high
    ddmod = add(mod(subtract(dd, low), period), low)
    if ambiguous:
        ddmod = where(logical_and(equal(ddmod, low), greater(dd, 0)), high, ddmod)
    fix = where(less(abs(dd), discont), 0, subtract(ddmod, dd))
    first = getitem(p, (slice(None),) * ax + (slice(0, 1),))
    rest = add(getitem(p, (slice(None),) * ax + (slice(1, None),)), cumsum(fix, axis=ax))
    dt = result_dtype("unwrap", dd, period)
    return concatenate([convert(first, dt), convert(rest, dt)], axis=ax)


def _outer_edges(a, rng):
    """(first, last) edges: `range`, or a's min and max (0, 1 for an empty a), widened
    by 0.5 each way when equal, as NumPy."""
    if rng is not None:
        first, last = rng
        if not any(isinstance(e, Tracer) for e in (first, last)):
            if first > last:
                raise ArgumentValueError("histogram: max must be larger than min in range "
                                         "parameter")
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ArgumentValueError(f"histogram: supplied range of [{first}, {last}] "
                                         f"is not finite")
    elif not shape(a)[0]:
        first, last = 0, 1
    else:
        first, last = amin(a), amax(a)
        if not isinstance(a, Tracer) and not (np.isfinite(first) and np.isfinite(last)):
            raise ArgumentValueError(f"histogram: autodetected range of [{first}, {last}] "
                                     f"is not finite (NaN or inf in a); pass range=")
    if isinstance(first, Tracer) or isinstance(last, Tracer):
        same = equal(first, last)
        return where(same, subtract(first, 0.5), first), where(same, add(last, 0.5), last)
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges numpy.histogram uses: `bins` + 1 even edges over `range` (default
    a's min and max), or `bins` itself; NumPy's estimators ('auto', 'fd', ...) eagerly."""
    a = ravel(value(a, "histogram_bin_edges"))
    if isinstance(bins, str):
        if isinstance(a, Tracer) or isinstance(weights, Tracer):
            raise ConcretizationError(f"histogram_bin_edges: bins={bins!r} picks the bin "
                                      f"count from the data; under tracing pass an int or "
                                      f"the edges")
        return as_array(np.histogram_bin_edges(a, bins, range, weights), "histogram")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ArgumentValueError(f"histogram: bins must be a positive integer, got {bins}")
        first, last = _outer_edges(a, range)
        dt = result_dtype("histogram", *[e if isinstance(e, Tracer) else
                                         (np.asarray(e) if isinstance(e, np.generic) else e)
                                         for e in (first, last)], a)
        if dtype_kind(dt) not in "f":
            dt = FLOAT64
        return linspace(first, last, int(bins) + 1, dtype=dt)
    edges = value(bins, "histogram")
    if len(shape(edges)) != 1:
        raise ShapeError(f"histogram: bins must be an int, a string or a 1-d array of edges, "
                         f"got shape {shape(edges)}")
    if not isinstance(edges, Tracer) and np.any(edges[:-1] > edges[1:]):
        raise ArgumentValueError("histogram: bins must increase monotonically, when an array")
    return edges


def histogram(a, bins=10, range=None, density=None, weights=None):
    """(counts, edges) as numpy.histogram: bin i holds edges[i] <= a < edges[i + 1], the
    last one its right edge too; values outside the edges are left out. Counts are int64,
    or of the weights' dtype, or float64 densities."""
    a = ravel(value(a, "histogram"))
    edges = histogram_bin_edges(a, bins, range, weights)
    nb = shape(edges)[0] - 1
    if weights is not None:
        weights = ravel(value(weights, "histogram"))
        if shape(weights) != shape(a):
            raise ShapeError(f"histogram: weights should have the same shape as a, got "
                             f"{shape(weights)} and {shape(a)}")
    idx = subtract(searchsorted(edges, a, side="right"), 1)
    idx = where(equal(a, getitem(edges, -1)), nb - 1, idx)
    inside = logical_and(greater_equal(a, getitem(edges, 0)),
                         less_equal(a, getitem(edges, -1)))
    idx = where(inside, idx, nb)
    counts = getitem(bincount(idx, weights, length=nb + 1), slice(0, nb))
    if weights is not None:
        counts = convert(counts, dtype_of(weights), "histogram")
    if density:
        width = convert(diff(edges), FLOAT64, "histogram")
        counts = convert(counts, FLOAT64, "histogram")
        counts = divide(divide(counts, width), sum(counts))
    return counts, edges


def _window(name, M, np_fn):
    M = operator_index(name, M)
    return as_array(np_fn(M), name)


def operator_index(name, M, what="M (the number of points)"):
    """M as a Python int: a static length that fixes the result's shape."""
    if isinstance(M, Tracer) or isinstance(M, bool):
        raise ArgumentError(f"{name}: {what} must be a static int, got "
                            f"{type(M).__name__}; it fixes the result's shape")
    try:
        m = np.asarray(M).item() if np.ndim(M) == 0 else _bad_m(name, M, what)
        return int(m) if int(m) == m else _bad_m(name, M, what)
    except (TypeError, ValueError, OverflowError):
        return _bad_m(name, M, what)


def _bad_m(name, M, what):
    raise ArgumentError(f"{name}: {what} must be an int, got {M!r}")


def bartlett(M):
    """The Bartlett (triangular) window of M points (static), as numpy.bartlett."""
    return _window("bartlett", M, np.bartlett)


def blackman(M):
    """The Blackman window of M points (static), as numpy.blackman."""
    return _window("blackman", M, np.blackman)


def hamming(M):
    """The Hamming window of M points (static), as numpy.hamming."""
    return _window("hamming", M, np.hamming)


def hanning(M):
    """The Hann window of M points (static), as numpy.hanning."""
    return _window("hanning", M, np.hanning)


def kaiser(M, beta):
    """The Kaiser window of M points (static) and shape `beta` (which may be traced, and
    is differentiable), as numpy.kaiser."""
    M = operator_index("kaiser", M)
    if not isinstance(beta, Tracer):
        return as_array(np.kaiser(M, beta), "kaiser")
    from tracer.numpy.number_funcs import i0
    if M == 1:
        return np.ones(1)
    beta = convert(beta, FLOAT64, "kaiser")
    n = np.arange(0, M)
    alpha = (M - 1) / 2.0
    return divide(i0(multiply(beta, np.sqrt(1 - ((n - alpha) / alpha) ** 2.0))), i0(beta))
