"""Sorting and searching. One kernel, `argsort` (stable, NaN last, as NumPy); `sort` is
`take_along_axis(x, argsort(x))`, so it differentiates through the values it picks.
Functions whose output shape depends on the data (nonzero, argwhere, flatnonzero,
unique) work eagerly; under tracing nonzero-style ones take JAX's `size=`/`fill_value=`.
"""
import numpy as np

from ir.errors import ArgumentError, ConcretizationError, OutOfBoundsError, ShapeError
from tracer.core import Tracer, as_array, run_kernel
from tracer.numpy._base import convert, dtype_of, no_out, normalize_axis, shape, value
from tracer.numpy.indexing import take, take_along_axis
from tracer.numpy.shape_ops import ravel, reshape


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Stable whatever `kind` says (NumPy leaves ties unspecified for the default)."""
    a = value(a, "argsort")
    if order is not None:
        raise ArgumentError("argsort: order= (structured arrays) is not supported")
    if axis is None:
        a, axis = ravel(a), 0
    if not shape(a):
        return as_array(np.zeros((), np.int64), "argsort") if not isinstance(a, Tracer) \
            else reshape(run_kernel("argsort", [reshape(a, (1,))], {"axis": 0}), ())
    return run_kernel("argsort", [a], {"axis": normalize_axis("argsort", axis, len(shape(a)))})


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    a = value(a, "sort")
    if axis is None:
        a, axis = ravel(a), -1
    if not shape(a):
        raise ArgumentError("sort: axis out of bounds for a 0-d array (use axis=None)")
    return take_along_axis(a, argsort(a, axis), axis)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A sorted array is a valid partition for every kth."""
    return sort(a, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return argsort(a, axis)


def lexsort(keys, axis=-1):
    """Indices sorting by the last key, then the one before, ... (stable sorts from the
    first key to the last)."""
    keys = [value(k, "lexsort") for k in keys]
    if not keys:
        raise ArgumentError("lexsort: need at least one key")
    idx = argsort(keys[0], axis)
    for k in keys[1:]:
        idx = take_along_axis(idx, argsort(take_along_axis(k, idx, axis), axis), axis)
    return idx


def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of v in sorted 1-D a: the count of a's elements < v (left) or
    <= v (right), a comparison per pair (fine for the sizes searched inside a graph), in
    sort's order: NaN after everything, as NumPy and JAX."""
    from tracer.numpy.bitwise import logical_and, logical_not, logical_or
    from tracer.numpy.elementwise import less, less_equal
    from tracer.numpy.predicates import isnan
    from tracer.numpy.reductions import sum
    from tracer.numpy.shape_ops import expand_dims
    from tracer.numpy._base import result_dtype
    a, v = value(a, "searchsorted"), value(v, "searchsorted")
    if len(shape(a)) != 1:
        raise ArgumentError(f"searchsorted: a must be 1-D, got shape {shape(a)}")
    if side not in ("left", "right"):
        raise ArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = take(a, sorter)
    dt = result_dtype("searchsorted", a, v)
    a, v = convert(a, dt, "searchsorted"), convert(v, dt, "searchsorted")
    v = expand_dims(v, -1)
    cmp = (less if side == "left" else less_equal)(a, v)
    if np.dtype(dt).kind not in "biu":
        nan = isnan(v) if side == "right" else logical_and(isnan(v), logical_not(isnan(a)))
        cmp = logical_or(cmp, nan)
    return sum(cmp, axis=-1, dtype=np.int64)


def _data_dependent(name, size):
    if size is None:
        raise ConcretizationError(f"{name}: the result's shape depends on the data; under "
                                  f"tracing pass size= (and optionally fill_value=), as in JAX")


def flatnonzero(a, *, size=None, fill_value=None):
    """Flat indices of the non-zero elements. With `size`, the first `size` of them,
    padded with `fill_value` (default 0)."""
    from tracer.numpy.elementwise import equal, where
    a = ravel(value(a, "flatnonzero"))
    if not isinstance(a, Tracer) and size is None:
        return as_array(np.flatnonzero(a).astype(np.int64), "flatnonzero")
    _data_dependent("flatnonzero", size)
    from tracer.numpy.shape_ops import concatenate
    zero = equal(a, 0)
    order = argsort(zero)                       # stable: non-zero positions first, in order
    szero = take(zero, order)
    if size > shape(a)[0]:
        pad = size - shape(a)[0]
        order = concatenate([order, np.zeros(pad, np.int64)])
        szero = concatenate([szero, np.ones(pad, bool)])
    first = np.arange(size)
    return where(take(szero, first), 0 if fill_value is None else fill_value,
                 take(order, first))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` (of `a` flattened when None) where the 1-d `condition`
    is true; a condition shorter than the axis selects from its start. With `size` (which a
    traced condition needs, as in JAX) the first `size` slices, padded with fill_value."""
    no_out("compress", out)
    return _compress("compress", condition, a, axis, size, fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of `arr` (flattened) where `condition` (flattened) is true."""
    return _compress("extract", ravel(value(condition, "extract")), arr, None, size,
                     fill_value)


def _compress(op, condition, a, axis, size, fill_value):
    from tracer.numpy.shape_ops import broadcast_to, concatenate
    a, cond = value(a, op), value(condition, op)
    if axis is None:
        a, axis = ravel(a), 0
    ax = normalize_axis(op, axis, len(shape(a)))
    n = shape(a)[ax]
    if len(shape(cond)) != 1:
        raise ShapeError(f"{op}: condition must be 1-d, got shape {shape(cond)}")
    if shape(cond)[0] > n:
        if isinstance(cond, Tracer) or np.any(cond[n:]):
            raise OutOfBoundsError(f"{op}: condition of length {shape(cond)[0]} selects "
                                   f"past axis {ax} of size {n} (a traced one may not be "
                                   f"longer than the axis)")
        cond = cond[:n]
    if isinstance(cond, Tracer):
        _data_dependent(op, size)
    if size is None:
        return take(a, flatnonzero(cond), axis=ax)
    pad = shape(a)[:ax] + (1,) + shape(a)[ax + 1:]      # the fill slot, at index n
    fill = broadcast_to(convert(value(fill_value, op), dtype_of(a), op), pad)
    return take(concatenate([a, fill], axis=ax), flatnonzero(cond, size=size, fill_value=n),
                axis=ax)


def _floordiv(x, k):
    return run_kernel("div", [x, np.full(shape(x), k, np.int64)])


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one array per axis."""
    a = value(a, "nonzero")
    if not shape(a):
        raise ArgumentError("nonzero: calling nonzero on 0d arrays is not allowed; use "
                            "atleast_1d(a).nonzero()")
    if not isinstance(a, Tracer) and size is None:
        return tuple(as_array(i.astype(np.int64), "nonzero") for i in np.nonzero(a))
    from tracer.numpy.elementwise import multiply, subtract, where
    flat = flatnonzero(a, size=size, fill_value=-1)
    strides = np.cumprod((1,) + shape(a)[:0:-1])[::-1]
    out = []
    for i, (d, st) in enumerate(zip(shape(a), strides)):
        q = _floordiv(flat, int(st))
        coord = q if i == 0 else subtract(q, multiply(_floordiv(q, d), d))
        fill = 0 if fill_value is None else (fill_value[i] if isinstance(
            fill_value, (tuple, list)) else fill_value)
        out.append(where(flat < 0, fill, coord))
    return tuple(out)


def argwhere(a, *, size=None, fill_value=None):
    from tracer.numpy.shape_ops import stack
    a = value(a, "argwhere")
    if not shape(a):
        a = reshape(a, (1,))
        return reshape(nonzero(a, size=size, fill_value=fill_value)[0], (-1, 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    """Eager only: the number of unique values is data. Sorted whatever `sorted` says
    (NumPy 2.3's sorted=False allows any order)."""
    if isinstance(ar, Tracer):
        raise ConcretizationError("unique: the result's shape depends on the data, so it "
                                  "cannot be traced; call it outside jit/grad (or use sort)")
    out = np.unique(as_array(ar, "unique"), return_index, return_inverse, return_counts,
                    axis, equal_nan=equal_nan)
    if isinstance(out, tuple):
        return tuple(as_array(o, "unique") for o in out)
    return as_array(out, "unique")


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """numpy.where: with one argument it is `nonzero` (size=/fill_value= under tracing)."""
    from tracer.numpy import elementwise
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ArgumentError("where: either both or neither of x and y should be given")
    return elementwise.where(condition, x, y)
