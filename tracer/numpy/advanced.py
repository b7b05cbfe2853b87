"""Indexing beyond basic slicing and one array index: several integer arrays, boolean
masks, and JAX's functional updates `x.at[idx].set/add/multiply/min/max/get`.

Everything reduces to the flat positions an index selects: NumPy's own indexing applied
to `arange(size).reshape(shape)`, so NumPy's rules (broadcast index arrays, where
separated advanced indices go, negative indices, masks) hold by construction. A read is
one `take` from the flattened array, an update one `scatter_add` into it per round of
distinct positions, so every form differentiates through the existing kernels.
"""
import math

import numpy as np

from ir.errors import ArgumentError, OutOfBoundsError, ShapeError
from ir.types import dtype_kind
from tracer.core import Tracer, run_kernel
from tracer.numpy._base import convert, dtype_of, shape, value
from tracer.numpy.shape_ops import broadcast_to, reshape


def has_tracer(key):
    key = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, Tracer) for k in key)


def positions(op, shp, key):
    """The flat positions `key` selects in an array of shape `shp` (an int64 array of the
    result's shape; traced when the key is)."""
    ref = np.arange(math.prod(shp), dtype=np.int64).reshape(shp)
    if has_tracer(key):
        if any(isinstance(k, Tracer) and dtype_kind(dtype_of(k)) == "b"
               for k in (key if isinstance(key, tuple) else (key,))):
            raise ShapeError(f"{op}: a traced boolean mask selects a data-dependent number "
                             f"of elements; use tnp.where(mask, x, other) instead, or "
                             f"tnp.nonzero(mask, size=n) for a fixed-size index")
        from tracer.numpy.indexing import getitem
        return getitem(ref, key)
    try:
        return ref[key]
    except IndexError as e:
        raise OutOfBoundsError(f"{op}: {e} (array of shape {shp})") from None
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{op}: unsupported index {key!r} for shape {shp}: {e}") from None


def gather(x, key):
    """x[key] for any concrete NumPy index (and one traced integer array)."""
    x = value(x, "getitem")
    ids = positions("getitem", shape(x), key)
    flat = reshape(x, (-1,))
    return reshape(run_kernel("take", [flat, reshape(ids, (-1,))], {"axis": 0}), shape(ids))


class At:
    """`x.at`: indexing it gives the functional update of those elements."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        return Update(self.x, key)


class Update:
    """`x.at[key]`: `.set(v)`, `.add(v)`, `.multiply(v)`, `.min(v)`, `.max(v)` return a
    new array (x is unchanged); `.get()` is x[key]. Repeated positions accumulate for
    add, multiply, min and max, and the last one wins for set (as NumPy's x[key] = v).
    With a traced index, positions are assumed distinct except for add."""
    __slots__ = ("x", "key")

    def __init__(self, x, key):
        self.x, self.key = x, key

    def get(self, **_):
        from tracer.numpy.indexing import getitem
        return getitem(self.x, self.key)

    def set(self, v, **_):
        return self._apply("set", v)

    def add(self, v, **_):
        return self._apply("add", v)

    def multiply(self, v, **_):
        return self._apply("multiply", v)

    mul = multiply

    def min(self, v, **_):
        return self._apply("min", v)

    def max(self, v, **_):
        return self._apply("max", v)

    def _apply(self, how, v):
        from tracer.numpy import elementwise as ew
        op = f"at[].{how}"
        x = value(self.x, op)
        shp, dt, size = shape(x), dtype_of(x), math.prod(shape(x))
        ids = positions(op, shp, self.key)
        v = broadcast_to(convert(value(v, op), dt, op), shape(ids))
        flat, ids, v = reshape(x, (-1,)), reshape(ids, (-1,)), reshape(v, (-1,))
        for rid, rv in _rounds(ids, v, how):
            spread = run_kernel("scatter_add", [rv, rid], {"axis": 0, "size": size})
            if how == "add":
                flat = ew.add(flat, spread)
                continue
            hit = _hit_mask(rid, size)
            new = {"set": spread, "multiply": ew.multiply(flat, spread),
                   "min": ew.minimum(flat, spread), "max": ew.maximum(flat, spread)}[how]
            flat = ew.where(hit, new, flat)
        return reshape(flat, shp)


def _rounds(ids, v, how):
    """(positions, updates) rounds, each round's positions distinct: the k-th occurrence
    of every position goes in round k, so applying rounds in order is NumPy's sequential
    semantics. add needs one round (scatter_add accumulates); so does a traced index."""
    if how == "add" or isinstance(ids, Tracer):
        return [(ids, v)]
    order = np.argsort(ids, kind="stable")
    ranks = np.empty_like(ids)
    sorted_ids = ids[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_ids)) + 1]
    run = np.repeat(starts, np.diff(np.r_[starts, len(ids)]))
    ranks[order] = np.arange(len(ids)) - run
    out = []
    for k in range(int(ranks.max(initial=-1)) + 1):
        sel = np.flatnonzero(ranks == k)
        out.append((ids[sel], v[sel] if len(sel) != len(ids) else v))
    return out


def _hit_mask(ids, size):
    if isinstance(ids, Tracer):
        from tracer.numpy.elementwise import greater
        ones = broadcast_to(np.ones((), np.int32), shape(ids))
        return greater(run_kernel("scatter_add", [ones, ids], {"axis": 0, "size": size}), 0)
    hit = np.zeros(size, bool)
    hit[ids] = True
    return hit
