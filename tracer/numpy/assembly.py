"""Assembly, splitting and rearranging, as composites of reshape/transpose/broadcast_to/
concatenate/slice/rev/pad/take/where (so every one is differentiable for free).

An op that only moves elements of one array around (roll, repeat with counts, rot90,
diagonal, insert, delete, pad with edge/reflect/wrap modes) is one `take` from the
flattened array, with the flat positions computed by NumPy itself on an array of
positions (`_positions`): the same function applied to np.arange, so it agrees with
NumPy by construction.
"""
import numpy as np

from ir.errors import ArgumentError, ShapeError
from tracer.core import Tracer, run_kernel
from tracer.numpy._base import (convert, dtype_of, normalize_axes, normalize_axis,
                                result_dtype, shape, value)
from tracer.numpy.elementwise import where
from tracer.numpy.indexing import getitem, take
from tracer.numpy.shape_ops import (atleast_1d, atleast_2d, atleast_3d, broadcast_to,
                                    concatenate, expand_dims, joined, ravel, reshape,
                                    transpose)


def _positions(x, np_fn):
    """np_fn applied to x's elements, computed as a gather from x: np_fn(positions)."""
    pos = np_fn(np.arange(int(np.prod(shape(x), dtype=np.int64))).reshape(shape(x)))
    return take(ravel(x), pos) if pos.size else _empty_like(x, pos.shape)


def _empty_like(x, shp):
    from tracer.numpy.creation import zeros
    return zeros(shp, dtype_of(x))


def _cat(name, arrays, axis, prep, dtype=None, casting="same_kind"):
    return joined([prep(value(a, name)) for a in arrays], axis, dtype, casting, op=name)


def vstack(tup, *, dtype=None, casting="same_kind"):
    return _cat("vstack", tup, 0, atleast_2d, dtype, casting)


row_stack = vstack


def hstack(tup, *, dtype=None, casting="same_kind"):
    xs = [atleast_1d(value(a, "hstack")) for a in tup]
    return _cat("hstack", xs, 0 if xs and len(shape(xs[0])) == 1 else 1, lambda x: x, dtype,
                casting)


def dstack(tup):
    return _cat("dstack", tup, 2, atleast_3d)


def column_stack(tup):
    return _cat("column_stack", tup, 1,
                lambda x: reshape(x, (-1, 1)) if len(shape(x)) < 2 else x)


def block(arrays):
    """numpy.block: the innermost lists join along the last axis, the next along the
    second to last, ...; leaves are first given at least as many dims as the nesting."""
    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) and a else (1 if isinstance(a, list)
                                                                  else 0)
    d = depth(arrays)
    leaves = []

    def walk(a):
        if isinstance(a, list):
            for e in a:
                walk(e)
        else:
            leaves.append(value(a, "block"))
    walk(arrays)
    if not leaves:
        raise ShapeError("block: lists cannot be empty")
    nd = max([d] + [len(shape(x)) for x in leaves])

    def build(a, level):
        if not isinstance(a, list):
            x = value(a, "block")
            return reshape(x, (1,) * (nd - len(shape(x))) + shape(x))
        return concatenate([build(e, level + 1) for e in a], axis=nd - d + level)
    return build(arrays, 0) if isinstance(arrays, list) else value(arrays, "block")


def array_split(ary, indices_or_sections, axis=0):
    x = value(ary, "array_split")
    ax = normalize_axis("array_split", axis, len(shape(x)))
    n = shape(x)[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ArgumentError("array_split: number sections must be larger than 0")
        each, extra = divmod(n, k)
        bounds = np.cumsum([0] + extra * [each + 1] + (k - extra) * [each]).tolist()
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    lead = (slice(None),) * ax
    return [getitem(x, lead + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    x = value(ary, "split")
    if isinstance(indices_or_sections, (int, np.integer)):
        n = shape(x)[normalize_axis("split", axis, len(shape(x)))]
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ShapeError("split: array split does not result in an equal division")
    return array_split(x, indices_or_sections, axis)


def _split_nd(name, ary, ios, axis, min_nd):
    x = value(ary, name)
    if len(shape(x)) < min_nd:
        raise ShapeError(f"{name} only works on arrays of {min_nd} or more dimensions")
    return split(x, ios, axis)


def hsplit(ary, indices_or_sections):
    x = value(ary, "hsplit")
    return _split_nd("hsplit", x, indices_or_sections, 1 if len(shape(x)) > 1 else 0, 1)


def vsplit(ary, indices_or_sections):
    return _split_nd("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary, indices_or_sections):
    return _split_nd("dsplit", ary, indices_or_sections, 2, 3)


def tile(A, reps):
    """Broadcast a (1, s0, 1, s1, ...) view of A to (r0, s0, r1, s1, ...) and merge."""
    x = value(A, "tile")
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    nd = max(len(reps), len(shape(x)))
    s = (1,) * (nd - len(shape(x))) + shape(x)
    r = (1,) * (nd - len(reps)) + tuple(int(k) for k in reps)
    x = reshape(x, tuple(v for d in s for v in (1, d)))
    x = broadcast_to(x, tuple(v for k, d in zip(r, s) for v in (k, d)))
    return reshape(x, tuple(k * d for k, d in zip(r, s)))


def repeat(a, repeats, axis=None):
    x = value(a, "repeat")
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis("repeat", axis, len(shape(x)))
    if isinstance(repeats, Tracer):
        raise ArgumentError("repeat: repeats must be concrete (they fix the result's shape)")
    if np.ndim(repeats) == 0:
        k = int(repeats)
        y = expand_dims(x, ax + 1)
        y = broadcast_to(y, shape(x)[:ax + 1] + (k,) + shape(x)[ax + 1:])
        return reshape(y, shape(x)[:ax] + (shape(x)[ax] * k,) + shape(x)[ax + 1:])
    idx = np.repeat(np.arange(shape(x)[ax]), repeats)
    return take(x, idx, axis=ax)


def flip(m, axis=None):
    x = value(m, "flip")
    axes = normalize_axes("flip", axis, len(shape(x)))
    return run_kernel("rev", [x], {"axes": axes}) if axes else x


def fliplr(m):
    if len(shape(value(m, "fliplr"))) < 2:
        raise ShapeError("fliplr: input must be >= 2-d")
    return flip(m, 1)


def flipud(m):
    if len(shape(value(m, "flipud"))) < 1:
        raise ShapeError("flipud: input must be >= 1-d")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    x = value(m, "rot90")
    nd = len(shape(x))
    a0, a1 = (normalize_axis("rot90", a, nd) for a in axes)
    if len(axes) != 2 or a0 == a1:
        raise ShapeError("rot90: axes must be two different axes")
    k %= 4
    if k == 0:
        return flip(x, ())
    if k == 2:
        return flip(x, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return transpose(flip(x, a1), perm) if k == 1 else flip(transpose(x, perm), a1)


def roll(a, shift, axis=None):
    x = value(a, "roll")
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), shape(x))
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        ax = normalize_axis("roll", ax, len(shape(x)))
        n = shape(x)[ax]
        s = s % n if n else 0
        if s:
            lead = (slice(None),) * ax
            x = concatenate([getitem(x, lead + (slice(n - s, None),)),
                             getitem(x, lead + (slice(0, n - s),))], axis=ax)
    return x


def pad(array, pad_width, mode="constant", **kwargs):
    """Modes constant (any constant_values), edge, reflect, symmetric, wrap."""
    x = value(array, "pad")
    nd = len(shape(x))
    widths = np.broadcast_to(np.asarray(pad_width, np.int64), (nd, 2))
    if np.any(widths < 0):
        raise ShapeError("pad: pad_width must be non-negative")
    if mode == "constant":
        lo, hi = tuple(widths[:, 0].tolist()), tuple(widths[:, 1].tolist())
        out = run_kernel("pad", [x], {"lo": lo, "hi": hi, "interior": (0,) * nd})
        cv = np.broadcast_to(np.asarray(kwargs.get("constant_values", 0)), (nd, 2))
        for ax in range(nd):        # as NumPy: each axis' constants overwrite the edges
            for side, c in enumerate(cv[ax]):
                if c != 0 and widths[ax, side]:
                    mask = np.zeros(shape(out)[ax], bool)
                    mask[slice(0, widths[ax, 0]) if side == 0 else
                         slice(shape(out)[ax] - widths[ax, 1], None)] = True
                    mask = mask.reshape((-1,) + (1,) * (nd - ax - 1))
                    out = where(mask, convert(c.item(), dtype_of(x), "pad"), out)
        return out
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise ArgumentError(f"pad: mode {mode!r} is not supported (use constant, edge, "
                            f"reflect, symmetric or wrap)")
    return _positions(x, lambda p: np.pad(p, widths, mode=mode, **kwargs))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal's axis goes last, as in NumPy."""
    x = value(a, "diagonal")
    nd = len(shape(x))
    if nd < 2:
        raise ShapeError("diagonal requires an array of at least two dimensions")
    return _positions(x, lambda p: np.diagonal(p, offset, axis1, axis2).copy())


def diag(v, k=0):
    x = value(v, "diag")
    if len(shape(x)) == 2:
        return diagonal(x, k)
    if len(shape(x)) != 1:
        raise ShapeError("diag: input must be 1-d or 2-d")
    m = shape(x)[0]
    n = m + abs(k)
    if m == 0:
        return _empty_like(x, (n, n))
    # row r holds v[r] (k >= 0); column c holds v[c] (k < 0)
    vals = expand_dims(take(x, np.clip(np.arange(n), 0, m - 1)), 1 if k >= 0 else 0)
    return where(np.eye(n, k=k, dtype=bool), vals, convert(0, dtype_of(x), "diag"))


def diagflat(v, k=0):
    return diag(ravel(value(v, "diagflat")), k)


def _tri_mask(x, k, lower):
    n, m = shape(x)[-2:]
    return np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)


def tril(m, k=0):
    x = value(m, "tril")
    if len(shape(x)) < 2:
        raise ShapeError("tril: input must be at least 2-d")
    return where(_tri_mask(x, k, True), x, convert(0, dtype_of(x), "tril"))


def triu(m, k=0):
    x = value(m, "triu")
    if len(shape(x)) < 2:
        raise ShapeError("triu: input must be at least 2-d")
    return where(_tri_mask(x, k, False), x, convert(0, dtype_of(x), "triu"))


def append(arr, values, axis=None):
    x, v = value(arr, "append"), value(values, "append")
    if axis is None:
        x, v, axis = ravel(x), ravel(v), 0
    dt = result_dtype("append", x, v)
    return concatenate([convert(x, dt), convert(v, dt)], axis=axis)


def _coded(name, x, np_fn, extra=None):
    """np_fn on x's positions (and on -1 - positions of `extra`, whose elements it may
    insert), then a gather from x's (and extra's) flattened elements."""
    n = int(np.prod(shape(x), dtype=np.int64))
    pos = np.arange(n).reshape(shape(x))
    if extra is None:
        code = np_fn(pos, None)
        src = ravel(x)
    else:
        code = np_fn(pos, -1 - np.arange(int(np.prod(shape(extra)))).reshape(shape(extra)))
        src = concatenate([ravel(x), ravel(convert(extra, dtype_of(x), name))])
        code = np.where(code < 0, n - 1 - code, code)
    if code.size == 0:
        return _empty_like(x, code.shape)
    return take(src, code)


def insert(arr, obj, values, axis=None):
    """values are cast to arr's dtype, as in NumPy."""
    x, v = value(arr, "insert"), value(values, "insert")
    if isinstance(obj, Tracer):
        raise ArgumentError("insert: obj must be concrete (it fixes the result's shape)")
    return _coded("insert", x, lambda p, e: np.insert(p, obj, e, axis=axis), v)


def delete(arr, obj, axis=None):
    x = value(arr, "delete")
    if isinstance(obj, Tracer):
        raise ArgumentError("delete: obj must be concrete (it fixes the result's shape)")
    return _coded("delete", x, lambda p, e: np.delete(p, obj, axis=axis))
