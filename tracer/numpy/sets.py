"""Set and search functions (issue 26): isin and digitize trace as they are; the ones
whose result size is data (intersect1d union1d setdiff1d setxor1d and NumPy 2's
unique_all/counts/inverse/values) are NumPy's own eagerly, and under tracing take JAX's
`size=` (and `fill_value=`) or raise an error that says so.

The sized form sorts (argsort: stable, NaN last), marks the first element of each run of
equal values, and compacts the marked ones to the front in sorted order: its results are
sorted (NumPy 2.3+'s unique_values may give another order), padded past the data's count
with `fill_value`, by default the smallest value found (as JAX)."""
import collections

import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, ConcretizationError, ShapeError
from ir.types import dtype_kind
from tracer.core import Tracer, as_array
from tracer.numpy._base import convert, dtype_of, has_tracer, result_dtype, shape, value
from tracer.numpy.bitwise import logical_and, logical_not
from tracer.numpy.elementwise import equal, less, minimum, not_equal, subtract, where
from tracer.numpy.indexing import getitem, take
from tracer.numpy.reductions import any as any_, argmax, cumsum, sum
from tracer.numpy.shape_ops import concatenate, expand_dims, ravel, reshape
from tracer.numpy.sorting import argsort, flatnonzero, lexsort, searchsorted

UniqueAllResult = collections.namedtuple("UniqueAllResult",
                                         ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of `element` is in `test_elements` (one comparison per pair,
    so it traces; NaN is in nothing), as numpy.isin."""
    if kind not in (None, "sort", "table", "compare"):
        raise ArgumentValueError(f"isin: kind must be None, 'sort', 'table' or 'compare', "
                                 f"got {kind!r}")
    e, t = value(element, "isin"), ravel(value(test_elements, "isin"))
    dt = result_dtype("isin", e, t)
    e, t = convert(e, dt, "isin"), convert(t, dt, "isin")
    found = any_(equal(expand_dims(e, -1), t), axis=-1)
    return logical_not(found) if invert else found


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each x falls in, as numpy.digitize: bins increasing or
    decreasing (checked when concrete; traced bins are taken as increasing when
    bins[-1] >= bins[0], as JAX; JAX's `method` is accepted, one search serving all)."""
    x, b = value(x, "digitize"), value(bins, "digitize")
    if len(shape(b)) != 1:
        raise ShapeError(f"digitize: bins must be 1-dimensional, got shape {shape(b)}")
    side = "left" if right else "right"
    n = shape(b)[0]
    if not isinstance(b, Tracer):
        d = np.diff(b)
        if not (np.all(d >= 0) or np.all(d <= 0)):
            raise ArgumentValueError("digitize: bins must be monotonically increasing or "
                                     "decreasing; sort them first")
        if n and b[-1] < b[0]:
            return subtract(n, searchsorted(b[::-1], x, side=side))
        return searchsorted(b, x, side=side)
    rising = searchsorted(b, x, side=side)
    if n == 0:
        return rising
    falling = subtract(n, searchsorted(getitem(b, slice(None, None, -1)), x, side=side))
    return where(less(getitem(b, -1), getitem(b, 0)), falling, rising)


def _needs_size(op, size, *xs):
    if size is None and has_tracer(xs):
        raise ConcretizationError(f"{op}: the result's size depends on the data, so under "
                                  f"jit/grad/vmap pass size= (and optionally fill_value=), "
                                  f"as in JAX; or call it outside the trace")
    if size is not None and (not isinstance(size, (int, np.integer)) or size < 0):
        raise ArgumentError(f"{op}: size must be a non-negative int, got {size!r}")


def _eager(op, fn, *xs):
    """NumPy's own result (a tuple of arrays, or one array)."""
    out = fn(*[as_array(x, op) for x in xs])
    if isinstance(out, tuple):
        return type(out)(*[as_array(o, op) for o in out]) if hasattr(out, "_fields") else \
            tuple(as_array(o, op) for o in out)
    return as_array(out, op)


def _runs(s, equal_nan):
    """A mask of the first element of each run of equal values of sorted 1-d `s`."""
    if shape(s)[0] == 0:
        return np.zeros(0, bool)
    prev, rest = getitem(s, slice(None, -1)), getitem(s, slice(1, None))
    new = not_equal(rest, prev)
    if equal_nan and dtype_kind(dtype_of(s)) == "f":
        new = logical_and(new, logical_not(logical_and(not_equal(rest, rest),
                                                       not_equal(prev, prev))))
    return concatenate([np.ones(1, bool), new])


def _compact(op, cand, keep, size, fill_value):
    """The kept candidates, sorted, in `size` slots (padded with fill_value, by default
    the smallest kept one) and how many there are."""
    n = shape(cand)[0]
    dt = dtype_of(cand)
    count = sum(keep, dtype=np.int64)
    if n == 0:
        fill = 0 if fill_value is None else fill_value
        return convert(np.full(size, fill), dt, op), count
    order = lexsort((cand, logical_not(keep)))       # kept ones first, each part sorted
    picked = take(take(cand, order), minimum(np.arange(size), n - 1))
    if size == 0 or fill_value is not None:
        fill = convert(value(0 if fill_value is None else fill_value, op), dt, op)
    else:
        fill = getitem(picked, 0)
    return where(less(np.arange(size), count), picked, fill), count


def _sorted(x):
    perm = argsort(x)
    return take(x, perm), perm


def _unique_sized(op, x, size, fill_value, equal_nan):
    """(values, first indices, inverse, counts) of the flattened x in `size` slots."""
    flat = ravel(x)
    n = shape(flat)[0]
    s, perm = _sorted(flat)
    first = _runs(s, equal_nan)
    starts = flatnonzero(first, size=size, fill_value=n)
    count = sum(first, dtype=np.int64)
    slot = np.arange(size)
    pad = convert(np.zeros(1), dtype_of(s)) if n == 0 else getitem(s, slice(0, 1))
    padded = concatenate([s, pad])
    vals = take(padded, starts)
    fill = getitem(vals, 0) if fill_value is None and size else convert(
        value(0 if fill_value is None else fill_value, op), dtype_of(s), op)
    vals = where(less(slot, count), vals, fill)
    ends = concatenate([getitem(starts, slice(1, None)), np.full(1, n)]) if size else starts
    counts = subtract(ends, starts)         # padded starts are n: they count 0
    idx = take(concatenate([perm, np.zeros(1, np.int64)]), starts)
    idx = where(less(slot, count), idx, getitem(idx, 0) if size else idx)
    group = subtract(cumsum(first, dtype=np.int64), 1) if n else np.zeros(0, np.int64)
    inverse = reshape(take(group, argsort(perm)), shape(x)) if n else \
        np.zeros(shape(x), np.int64)
    return vals, idx, inverse, counts


def _unique_family(op, x, size, fill_value, np_fn):
    _needs_size(op, size, x)
    x = value(x, op)
    if size is None:
        return _eager(op, np_fn, x)
    return _unique_sized(op, x, size, fill_value, equal_nan=False)


def unique_values(x, /, *, size=None, fill_value=None):
    """numpy.unique_values (NaNs each unique, as NumPy 2's); sorted when sized."""
    out = _unique_family("unique_values", x, size, fill_value, np.unique_values)
    return out if size is None else out[0]


def unique_counts(x, /, *, size=None, fill_value=None):
    """numpy.unique_counts: (values, counts); padded slots count 0."""
    out = _unique_family("unique_counts", x, size, fill_value, np.unique_counts)
    return out if size is None else UniqueCountsResult(out[0], out[3])


def unique_inverse(x, /, *, size=None, fill_value=None):
    """numpy.unique_inverse: (values, inverse_indices of x's shape)."""
    out = _unique_family("unique_inverse", x, size, fill_value, np.unique_inverse)
    return out if size is None else UniqueInverseResult(out[0], out[2])


def unique_all(x, /, *, size=None, fill_value=None):
    """numpy.unique_all: (values, first indices, inverse_indices, counts)."""
    out = _unique_family("unique_all", x, size, fill_value, np.unique_all)
    return out if size is None else UniqueAllResult(*out)


def _pair(op, ar1, ar2):
    a, b = ravel(value(ar1, op)), ravel(value(ar2, op))
    dt = result_dtype(op, a, b)
    return convert(a, dt, op), convert(b, dt, op)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values of both arrays, as numpy.union1d."""
    _needs_size("union1d", size, ar1, ar2)
    if size is None:
        return _eager("union1d", np.union1d, ar1, ar2)
    a, b = _pair("union1d", ar1, ar2)
    s, _ = _sorted(concatenate([a, b]))
    return _compact("union1d", s, _runs(s, True), size, fill_value)[0]


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ar1 that are not in ar2, as numpy.setdiff1d."""
    _needs_size("setdiff1d", size, ar1, ar2)
    if size is None:
        return _eager("setdiff1d", lambda a, b: np.setdiff1d(a, b, assume_unique), ar1, ar2)
    a, b = _pair("setdiff1d", ar1, ar2)
    s, _ = _sorted(a)
    keep = logical_and(_runs(s, True), isin(s, b, invert=True))
    return _compact("setdiff1d", s, keep, size, fill_value)[0]


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays, as numpy.setxor1d (a NaN
    of each counts, as NumPy's)."""
    _needs_size("setxor1d", size, ar1, ar2)
    if size is None:
        return _eager("setxor1d", lambda a, b: np.setxor1d(a, b, assume_unique), ar1, ar2)
    a, b = _pair("setxor1d", ar1, ar2)
    (sa, _), (sb, _) = _sorted(a), _sorted(b)
    keep = concatenate([logical_and(_runs(sa, True), isin(sa, b, invert=True)),
                        logical_and(_runs(sb, True), isin(sb, a, invert=True))])
    return _compact("setxor1d", concatenate([sa, sb]), keep, size, fill_value)[0]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values in both arrays, as numpy.intersect1d; with
    return_indices, also the first index of each in ar1 and in ar2 (padded slots: 0)."""
    _needs_size("intersect1d", size, ar1, ar2)
    if size is None:
        return _eager("intersect1d", lambda a, b: np.intersect1d(
            a, b, assume_unique, return_indices), ar1, ar2)
    a, b = _pair("intersect1d", ar1, ar2)
    s, _ = _sorted(a)
    keep = logical_and(_runs(s, True), isin(s, b))
    vals, count = _compact("intersect1d", s, keep, size, fill_value)
    if not return_indices:
        return vals
    live = less(np.arange(size), count)

    def first_index(arr):
        if shape(arr)[0] == 0:
            return np.zeros(size, np.int64)
        hit = argmax(equal(expand_dims(vals, -1), arr), axis=-1)
        return where(live, hit, 0)
    return vals, first_index(a), first_index(b)
