"""Shape ops and indexing. Everything lowers to a few kernels: reshape, transpose,
broadcast_to, slice, rev, concatenate, take."""
import numpy as np

from ir.errors import ArgumentError, ShapeError
from tracer.core import Tracer, run_kernel
from tracer.numpy._base import (broadcast, convert, dtype_of, normalize_axes, normalize_axis,
                                result_dtype, shape, value)


def _shape_arg(op, shp):
    if isinstance(shp, (int, np.integer)):
        return (int(shp),)
    try:
        return tuple(int(d) for d in shp)
    except TypeError:
        raise ArgumentError(f"{op}: shape must be an int or a tuple of ints, got {shp!r} "
                            f"(inside jit, make shape arguments static)") from None


def reshape(x, newshape, *more):
    """`newshape` may contain one -1; `x.reshape(2, 3)` style is accepted too."""
    x = value(x, "reshape")
    shp = _shape_arg("reshape", (newshape,) + more if more else newshape)
    size = int(np.prod(shape(x), dtype=np.int64))
    if shp.count(-1) > 1:
        raise ShapeError(f"reshape: can only specify one unknown dimension in {shp}")
    if -1 in shp:
        known = int(np.prod([d for d in shp if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot reshape {shape(x)} ({size} elements) into {shp}")
        shp = tuple(size // known if d == -1 else d for d in shp)
    if shp == shape(x):
        return x
    return run_kernel("reshape", [x], {"shape": shp})


def ravel(x):
    return reshape(x, (-1,))


def transpose(x, axes=None):
    x = value(x, "transpose")
    nd = len(shape(x))
    perm = tuple(range(nd))[::-1] if axes is None else tuple(
        normalize_axis("transpose", a, nd) for a in axes)
    if sorted(perm) != list(range(nd)):
        raise ShapeError(f"transpose: axes {axes} are not a permutation of {nd} axes")
    if perm == tuple(range(nd)):
        return x
    return run_kernel("transpose", [x], {"perm": perm})


def swapaxes(x, a, b):
    nd = len(shape(x))
    perm = list(range(nd))
    a, b = normalize_axis("swapaxes", a, nd), normalize_axis("swapaxes", b, nd)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def broadcast_to(x, shape_):
    from tracer.numpy._base import broadcast_shapes
    x = value(x, "broadcast_to")
    shp = _shape_arg("broadcast_to", shape_)
    if broadcast_shapes("broadcast_to", shape(x), shp) != shp:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {shape(x)} to {shp}")
    return broadcast(x, shp)


def expand_dims(x, axis):
    x = value(x, "expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(shape(x)) + len(axes)
    axes = normalize_axes("expand_dims", axes, nd)
    it = iter(shape(x))
    return reshape(x, tuple(1 if i in axes else next(it) for i in range(nd)))


def squeeze(x, axis=None):
    x = value(x, "squeeze")
    shp = shape(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shp) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, len(shp))
        bad = [a for a in axes if shp[a] != 1]
        if bad:
            raise ShapeError(f"squeeze: cannot select axis {bad[0]} of shape {shp}: its size "
                             f"is not 1")
    return reshape(x, tuple(d for i, d in enumerate(shp) if i not in axes))


def concatenate(arrays, axis=0):
    xs = [value(a, "concatenate") for a in arrays]
    if not xs:
        raise ShapeError("concatenate: need at least one array to concatenate")
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if any(len(shape(x)) == 0 for x in xs):
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    dt = result_dtype("concatenate", *xs)
    ax = normalize_axis("concatenate", axis, len(shape(xs[0])))
    xs = [convert(x, dt, "concatenate") for x in xs]
    if len(xs) == 1:
        return xs[0]
    return run_kernel("concatenate", xs, {"axis": ax})


def stack(arrays, axis=0):
    xs = [value(a, "stack") for a in arrays]
    if not xs:
        raise ShapeError("stack: need at least one array to stack")
    if len({shape(x) for x in xs}) > 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got "
                         f"{[shape(x) for x in xs]}")
    ax = normalize_axis("stack", axis, len(shape(xs[0])) + 1)
    return concatenate([expand_dims(x, ax) for x in xs], axis=ax)


def take(x, indices, axis=None):
    """Gather along one axis (integer indices of any shape; negative ones wrap)."""
    x = value(x, "take")
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis("take", axis, len(shape(x)))
    n = shape(x)[ax]
    if isinstance(indices, Tracer):
        if dtype_of(indices).kind not in "iu":
            raise ArgumentError(f"take: indices must be integers, got {indices.dtype}")
        from tracer.numpy.elementwise import add, less, where
        idx = where(less(indices, 0), add(indices, n), indices)
    else:
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu" or idx.dtype == bool:
            raise ArgumentError(f"take: indices must be integers, got {idx.dtype} "
                                f"(boolean masks are not supported)")
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = idx[(idx < -n) | (idx >= n)].flat[0]
            raise ShapeError(f"take: index {bad} is out of bounds for axis {ax} with size {n}")
        idx = np.where(idx < 0, idx + n, idx).astype(np.int64)
    return run_kernel("take", [x, idx], {"axis": ax})


def getitem(x, key):
    """Basic indexing (ints, slices, None, Ellipsis) plus one integer-array index (take)."""
    x = value(x, "getitem")
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise ShapeError("getitem: an index can only have a single ellipsis ('...')")
    n_real = sum(k is not None and k is not Ellipsis for k in key)
    shp = shape(x)
    if n_real > len(shp):
        raise ShapeError(f"getitem: too many indices ({n_real}) for array of rank {len(shp)}")
    if not any(k is Ellipsis for k in key):
        key = key + (Ellipsis,)
    i = next(j for j, k in enumerate(key) if k is Ellipsis)
    key = key[:i] + (slice(None),) * (len(shp) - n_real) + key[i + 1:]
    start, limit, step, rev_axes, out_shape, array_idx = [], [], [], [], [], None
    dim = 0
    for k in key:
        if k is None:
            out_shape.append(("new", None))
            continue
        d = shp[dim]
        if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            if not -d <= k < d:
                raise ShapeError(f"getitem: index {k} is out of bounds for axis {dim} with "
                                 f"size {d}")
            k = int(k) % d
            start.append(k), limit.append(k + 1), step.append(1)
        elif isinstance(k, slice):
            r = range(*k.indices(d))
            if r.step < 0 and len(r):
                rev_axes.append(dim)
                r = range(d - 1 - r.start, d - 1 - r.start + len(r) * -r.step, -r.step)
            s = r.start if len(r) else 0
            start.append(s), limit.append(s + (len(r) - 1) * r.step + 1 if len(r) else s)
            step.append(abs(r.step))
            out_shape.append(("keep", dim))
        elif isinstance(k, (Tracer, np.ndarray, list)):
            if array_idx is not None:
                raise ShapeError("getitem: only one integer-array index is supported; "
                                 "use take() repeatedly")
            array_idx = (dim, k)
            start.append(0), limit.append(d), step.append(1)
            out_shape.append(("array", dim))
        else:
            raise ArgumentError(f"getitem: unsupported index {k!r} (use ints, slices, None, "
                                f"..., or one integer array)")
        dim += 1
    if rev_axes:
        x = run_kernel("rev", [x], {"axes": tuple(rev_axes)})
    if (tuple(start), tuple(limit), tuple(step)) != ((0,) * len(shp), shp, (1,) * len(shp)):
        x = run_kernel("slice", [x], {"start": tuple(start), "limit": tuple(limit),
                                      "step": tuple(step)})
    idx_ndim, idx_axis = 1, len(shp)
    if array_idx is not None:
        idx_axis, idx = array_idx
        x = take(x, idx, axis=idx_axis)
        idx_ndim = len(shape(idx)) if isinstance(idx, Tracer) else np.ndim(idx)
    sliced = shape(x)
    final = []
    for kind, d in out_shape:
        if kind == "new":
            final.append(1)
        elif kind == "keep":
            final.append(sliced[d + (idx_ndim - 1 if d > idx_axis else 0)])
        else:
            final.extend(sliced[d:d + idx_ndim])
    return reshape(x, tuple(final))
