"""Statistics as composites of reductions and where: average, var/std, the nan* family
(NaN masked out with where, so their gradients skip the NaN entries), trace, diff and
gradient (order statistics are in quantiles.py). Result dtypes follow NumPy 2 (integer
inputs give float64); bincount is a scatter-add."""
import operator

import numpy as np

from ir import check_dtype
from ir.errors import (ArgumentError, ArgumentValueError, ConcretizationError, DTypeError,
                       ShapeError)
from ir.types import dtype_kind
from tracer.core import Tracer, run_kernel
from tracer.numpy._base import (FLOAT64, convert, dtype_of, fresh, held, normalize_axes,
                                normalize_axis, result_dtype, shape, value)
from tracer.numpy.bitwise import logical_and, logical_not
from tracer.numpy.creation import zeros
from tracer.numpy.elementwise import (add, divide, less, maximum, multiply, not_equal,
                                      sqrt, subtract, where as where_)
from tracer.numpy.reductions import (_reduce, accumulator, all, argmax, argmin,
                                     check_where, computation, mean, no_out, sum)
from tracer.numpy.shape_ops import concatenate, ravel, reshape, transpose

_NAN = float("nan")


def _isnan(x):
    return not_equal(x, x)


def _float(x):
    return dtype_of(x) if dtype_kind(dtype_of(x)) == "f" else FLOAT64


def _count(x, axes):
    return int(np.prod([shape(x)[a] for a in axes], dtype=np.int64))


def weights_like(name, w, a, axis):
    """Weights for a's elements: of a's shape, or of the reduced axes' shape in the order
    `axis` names them (JAX's N-D weights), reshaped to broadcast against a."""
    w = value(w, name)
    if shape(w) == shape(a):
        return w
    order = [normalize_axis(name, ax, len(shape(a))) for ax in
             (() if axis is None else axis if isinstance(axis, (tuple, list)) else (axis,))]
    if axis is None or shape(w) != tuple(shape(a)[ax] for ax in order):
        raise ShapeError(f"{name}: weights of shape {shape(w)} fit neither a's shape "
                         f"{shape(a)} nor the reduced axes {axis}: give weights of either "
                         f"shape")
    w = transpose(w, tuple(np.argsort(order)))
    return reshape(w, tuple(d if i in order else 1 for i, d in enumerate(shape(a))))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """numpy.average; weights have a's shape, or the shape of the averaged axes in the
    order `axis` names them (JAX's N-D weights; NumPy takes 1-D ones only)."""
    a = value(a, "average")
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        scl = np.asarray(float(_count(a, normalize_axes("average", axis, len(shape(a))))),
                         dtype_of(avg))
        return (avg, np.broadcast_to(scl, shape(avg)).copy()) if returned else avg
    w = value(weights, "average")
    ints = dtype_kind(dtype_of(a)) in "biu"
    dt = result_dtype("average", a, w, *([np.float64(0)] if ints else []))
    w = weights_like("average", w, a, axis)
    ct = computation(dt)
    a, w = convert(a, ct, "average"), convert(w, ct, "average")
    scl = sum(multiply(w, np.ones(shape(a), ct)), axis=axis, keepdims=keepdims)
    avg = convert(divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), scl), dt)
    return (avg, convert(scl, dt)) if returned else avg


def _moments(name, a, axis, dtype, ddof, keepdims, where, mean, skip_nan):
    """var and nanvar: squared deviations from the mean (given, or of the kept elements:
    `where` and, for nanvar, not NaN) summed over the kept elements and divided by their
    count minus ddof. A slice with count - ddof <= 0 gives NaN, as in JAX (NumPy gives inf
    or NaN with a warning). One element's deviation from its own mean is identically zero,
    so it is held constant: std over length-1 axes (ddof < 1) has the exact derivative 0,
    not sqrt'(0) * 0 = NaN as in JAX (autograd and finite differences give 0)."""
    from tracer.numpy.shape_ops import broadcast_to
    a = value(a, name)
    where = check_where(name, where)
    dt = check_dtype(dtype, name) if dtype is not None else _float(a)
    ct = computation(dt)
    x = convert(a, ct, name)
    axes = normalize_axes(name, axis, len(shape(x)))
    keep = where
    if skip_nan and dtype_kind(dtype_of(a)) == "f":
        nan = _isnan(x)
        x, keep = where_(nan, 0, x), logical_not(nan) if where is None else \
            logical_and(where, logical_not(nan))
    if keep is None:
        n = float(_count(x, axes))
    else:
        n = sum(broadcast_to(keep, shape(x)), axis=axes, dtype=ct, keepdims=True)
    m = divide(sum(x, axis=axes, keepdims=True, where=keep), n) if mean is None else \
        convert(value(mean, name), ct, name)
    d = subtract(x, m)
    if keep is None and mean is None and n == 1 and ddof < 1:
        d = held(d)
    ss = sum(multiply(d, d), axis=axes, keepdims=keepdims, where=keep)
    if keep is None:
        return convert(divide(ss, n - ddof) if n - ddof > 0 else multiply(ss, _NAN), dt, name)
    dof = subtract(n if keepdims else reshape(n, shape(ss)), ddof)
    return convert(where_(dof > 0, divide(ss, where_(dof > 0, dof, 1)), _NAN), dt, name)


def _ddof(name, ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ArgumentValueError(f"{name}: ddof and correction can't be provided "
                                 f"simultaneously; pass one")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    no_out("var", out)
    return _moments("var", a, axis, dtype, _ddof("var", ddof, correction), keepdims, where,
                    mean, False)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    no_out("std", out)
    return sqrt(_moments("std", a, axis, dtype, _ddof("std", ddof, correction), keepdims,
                         where, mean, False))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    """As numpy.nanvar: NaN dropped; slices with no more than ddof numbers give NaN."""
    no_out("nanvar", out)
    return _moments("nanvar", a, axis, dtype, _ddof("nanvar", ddof, correction), keepdims,
                    where, mean, True)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    no_out("nanstd", out)
    return sqrt(_moments("nanstd", a, axis, dtype, _ddof("nanstd", ddof, correction),
                         keepdims, where, mean, True))


def _masked(a, name, fill):
    """(a with NaN replaced by `fill`, the NaN mask or None for non-float a)."""
    a = value(a, name)
    if dtype_kind(dtype_of(a)) != "f":
        return a, None
    nan = _isnan(a)
    return where_(nan, fill, a), nan


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    no_out("nansum", out)
    return _reduce("reduce_sum", "nansum", _masked(a, "nansum", 0)[0], axis, keepdims,
                   dtype, accumulator, where, initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    no_out("nanprod", out)
    return _reduce("reduce_prod", "nanprod", _masked(a, "nanprod", 1)[0], axis, keepdims,
                   dtype, accumulator, where, initial)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """The sum of the numbers `where` keeps over their count (NaN for none)."""
    no_out("nanmean", out)
    x, nan = _masked(a, "nanmean", 0)
    if nan is None:
        return mean(x, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    where = check_where("nanmean", where)
    axes = normalize_axes("nanmean", axis, len(shape(x)))
    dt = check_dtype(dtype, "nanmean") if dtype is not None else dtype_of(x)
    tot = sum(x, axis=axes, dtype=computation(dt), keepdims=keepdims, where=where)
    cnt = sum(logical_not(nan), axis=axes, dtype=computation(dt), keepdims=keepdims,
              where=where)
    return convert(divide(tot, cnt), dt, "nanmean")


def _nan_extreme(kernel, fill, name, a, axis, keepdims, initial, where):
    """nanmax/nanmin: NaN become `fill`; an all-NaN slice gives NaN unless `initial` is
    given (then it gives initial, as NumPy's fmax and JAX)."""
    x, nan = _masked(a, name, fill)
    out = _reduce(kernel, name, x, axis, keepdims, where=where, initial=initial)
    if nan is None or initial is not None:
        return out
    return where_(all(nan, axis=axis, keepdims=keepdims), _NAN, out)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    no_out("nanmax", out)
    return _nan_extreme("reduce_max", -np.inf, "nanmax", a, axis, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    no_out("nanmin", out)
    return _nan_extreme("reduce_min", np.inf, "nanmin", a, axis, keepdims, initial, where)


def _nan_arg(reduce, fill, name, a, axis, keepdims):
    x, nan = _masked(a, name, fill)
    if nan is not None and not isinstance(nan, Tracer) and np.any(
            np.all(nan, axis=axis) if shape(nan) else nan):
        raise ArgumentError(f"{name}: All-NaN slice encountered")
    return reduce(x, axis=axis, keepdims=keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    no_out("nanargmax", out)
    return _nan_arg(argmax, -np.inf, "nanargmax", a, axis, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    no_out("nanargmin", out)
    return _nan_arg(argmin, np.inf, "nanargmin", a, axis, keepdims)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    no_out("trace", out)
    from tracer.numpy.assembly import diagonal
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference; bool arrays give not_equal, as in NumPy."""
    from tracer.numpy.indexing import getitem
    a = given = value(a, "diff")
    if len(shape(a)) == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    ax = normalize_axis("diff", axis, len(shape(a)))
    if prepend is not None or append is not None:
        from tracer.numpy.shape_ops import broadcast_to

        def edge(e):
            e = value(e, "diff")
            return e if shape(e) else broadcast_to(e, shape(a)[:ax] + (1,) + shape(a)[ax + 1:])
        a = concatenate(([edge(prepend)] if prepend is not None else []) + [a] +
                        ([edge(append)] if append is not None else []), axis=ax)
    lo = (slice(None),) * ax + (slice(1, None),)
    hi = (slice(None),) * ax + (slice(None, -1),)
    for _ in range(n):
        x1, x0 = getitem(a, lo), getitem(a, hi)
        a = not_equal(x1, x0) if dtype_kind(dtype_of(a)) == "b" else subtract(x1, x0)
    return fresh(a, given)


def ediff1d(ary, to_end=None, to_begin=None):
    a = ravel(value(ary, "ediff1d"))
    parts = [ravel(convert(value(to_begin, "ediff1d"), dtype_of(a)))] if to_begin is not None \
        else []
    parts.append(diff(a))
    if to_end is not None:
        parts.append(ravel(convert(value(to_end, "ediff1d"), dtype_of(a))))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient with uniform spacings (scalars): central differences inside,
    one-sided differences of order `edge_order` at the edges."""
    from tracer.numpy.indexing import getitem
    f = value(f, "gradient")
    nd = len(shape(f))
    axes = normalize_axes("gradient", axis, nd)
    dx = list(varargs) if len(varargs) > 1 else list(varargs) * len(axes) or [1.0] * len(axes)
    if len(dx) != len(axes) or any(np.ndim(d) for d in dx):
        raise ArgumentError("gradient: give one scalar spacing, or one per axis "
                            "(coordinate arrays are not supported)")
    f = convert(f, _float(f), "gradient")
    outs = []
    for ax, h in zip(axes, dx):
        n = shape(f)[ax]
        if n < edge_order + 1:
            raise ShapeError("gradient: the shape of the array is too small to calculate a "
                             "numerical gradient; at least (edge_order + 1) elements are "
                             "required")

        def sl(s, ax=ax):
            return getitem(f, (slice(None),) * ax + (s,))
        mid = divide(subtract(sl(slice(2, None)), sl(slice(None, -2))), 2.0 * h)
        if edge_order == 1:
            first = divide(subtract(sl(slice(1, 2)), sl(slice(0, 1))), h)
            last = divide(subtract(sl(slice(-1, None)), sl(slice(-2, -1))), h)
        else:
            first = divide(add(add(multiply(sl(slice(0, 1)), -1.5), multiply(sl(slice(1, 2)),
                                                                                2.0)),
                               multiply(sl(slice(2, 3)), -0.5)), h)
            last = divide(add(add(multiply(sl(slice(-3, -2)), 0.5),
                                  multiply(sl(slice(-2, -1)), -2.0)),
                              multiply(sl(slice(-1, None)), 1.5)), h)
        outs.append(concatenate([first, mid, last], axis=ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Occurrences of each value of a 1-D array of non-negative integers (or the sum of
    their weights): int64 counts, float64 sums, as NumPy's. JAX's `length=` fixes the
    result's size (values past it are dropped, negative ones count as 0, as in JAX); a
    traced `x` needs it, as the size depends on its largest value."""
    x = value(x, "bincount")
    if dtype_kind(dtype_of(x)) not in "biu":
        raise DTypeError(f"bincount: x must be an integer array, got {dtype_of(x)}; "
                         f"cast it with astype(int)")
    if len(shape(x)) != 1:
        raise ShapeError(f"bincount: x must be 1-D, got shape {shape(x)}; ravel it first")
    minlength = operator.index(minlength)
    if minlength < 0 or (length is not None and operator.index(length) < 0):
        raise ArgumentValueError(f"bincount: minlength and length must not be negative, "
                                 f"got {minlength} and {length}")
    if length is None:
        if isinstance(x, Tracer):
            raise ConcretizationError(
                "bincount: the result's size depends on the largest value of a traced x; "
                "pass length= (a Python int), as in JAX")
        if np.any(x < 0):
            raise ArgumentValueError("bincount: x must have no negative elements")
        length = max(minlength, int(x.max()) + 1 if x.size else 0)
    if weights is None:
        dt, w = np.dtype(np.int64), None
    else:
        dt, w = FLOAT64, convert(value(weights, "bincount"), FLOAT64, "bincount")
        if shape(w) != shape(x):
            raise ShapeError(f"bincount: weights of shape {shape(w)} must have x's shape "
                             f"{shape(x)}")
    w = zeros(shape(x), dt) + 1 if w is None else w
    ids = maximum(convert(x, np.int64, "bincount"), 0)
    ids = where_(less(ids, length), ids, length)    # past the end: a spare slot, dropped
    # the scatter kernel (tracer.lax.scatters registers it), by name: tracer.numpy does not
    # import tracer.lax, which builds on it
    counts = run_kernel("scatter", [zeros(length + 1, dt), w, ids], {"how": "add"})
    return counts[:length]
