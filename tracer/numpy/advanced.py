"""Indexing beyond basic slicing and one array index: several integer arrays, boolean
masks, and JAX's functional updates `x.at[idx].set/add/multiply/min/max/get`.

Everything reduces to the flat positions an index selects: NumPy's own indexing applied
to `arange(size).reshape(shape)`, so NumPy's rules (broadcast index arrays, where
separated advanced indices go, negative indices, masks) hold by construction. A read is
one `take` from the flattened array, an update one `scatter` into it (tracer.lax.scatters:
repeated positions apply in index order on every backend), so every form differentiates
and batches through those kernels. jax's out-of-bounds modes read the positions from an
array one longer on every axis whose extra slots hold -1: an index out of bounds is sent
there ("drop", "fill") or clamped into its axis ("clip").
"""
import math

import numpy as np

from ir.errors import ArgumentError, IndexingError, OutOfBoundsError
from ir.types import dtype_kind
from tracer.core import Tracer, run_kernel
from tracer.numpy._base import convert, dtype_of, shape, value
from tracer.numpy.shape_ops import broadcast_to, reshape

MODES = ("promise_in_bounds", "clip", "drop", "fill")


def has_tracer(key):
    key = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, Tracer) for k in key)


def positions(op, shp, key, mode=None):
    """The flat positions `key` selects in an array of shape `shp` (an int64 array of the
    result's shape; traced when the key is). With mode "clip", "drop" or "fill" an index
    out of bounds is clamped, or selects position -1."""
    if mode is None:
        ref = np.arange(math.prod(shp), dtype=np.int64).reshape(shp)
    else:
        ref = np.full(tuple(d + 1 for d in shp), -1, np.int64)
        ref[tuple(slice(0, d) for d in shp)] = np.arange(math.prod(shp)).reshape(shp)
        key = _guarded(op, shp, key, mode)
    if has_tracer(key):
        if any(isinstance(k, Tracer) and dtype_kind(dtype_of(k)) == "b"
               for k in (key if isinstance(key, tuple) else (key,))):
            raise IndexingError(f"{op}: a traced boolean mask selects a data-dependent "
                                f"number of elements; use tnp.where(mask, x, other) instead, "
                                f"or tnp.nonzero(mask, size=n) for a fixed-size index")
        from tracer.numpy.indexing import getitem
        return getitem(ref, key)
    try:
        return ref[key]
    except IndexError as e:
        raise OutOfBoundsError(f"{op}: {e} (array of shape {shp})") from None
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{op}: unsupported index {key!r} for shape {shp}: {e}") from None


def _guarded(op, shp, key, mode):
    """`key` for the array one longer on every axis: slices bounded to the real axis (a
    full slice would take the extra slot), masks padded with False, integer indices
    wrapped, then clamped into the axis ("clip") or else sent to the extra slot."""
    key = key if isinstance(key, tuple) else (key,)
    used = [_axes_used(k) for k in key]
    spread = len(shp) - sum(used)
    if spread < 0:
        raise IndexingError(f"{op}: too many indices ({sum(used)}) for an array of rank "
                         f"{len(shp)}")
    out, axis = [], 0
    for k, n in zip(key, used):
        if k is Ellipsis:
            out.extend([slice(0, d) for d in shp[axis:axis + spread]] or [Ellipsis])
            n = spread
        elif k is None or isinstance(k, (bool, np.bool_)):
            out.append(k)
        elif isinstance(k, slice):
            r = range(*k.indices(shp[axis]))
            out.append(slice(r.start, r.stop if r.stop >= 0 else None, r.step))
        elif not isinstance(k, Tracer) and np.asarray(k).dtype == bool:
            out.append(np.pad(np.asarray(k), [(0, 1)] * n))
        else:
            out.append(_guard(op, k, shp[axis], mode))
        axis += n
    if not any(k is Ellipsis for k in key):
        out.extend(slice(0, d) for d in shp[axis:])
    return tuple(out)


def _axes_used(k):
    if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
        return 0
    if isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == bool:
        return np.ndim(k)
    return 1


def _guard(op, k, d, mode):
    """Integer index k on an axis of length d, wrapped, then clamped (clip) or moved to
    the extra slot d when still out of bounds."""
    from tracer.numpy import elementwise as ew
    kind = dtype_kind(dtype_of(k)) if isinstance(k, Tracer) else np.asarray(k).dtype.kind
    if kind not in "iu":
        raise ArgumentError(f"{op}: indices must be integers, got {k!r}")
    scalar = isinstance(k, (int, np.integer))
    k = convert(k, np.int64, op) if isinstance(k, Tracer) else np.asarray(k, np.int64)
    k = ew.where(ew.less(k, 0), ew.add(k, d), k)
    if mode == "clip":
        k = ew.clip(k, 0, max(d - 1, 0))
    else:
        k = ew.where(ew.less(k, 0), d, ew.minimum(k, d))
    return int(k) if scalar else k


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
    from tracer.numpy import elementwise as ew
    from tracer.numpy.shape_ops import concatenate
    if (mode is None or (mode == "clip" and size) or
            (not isinstance(ids, Tracer) and ids.min(initial=0) >= 0)):
        return flat, ids
    slot = broadcast_to(convert(pad, dtype_of(flat), "at[]"), (1,))
    return concatenate([flat, slot]), ew.where(ew.less(ids, 0), size, ids)


class Update:
    """`x.at[key]`: `.set(v)`, `.add(v)`, `.subtract(v)`, `.multiply(v)`, `.min(v)`,
    `.max(v)` return a new array (x is unchanged); `.get()` is x[key]. Repeated positions
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
            from tracer.numpy.indexing import getitem
            return getitem(self.x, self.key)
        x = value(self.x, op)
        shp, size = shape(x), math.prod(shape(x))
        ids = positions(op, shp, self.key, mode)
        flat, flat_ids = _padded(reshape(x, (-1,)), reshape(ids, (-1,)), size,
                                 _fill_value(dtype_of(x), fill_value, op), mode)
        return reshape(run_kernel("take", [flat, flat_ids], {"axis": 0}), shape(ids))

    def _apply(self, how, v, mode, indices_are_sorted, unique_indices):
        from tracer.lax.scatters import scatter
        from tracer.numpy.indexing import getitem
        op = f"at[].{_NAMES[how]}"
        mode = _options(op, mode, indices_are_sorted, unique_indices)
        x = value(self.x, op)
        shp, dt, size = shape(x), dtype_of(x), math.prod(shape(x))
        ids = positions(op, shp, self.key, mode)
        v = reshape(broadcast_to(convert(value(v, op), dt, op), shape(ids)), (-1,))
        flat, ids = _padded(reshape(x, (-1,)), reshape(ids, (-1,)), size, 0, mode)
        out = scatter(flat, v, ids, how)
        return reshape(out if shape(out)[0] == size else getitem(out, slice(0, size)), shp)


_NAMES = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}


def _update(how):
    def method(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._apply(how, values, mode, indices_are_sorted, unique_indices)
    method.__name__ = method.__qualname__ = _NAMES[how]
    method.__doc__ = f"x with x[key] {_NAMES[how]} values (see Update)."
    return method


def _subtract(self, values, **options):
    """x with values subtracted at x[key] (adding their negation: the same result)."""
    from tracer.numpy.elementwise import negative
    return self.add(negative(value(values, "at[].subtract")), **options)


for _how, _name in _NAMES.items():
    setattr(Update, _name, _update(_how))
Update.mul, Update.subtract = Update.multiply, _subtract
