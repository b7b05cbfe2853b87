"""JAX's functional updates `x.at[idx].set/add/multiply/min/max/apply/get`.

An update reads the flat positions its index selects (tracer.numpy.indexing.positions, so
NumPy's rules for broadcast index arrays, masks and negative indices hold by
construction) and is one `scatter` into the flattened array (tracer.lax.scatters:
repeated positions apply in index order on every backend); `get` is `x[idx]`, or one
`take` in an out-of-bounds mode. So every form differentiates and batches through those
kernels. jax's out-of-bounds modes read the positions from an array one longer on every
axis whose extra slots hold -1: an index out of bounds is sent there ("drop", "fill") or
clamped into its axis ("clip").
"""
import math

import numpy as np

from ir.errors import ArgumentError
from ir.types import dtype_kind
from tracer.core import Tracer, run_kernel
from tracer.numpy.creation import zeros
from tracer.numpy._base import convert, dtype_of, shape, value
from tracer.numpy.elementwise import greater, less, negative, where
from tracer.numpy.indexing import getitem, positions
from tracer.numpy.shape_ops import broadcast_to, concatenate, reshape

MODES = ("promise_in_bounds", "clip", "drop", "fill")


class At:
    """`x.at`: indexing it gives the functional update of those elements."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        return Update(self.x, key)


def _options(op, mode, indices_are_sorted, unique_indices):
    """jax's keywords, checked; the mode that changes anything (None: indices are in
    bounds, as jax promises by default; here they are checked and raise otherwise)."""
    for name, flag in (("indices_are_sorted", indices_are_sorted),
                       ("unique_indices", unique_indices)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ArgumentError(f"{op}: {name} must be True or False, got {flag!r}")
    if mode is not None and mode not in MODES:
        raise ArgumentError(f"{op}: mode={mode!r} is not one of {MODES} (or None)")
    return None if mode == "promise_in_bounds" else mode


def _fill_value(dt, fill_value, op):
    """jax's default fill: NaN for floats, the lowest signed or the highest unsigned
    integer, True for bools."""
    if fill_value is not None:
        return convert(value(fill_value, op), dt, op)
    kind = dtype_kind(dt)
    if kind == "f":
        return np.full((), np.nan, dt)
    if kind == "b":
        return np.ones((), bool)
    info = np.iinfo(dt)
    return np.full((), info.min if kind == "i" else info.max, dt)


def _padded(flat, ids, size, pad, mode):
    """(flat, ids) where position -1 (out of bounds, dropped or filled) is an extra slot
    holding `pad` after the array's own elements; unchanged when no id can be -1 (only
    "drop" and "fill" give -1, and "clip" on an empty array)."""
    if (mode is None or (mode == "clip" and size) or
            (not isinstance(ids, Tracer) and ids.min(initial=0) >= 0)):
        return flat, ids
    slot = broadcast_to(convert(pad, dtype_of(flat), "at[]"), (1,))
    return concatenate([flat, slot]), where(less(ids, 0), size, ids)


class Update:
    """`x.at[key]`: `.set(v)`, `.add(v)`, `.subtract(v)`, `.multiply(v)`, `.min(v)`,
    `.max(v)`, `.apply(func)` return a new array (x is unchanged); `.get()` is x[key]. Repeated positions
    apply in index order, as NumPy's assignment and `ufunc.at`: the last write wins for
    set, the others combine every update. jax's keywords: `mode` None or
    "promise_in_bounds" (indices are in bounds: checked, OutOfBoundsError otherwise),
    "clip" (clamped into the axis), "drop"/"fill" (an update out of bounds is dropped;
    get reads `fill_value`); `indices_are_sorted` and `unique_indices` are accepted, and
    no result depends on them."""
    __slots__ = ("x", "key")

    def __init__(self, x, key):
        self.x, self.key = x, key

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        op = "at[].get"
        mode = _options(op, mode, indices_are_sorted, unique_indices)
        if mode is None:
            return getitem(self.x, self.key)
        x = value(self.x, op)
        shp, size = shape(x), math.prod(shape(x))
        ids = positions(op, shp, self.key, mode)
        flat, flat_ids = _padded(reshape(x, (-1,)), reshape(ids, (-1,)), size,
                                 _fill_value(dtype_of(x), fill_value, op), mode)
        return reshape(run_kernel("take", [flat, flat_ids], {"axis": 0}), shape(ids))

    def _apply(self, how, v, mode, indices_are_sorted, unique_indices):
        from tracer.lax.scatters import scatter
        op = f"at[].{_NAMES[how]}"
        mode = _options(op, mode, indices_are_sorted, unique_indices)
        x = value(self.x, op)
        shp, dt, size = shape(x), dtype_of(x), math.prod(shape(x))
        ids = positions(op, shp, self.key, mode)
        v = reshape(broadcast_to(convert(value(v, op), dt, op), shape(ids)), (-1,))
        flat, ids = _padded(reshape(x, (-1,)), reshape(ids, (-1,)), size, 0, mode)
        out = scatter(flat, v, ids, how)
        return reshape(out if shape(out)[0] == size else getitem(out, slice(0, size)), shp)


    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with the elementwise `func` applied at x[key], once each time a position is
        selected (as jax and NumPy's ufunc.at: a position given twice gets func(func(x)));
        `func` sees the whole array and only the selected positions keep its result."""
        x = value(self.x, "at[].apply")
        counts = Update(zeros(shape(x), np.int32), self.key)._apply(
            "add", 1, mode, indices_are_sorted, unique_indices)
        if isinstance(counts, Tracer):      # traced indices: as many rounds as the most
            from tracer.lax import while_loop   # repeated position needs
            return while_loop(
                lambda c: c[0] < counts.max(),
                lambda c: (c[0] + 1, where(greater(counts, c[0]), func(c[1]), c[1])),
                (np.int32(0), x))[1]
        for k in range(int(counts.max(initial=0))):
            x = where(counts > k, func(x), x)
        return x


_NAMES = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}


def _update(how):
    def method(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._apply(how, values, mode, indices_are_sorted, unique_indices)
    method.__name__ = method.__qualname__ = _NAMES[how]
    method.__doc__ = f"x with x[key] {_NAMES[how]} values (see Update)."
    return method


def _subtract(self, values, **options):
    """x with values subtracted at x[key] (adding their negation: the same result)."""
    return self.add(negative(value(values, "at[].subtract")), **options)


for _how, _name in _NAMES.items():
    setattr(Update, _name, _update(_how))
Update.mul, Update.subtract = Update.multiply, _subtract
