"""Order statistics: quantile, percentile, median and their nan* forms, through sort and
a gather of the picked elements (so they differentiate through the values they pick; q may
be traced). Methods: NumPy's continuous ones (alpha, beta), lower, higher, nearest,
midpoint and inverted_cdf, the only one taking weights. Results have the input's float
dtype whatever q's or the method, as in JAX (NumPy widens float32 for a float64 q and gives
integers for lower/higher/nearest of integer input); `nearest` takes the lower element at
exact halves, as JAX (NumPy rounds half to even)."""
import numpy as np

from ir.errors import ArgumentValueError, ShapeError
from tracer.core import Tracer
from tracer.numpy._base import FLOAT64, convert, normalize_axes, shape, value
from tracer.numpy.bitwise import logical_not, logical_or
from tracer.numpy.elementwise import (add, divide, maximum, multiply, not_equal, subtract,
                                      where)
from tracer.numpy.reductions import INT64, any, computation, cumsum, no_out, sum
from tracer.numpy.shape_ops import broadcast_to, reshape, squeeze, transpose
from tracer.numpy.statistics import _count, _float, weights_like

_NAN = float("nan")
# NumPy's continuous methods: virtual index n*q + (alpha + q*(1 - alpha - beta)) - 1
_CONTINUOUS = {"linear": (1, 1), "weibull": (0, 0), "hazen": (0.5, 0.5),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0, 1)}
_METHODS = tuple(_CONTINUOUS) + ("lower", "higher", "nearest", "midpoint", "inverted_cdf")


def _to_last(x, axes):
    """x with the `axes` merged into one last axis."""
    rest = [i for i in range(len(shape(x))) if i not in axes]
    y = transpose(x, tuple(rest) + axes) if len(shape(x)) else x
    return reshape(y, tuple(shape(x)[i] for i in rest) + (_count(x, axes),))


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) where t >= 0.5."""
    d = subtract(b, a)
    return where(t >= 0.5, subtract(b, multiply(d, subtract(1, t))), add(a, multiply(d, t)))


def _quantile(name, a, q, axis, method, keepdims, skip_nan, weights=None):
    """The q-quantiles (q in [0, 1], any shape; its axes come first) of a's slices along
    `axis`; a slice holding NaN gives NaN, or with skip_nan its numbers are used (NaN for
    none)."""
    from tracer.numpy.indexing import take_along_axis
    from tracer.numpy.rounding import ceil, floor
    from tracer.numpy.sorting import argsort, sort
    if method not in _METHODS:
        raise ArgumentValueError(f"{name}: method must be one of {', '.join(_METHODS)}; got "
                                 f"{method!r}")
    if weights is not None and method != "inverted_cdf":
        raise ArgumentValueError(f"{name}: only method='inverted_cdf' supports weights, got "
                                 f"method={method!r}")
    a, q = value(a, name), value(q, name)
    if not isinstance(q, Tracer) and np.any((np.asarray(q) < 0) | (np.asarray(q) > 1)):
        raise ArgumentValueError(f"{name}: quantiles must be in the range [0, 1]")
    dt = _float(a)
    axes = normalize_axes(name, axis, len(shape(a)))
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape(a)))
    y = _to_last(convert(a, dt, name), axes)
    n, lead, qs = shape(y)[-1], shape(y)[:-1], shape(q)
    if n == 0:
        raise ShapeError(f"{name}: cannot take a {name} of an empty slice")
    if weights is None:
        s = sort(y, axis=-1)
    else:
        order = argsort(y, axis=-1)
        s = take_along_axis(y, order, -1)
        w = take_along_axis(_to_last(convert(weights_like(name, weights, a, axis), dt), axes),
                            order, -1)
    nan = not_equal(s, s)                                       # NaN sort last
    k = sum(logical_not(nan), axis=-1, dtype=FLOAT64, keepdims=True) if skip_nan else float(n)
    last = maximum(subtract(k, 1), 0)
    qf = reshape(convert(q, FLOAT64), qs + (1,) * (len(lead) + 1))
    sb = broadcast_to(reshape(s, (1,) * len(qs) + shape(s)), qs + shape(s))

    def pick(idx):
        idx = broadcast_to(convert(idx, INT64), qs + lead + (1,))
        return squeeze(take_along_axis(sb, idx, -1), -1)

    def clip(i):
        return where(i < 0, 0, where(i > last, last, i))

    if method == "inverted_cdf":
        ww = np.ones(shape(s), dt) if weights is None else w
        bad = logical_or(ww < 0, not_equal(ww, ww))
        cw = cumsum(where(logical_or(bad, nan), 0, ww), axis=-1)
        target = multiply(qf, cw[..., -1:])
        idx = sum(reshape(cw, (1,) * len(qs) + shape(cw)) < target, axis=-1, keepdims=True)
        res = pick(clip(idx))
    else:
        if method in _CONTINUOUS:
            alpha, beta = _CONTINUOUS[method]
            vi = subtract(add(multiply(k, qf), add(alpha, multiply(qf, 1 - alpha - beta))), 1)
        else:
            vi = multiply(subtract(k, 1), qf)
        lo, hi = floor(vi), ceil(vi)
        if method == "lower":
            res = pick(clip(lo))
        elif method == "higher":
            res = pick(clip(hi))
        elif method == "nearest":
            res = pick(clip(where(subtract(vi, lo) <= 0.5, lo, hi)))
        elif method == "midpoint":
            ct = computation(dt)        # float16's sum of two large values overflows
            res = multiply(add(convert(pick(clip(lo)), ct), convert(pick(clip(hi)), ct)), 0.5)
        else:
            gamma = convert(squeeze(broadcast_to(subtract(vi, lo), qs + lead + (1,)), -1), dt)
            res = _lerp(pick(clip(lo)), pick(clip(add(lo, 1))), gamma)
    if skip_nan:
        res = where(reshape(k == 0, lead), _NAN, res)
    else:
        res = where(any(nan, axis=-1), _NAN, res)
    if method == "inverted_cdf":
        res = where(any(bad, axis=-1), _NAN, res)
    return convert(reshape(res, qs + kept) if keepdims else res, dt, name)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    no_out("quantile", out)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    no_out("nanquantile", out)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def _percent(name, q):
    q = value(q, name)
    if not isinstance(q, Tracer) and np.any((np.asarray(q) < 0) | (np.asarray(q) > 100)):
        raise ArgumentValueError(f"{name}: percentiles must be in the range [0, 100]")
    return divide(q, 100)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    no_out("percentile", out)
    return _quantile("percentile", a, _percent("percentile", q), axis, method, keepdims,
                     False, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    no_out("nanpercentile", out)
    return _quantile("nanpercentile", a, _percent("nanpercentile", q), axis, method,
                     keepdims, True, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The mean of the middle element(s) of the sorted slice; NaN if the slice has one."""
    no_out("median", out)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-NaN numbers; an all-NaN slice gives NaN."""
    no_out("nanmedian", out)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)
