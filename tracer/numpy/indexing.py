"""Indexing: `x[key]` and `take`, with NumPy's rules, lowered to rev/slice/reshape/take.

Basic indices (ints, slices with any step, None, one Ellipsis) become one `rev` (for
negative steps) and one `slice`; integer-array indices become one `take` (several index
their axes moved together and merged, through one flat position). As in NumPy,
when the integer indices and the array index are not adjacent in the key, the array's
dimensions go first in the result. Several concrete index arrays or a concrete boolean
mask read the flat positions they select (`positions`: NumPy's own indexing applied to
`arange(size).reshape(shape)`) with one `take`; `x.at[...]` (tracer.numpy.index_updates)
writes through the same positions. A traced boolean mask is rejected: the output shape
would depend on the data.
"""
import math

import numpy as np

from ir.errors import (ArgumentError, ArgumentValueError, IndexingError,
                       NonConcreteBooleanIndexError, OutOfBoundsError, ShapeError)
from ir.types import dtype_kind
from tracer.core import Tracer, run_kernel
from tracer.numpy._base import (broadcast_shapes, convert, dtype_of, no_out, normalize_axis,
                                shape, value)
from tracer.numpy.bitwise import logical_and, logical_or
from tracer.numpy.elementwise import (add, clip, greater_equal, less, minimum, multiply,
                                      where)
from tracer.numpy.rounding import mod
from tracer.numpy.shape_ops import (broadcast_to, concatenate, moveaxis, ravel, reshape,
                                   transpose)
from tracer.value_conversions import jax_type

_INTS = (int, np.integer)


def _check_int_index(op, idx_dtype):
    if dtype_kind(idx_dtype) == "b":
        raise ArgumentError(f"{op}: boolean mask indices are not supported (the result's "
                            f"shape would depend on the data); use tracer.numpy.where")
    if dtype_kind(idx_dtype) not in "iu":
        raise ArgumentError(f"{op}: indices must be integers, got {idx_dtype}")


def _as_index(k):
    """A list index as an array; an empty list is an (empty) integer index, as in NumPy."""
    a = np.asarray(k)
    return a.astype(np.int64) if a.size == 0 and not isinstance(k, np.ndarray) else a


_TAKE_MODES = (None, "raise", "wrap", "clip", "fill")


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Gather along one axis (integer indices of any shape; negative ones wrap). An index
    out of bounds raises (mode None or "raise", as NumPy), is taken modulo the axis
    ("wrap"), clamped into it with negative ones to 0 ("clip", NumPy's and JAX's), or gives
    fill_value ("fill", JAX's; default NaN, or the int dtype's min (max if unsigned), or
    True). unique_indices and indices_are_sorted are JAX's promises and change nothing."""
    no_out("take", out)
    if mode not in _TAKE_MODES:
        raise ArgumentValueError(f"take: mode={mode!r} is not one of {_TAKE_MODES}")
    x = value(a, "take")
    if axis is None:
        x, axis = (x if len(shape(x)) == 1 else ravel(x)), 0    # never copy a 1-d x
    ax = normalize_axis("take", axis, len(shape(x)))
    n = shape(x)[ax]
    if mode in ("wrap", "clip", "fill"):
        idx = indices if isinstance(indices, Tracer) else _as_index(indices)
        _check_int_index("take", dtype_of(idx))
        if n == 0:
            raise OutOfBoundsError(f"take: mode={mode!r} cannot take from axis {ax} of "
                                   f"size 0")
        if mode == "fill":
            x, indices = _fill_slot(x, ax, fill_value), _to_fill_slot(idx, n)
        else:
            indices = mod(idx, n) if mode == "wrap" else clip(idx, 0, n - 1)
    return _take(x, indices, ax)


def _fill_slot(x, ax, fill_value):
    """x with one more slice at the end of axis `ax`, holding fill_value."""
    dt = dtype_of(x)
    if fill_value is None:
        kind = dtype_kind(dt)
        fill_value = (np.nan if kind == "f" else True if kind == "b" else
                      np.iinfo(dt).max if kind == "u" else np.iinfo(dt).min)
    slot = shape(x)[:ax] + (1,) + shape(x)[ax + 1:]
    return concatenate([x, broadcast_to(convert(value(fill_value, "take"), dt, "take"),
                                        slot)], axis=ax)


def _to_fill_slot(idx, n):
    """Indices in [-n, n) wrapped, all others sent to the fill slot n."""
    idx = convert(idx, np.int64, "take")
    return where(logical_or(less(idx, -n), greater_equal(idx, n)), n,
                 where(less(idx, 0), add(idx, n), idx))


def _take(x, indices, ax):
    n = shape(x)[ax]
    if isinstance(indices, Tracer):
        dt = dtype_of(indices)
        _check_int_index("take", dt)
        if n > np.iinfo(dt).max:    # idx + n must not wrap (int32 indices, a longer axis)
            indices = convert(indices, np.int64, "take")
        idx = _from_end(indices, n)
    else:
        idx = _as_index(indices)
        _check_int_index("take", idx.dtype)
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise OutOfBoundsError(f"take: index {bad.flat[0]} is out of bounds for axis "
                                   f"{ax} with size {n}")
        idx = idx.astype(np.int64)          # before adding n, which int8 cannot hold
        idx = np.where(idx < 0, idx + n, idx)
    return run_kernel("take", [x, idx], {"axis": ax})


def _from_end(idx, n):
    """Traced indices with those in [-n, 0) counted from the end and the others as written:
    the kernel's bounds check then names an index out of bounds as the user wrote it (-10,
    not -10 + n). idx + n cannot overflow where it is kept."""
    wrapped = add(idx, n)
    return where(logical_and(less(idx, 0), greater_equal(wrapped, 0)), wrapped, idx)


TAKE_CHECKED = 1 << 20      # axes up to this long are checked by a take from arange(n)


def _checked(idx, axis, n):
    """Integer indices into an axis of size n, counted from the end when negative and
    checked against that axis (as `axis`, in the message) by a take from arange(n): for
    indices that are then combined into a flat position, whose own check would let an
    index out of its axis read another row, and would name the position. A longer axis
    under tracing gets no n-element constant (an abstract 2**31-long axis, as under
    eval_shape, must not allocate): an index out of it becomes a large negative position,
    which the flat take refuses whatever row it is added to."""
    if n <= TAKE_CHECKED or not isinstance(idx, Tracer):
        ref = np.arange(n, dtype=np.int64).reshape((1,) * axis + (n,))
        return reshape(_take(ref, idx, axis), shape(idx))
    idx = convert(idx, np.int64, "take")
    inside = logical_and(greater_equal(idx, -n), less(idx, n))
    return where(inside, where(less(idx, 0), add(idx, n), idx), np.iinfo(np.int64).min // 4)


def _normalize_key(key, ndim):
    """(key, separated): the key as a tuple without Ellipsis (one entry per axis plus the
    None entries), and whether its integer and array indices are not adjacent (NumPy
    judges that on the key as written, where even an empty Ellipsis separates)."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(_as_index(k) if isinstance(k, list) else k for k in key)
    for k in key:
        if isinstance(k, (bool, np.bool_)):
            raise ArgumentError(f"getitem: boolean index {k!r} is not supported")
        if not (k is None or k is Ellipsis or isinstance(k, (slice, Tracer, np.ndarray))
                or isinstance(k, _INTS)):
            raise ArgumentError(f"getitem: unsupported index {k!r} (use ints, slices, None, "
                                f"..., or one integer array)")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexingError("getitem: an index can only have a single ellipsis ('...')")
    n_real = sum(k is not None and k is not Ellipsis for k in key)
    if n_real > ndim:
        raise IndexingError(f"getitem: too many indices ({n_real}) for an array of rank {ndim}")
    advanced = [j for j, k in enumerate(key) if isinstance(k, (_INTS, Tracer, np.ndarray))]
    separated = advanced != list(range(advanced[0], advanced[-1] + 1)) if advanced else False
    if not any(k is Ellipsis for k in key):
        key = key + (Ellipsis,)
    i = next(j for j, k in enumerate(key) if k is Ellipsis)
    return key[:i] + (slice(None),) * (ndim - n_real) + key[i + 1:], separated


def _basic(k, d, axis):
    """(start, limit, step, reversed, kept) of one int or slice index on a size-d axis."""
    if isinstance(k, _INTS):
        if not -d <= k < d:
            raise OutOfBoundsError(f"getitem: index {k} is out of bounds for axis {axis} "
                                   f"with size {d}")
        k = int(k) % d
        return k, k + 1, 1, False, False
    if isinstance(k, slice):
        r = range(*k.indices(d))
        rev = r.step < 0 and len(r) > 0
        if rev:   # read the reversed axis forwards: x[i] is rev(x)[d - 1 - i]
            r = range(d - 1 - r.start, d - 1 - r.start + len(r) * -r.step, -r.step)
        s = r.start if len(r) else 0
        return s, s + (len(r) - 1) * r.step + 1 if len(r) else s, abs(r.step), rev, True
    return 0, d, 1, False, True           # the array index: keep the whole axis for take


def getitem(x, key):
    """x[key]: basic indexing and integer-array indices directly (several traced ones as one
    index into their merged axes); several concrete index arrays or a concrete boolean mask
    through the flat positions they select."""
    x = value(x, "getitem")
    if _advanced(key):
        return _gather(x, key)
    shp = shape(x)
    key, separated = _normalize_key(key, len(shp))
    arrays = [j for j, k in enumerate(key) if isinstance(k, (Tracer, np.ndarray))]
    real = [k for k in key if k is not None]
    bounds = [_basic(k, d, i) for i, (k, d) in enumerate(zip(real, shp))]
    rev_axes = tuple(i for i, b in enumerate(bounds) if b[3])
    if rev_axes:
        x = run_kernel("rev", [x], {"axes": rev_axes})
    start, limit, step = (tuple(b[i] for b in bounds) for i in range(3))
    if (start, limit, step) != ((0,) * len(shp), shp, (1,) * len(shp)):
        x = run_kernel("slice", [x], {"start": start, "limit": limit, "step": step})
    kept = tuple(d for d, b in zip(shape(x), bounds) if b[4])
    if not arrays:
        return reshape(x, _final_shape(key, kept, None, False))
    x = reshape(x, kept)                  # drop the integer-indexed axes
    at = [sum(1 for k in key[:j] if k is not None and not isinstance(k, _INTS)) for j in arrays]
    idx = key[arrays[0]]
    if len(arrays) > 1:     # index the array axes, moved together, as one merged axis
        if separated:
            x = transpose(x, at + [i for i in range(len(kept)) if i not in at])
            at = list(range(len(at)))
        dims = shape(x)[at[0]:at[-1] + 1]
        x = reshape(x, shape(x)[:at[0]] + (math.prod(dims),) + shape(x)[at[-1] + 1:])
        axes = [sum(1 for k in key[:j] if k is not None) for j in arrays]
        idx = _flat_index([key[j] for j in arrays], axes, dims)
        key = tuple(0 if j in arrays[1:] else k for j, k in enumerate(key))
    pos = at[0]
    x = take(x, idx, axis=pos)
    nidx = len(shape(idx))
    if separated and pos:   # NumPy: separated advanced indices put the array's dims first
        x = transpose(x, tuple(range(pos, pos + nidx)) + tuple(range(pos)) +
                      tuple(range(pos + nidx, len(shape(x)))))
    return reshape(x, _final_shape(key, shape(x), nidx, separated))


def _flat_index(arrays, axes, dims):
    """The row-major position in axes of sizes `dims` that one integer array per axis
    selects (the arrays broadcast together); each is wrapped and checked against its own
    axis (a traced one when it runs), so no out-of-bounds index lands on another element."""
    flat = None
    for k, axis, d in zip(arrays, axes, dims):
        if not isinstance(k, Tracer):
            _check_int_index("getitem", k.dtype)
            bad = k[(k < -d) | (k >= d)]
            if bad.size:
                raise OutOfBoundsError(f"getitem: index {bad.flat[0]} is out of bounds for "
                                       f"axis {axis} with size {d}")
        k = _checked(k, axis, d)
        flat = k if flat is None else add(multiply(flat, d), k)
    return flat


def _advanced(key):
    """Several (concrete) index arrays, or a boolean mask: NumPy's advanced indexing."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Tracer) for k in keys):
        return any(isinstance(k, Tracer) and dtype_kind(dtype_of(k)) == "b" for k in keys)
    arrays = [np.asarray(k) for k in keys if isinstance(k, (np.ndarray, list))]
    return len(arrays) > 1 or any(a.dtype == bool for a in arrays)


def _final_shape(key, dims, nidx, front):
    """Insert the None axes into `dims` (the result's axes in order, array dims placed)."""
    it = iter(dims)
    out = [next(it) for _ in range(nidx)] if front else []
    for k in key:
        if k is None:
            out.append(1)
        elif isinstance(k, slice):
            out.append(next(it))
        elif not isinstance(k, _INTS) and not front:
            out.extend(next(it) for _ in range(nidx))
    return tuple(out)


def take_along_axis(arr, indices, axis=-1):
    """arr's elements at `indices` along `axis` (other axes broadcast), as one `take` from
    the flattened array: the flat index is the row offset plus the index, checked against
    its own axis first."""
    arr = value(arr, "take_along_axis")
    if axis is None:
        arr, axis = ravel(arr), 0
    nd = len(shape(arr))
    idx = indices if isinstance(indices, Tracer) else _as_index(indices)
    _check_int_index("take_along_axis", dtype_of(idx))
    if len(shape(idx)) != nd:
        raise ShapeError(f"take_along_axis: indices (shape {shape(idx)}) and arr (shape "
                         f"{shape(arr)}) must have the same number of dimensions")
    ax = normalize_axis("take_along_axis", axis, nd)
    x, idx = moveaxis(arr, ax, -1), moveaxis(idx, ax, -1)
    n = shape(x)[-1]
    lead = broadcast_shapes("take_along_axis", shape(x)[:-1], shape(idx)[:-1])
    x = broadcast_to(x, lead + (n,))
    idx = broadcast_to(convert(idx, np.int64, "take_along_axis"), lead + shape(idx)[-1:])
    if not isinstance(idx, Tracer):
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise OutOfBoundsError(f"take_along_axis: index {bad.flat[0]} is out of bounds "
                                   f"for axis {ax} with size {n}")
    idx = _checked(idx, ax, n)
    rows = np.arange(int(np.prod(lead, dtype=np.int64)), dtype=np.int64).reshape(lead + (1,))
    out = run_kernel("take", [ravel(x), add(idx, rows * n)], {"axis": 0})
    return moveaxis(out, -1, ax)


def _has_tracer(key):
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
    if _has_tracer(key):
        mask = next((k for k in (key if isinstance(key, tuple) else (key,))
                     if isinstance(k, Tracer) and dtype_kind(dtype_of(k)) == "b"), None)
        if mask is not None:
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {jax_type(mask.aval)}. {op}: a "
                f"traced boolean mask selects a data-dependent number of elements; use "
                f"tnp.where(mask, x, other) instead, or tnp.nonzero(mask, size=n) for a "
                f"fixed-size index")
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
    kind = dtype_kind(dtype_of(k)) if isinstance(k, Tracer) else np.asarray(k).dtype.kind
    if kind not in "iu":
        raise ArgumentError(f"{op}: indices must be integers, got {k!r}")
    scalar = isinstance(k, (int, np.integer))
    k = convert(k, np.int64, op) if isinstance(k, Tracer) else np.asarray(k, np.int64)
    k = where(less(k, 0), add(k, d), k)
    if mode == "clip":
        k = clip(k, 0, max(d - 1, 0))
    else:
        k = where(less(k, 0), d, minimum(k, d))
    return int(k) if scalar else k


def _gather(x, key):
    """x[key] for any concrete NumPy index (and one traced integer array)."""
    x = value(x, "getitem")
    ids = positions("getitem", shape(x), key)
    flat = reshape(x, (-1,))
    return reshape(run_kernel("take", [flat, reshape(ids, (-1,))], {"axis": 0}), shape(ids))
