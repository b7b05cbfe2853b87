"""Shape ops. Everything lowers to a few kernels: reshape, transpose, broadcast_to,
concatenate (indexing is in tracer.numpy.indexing)."""
import math
import operator

import numpy as np

from ir import check_dtype
from ir.errors import ArgumentError, ArgumentValueError, ShapeError, ShapeMismatchError
from registry import infer_avals
from tracer.core import Tracer, run_kernel
from tracer.numpy import _base
from tracer.numpy._base import (broadcast, check_casting, convert, dtype_of, fresh, no_out,
                                normalize_axes, normalize_axis, result_dtype, shape, value)


def _shape_arg(op, shp, unknown_ok=False):
    """A shape argument as a tuple of non-negative ints (one -1 allowed for reshape)."""
    try:
        dims = (operator.index(shp),) if not hasattr(shp, "__iter__") else tuple(
            operator.index(d) for d in shp)
    except TypeError:
        raise ArgumentError(f"{op}: shape must be an int or a tuple of ints, got {shp!r} "
                            f"(inside jit, make shape arguments static)") from None
    bad = [d for d in dims if d < -1 or d == -1 and not unknown_ok]
    if bad or dims.count(-1) > 1:
        raise ShapeMismatchError(f"{op}: invalid shape {dims}: dimensions must be non-negative"
                         + (" (with at most one -1)" if unknown_ok else ""))
    return dims


def reshape(a, shape=None, *more, order="C", newshape=None, copy=None):
    """numpy.reshape: `shape` may contain one -1; `x.reshape(2, 3)` style is accepted too.
    order="F" reads and writes the elements with the first index fastest; "A" means "F"
    for an eager array that is only Fortran-contiguous, else "C" (as NumPy). `copy` changes
    nothing: results never alias a traced value."""
    if more and isinstance(more[-1], str):         # numpy.reshape(a, shape, order)
        *more, order = more
    if newshape is not None:
        if shape is not None:
            raise ArgumentValueError("reshape: pass shape= or newshape=, not both")
        shape = newshape
    if shape is None:
        raise ArgumentError("reshape: missing the shape argument")
    if order not in ("C", "F", "A"):
        raise ArgumentValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    if order == "A":
        order = "F" if (isinstance(a, np.ndarray) and a.flags.f_contiguous
                        and not a.flags.c_contiguous) else "C"
    x = value(a, "reshape")
    shp = _shape_arg("reshape", (shape, *more) if more else shape, unknown_ok=True)
    if -1 in shp:
        size = math.prod(_base.shape(x))
        known = math.prod(d for d in shp if d != -1)        # exact: int64 would wrap
        if known == 0 or size % known:
            raise ShapeMismatchError(f"reshape: cannot reshape {_base.shape(x)} ({size} "
                                     f"elements) into {shp}")
        shp = tuple(size // known if d == -1 else d for d in shp)
    if order == "F":      # reversing every axis turns first-fastest into last-fastest
        return transpose(_reshape_c(transpose(x), shp[::-1]))
    return _reshape_c(x, shp)


def _reshape_c(x, shp):
    if shp == _base.shape(x):
        return unchanged(x)
    return run_kernel("reshape", [x], {"shape": shp})


def unchanged(x):
    """An op that changes nothing returns a traced value as it is, but never an eager
    argument itself: eager results are arrays of their own, as under jit."""
    return x if isinstance(x, Tracer) else np.array(x)


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def transpose(a, axes=None):
    x = value(a, "transpose")
    nd = len(shape(x))
    perm = tuple(range(nd))[::-1] if axes is None else tuple(
        normalize_axis("transpose", a, nd) for a in axes)
    if sorted(perm) != list(range(nd)):
        raise ShapeMismatchError(f"transpose: axes {axes} are not a permutation of {nd} axes")
    if perm == tuple(range(nd)):
        return unchanged(x)
    return run_kernel("transpose", [x], {"perm": perm})


def swapaxes(a, axis1, axis2):
    x = value(a, "swapaxes")
    nd = len(shape(x))
    perm = list(range(nd))
    a, b = normalize_axis("swapaxes", axis1, nd), normalize_axis("swapaxes", axis2, nd)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def broadcast_to(array, shape, subok=False):
    """numpy.broadcast_to (`subok` changes nothing: there are no array subclasses here)."""
    from tracer.numpy._base import aval, broadcast_shapes
    x = value(array, "broadcast_to")
    shp = _shape_arg("broadcast_to", shape)
    if broadcast_shapes("broadcast_to", _base.shape(x), shp) != shp:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {_base.shape(x)} to {shp}")
    if not isinstance(x, Tracer):       # a new array, as the kernel would give
        infer_avals("broadcast_to", [aval(x)], {"shape": shp})
        return np.array(np.broadcast_to(x, shp))
    return broadcast(x, shp)


def expand_dims(a, axis):
    x = value(a, "expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(shape(x)) + len(axes)
    axes = normalize_axes("expand_dims", axes, nd)
    it = iter(shape(x))
    return reshape(x, tuple(1 if i in axes else next(it) for i in range(nd)))


def squeeze(a, axis=None):
    x = value(a, "squeeze")
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


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concatenate; `dtype` is the result's (default: the operands' promotion), each
    operand castable to it under NumPy's `casting` rule."""
    no_out("concatenate", out)
    return joined([value(a, "concatenate") for a in arrays], axis, dtype, casting)


def joined(xs, axis, dtype=None, casting="same_kind", op="concatenate"):
    """concatenate of values `xs`, whose shape errors name `op`, the function the user
    called (vstack, hstack...); dtype and casting errors name concatenate's rules."""
    if not xs:
        raise ShapeError(f"{op}: need at least one array to concatenate")
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if any(len(shape(x)) == 0 for x in xs):
        raise ShapeError(f"{op}: zero-dimensional arrays cannot be concatenated")
    dt = result_dtype("concatenate", *xs) if dtype is None else check_dtype(dtype,
                                                                             "concatenate")
    check_casting("concatenate", casting, [dtype_of(x) for x in xs], dt)
    ax = normalize_axis(op, axis, len(shape(xs[0])))
    if len({len(shape(x)) for x in xs}) > 1 or len(
            {shape(x)[:ax] + shape(x)[ax + 1:] for x in xs}) > 1:    # (the kernel's check)
        raise ShapeMismatchError(f"{op}: shapes {[shape(x) for x in xs]} differ off axis {ax}")
    if len(xs) == 1:
        return fresh(convert(xs[0], dt, "concatenate"), xs[0])
    xs = [convert(x, dt, "concatenate") for x in xs]
    return run_kernel("concatenate", xs, {"axis": ax})


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    no_out("stack", out)
    xs = [value(a, "stack") for a in arrays]
    if not xs:
        raise ShapeError("stack: need at least one array to stack")
    if len({shape(x) for x in xs}) > 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got "
                         f"{[shape(x) for x in xs]}")
    ax = normalize_axis("stack", axis, len(shape(xs[0])) + 1)
    return concatenate([expand_dims(x, ax) for x in xs], axis=ax, dtype=dtype, casting=casting)


def moveaxis(a, source, destination):
    x = value(a, "moveaxis")
    nd = len(shape(x))
    src = [normalize_axis("moveaxis", s, nd) for s in
           (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [normalize_axis("moveaxis", d, nd) for d in
           (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"moveaxis: source {source} and destination {destination} must be "
                         f"distinct axes, as many of each")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, tuple(order))


def rollaxis(a, axis, start=0):
    x = value(a, "rollaxis")
    nd = len(shape(x))
    ax = normalize_axis("rollaxis", axis, nd)
    if not -nd <= start <= nd:
        raise ShapeError(f"rollaxis: start {start} is out of bounds for rank {nd}")
    start = start % (nd + 1) if start < 0 else start
    if ax < start:
        start -= 1
    return moveaxis(x, ax, start) if ax != start else unchanged(x)


def broadcast_shapes(*shapes):
    from tracer.numpy._base import broadcast_shapes as _bs
    return _bs("broadcast_shapes", *[_shape_arg("broadcast_shapes", s) for s in shapes])


def broadcast_arrays(*args, subok=False):
    xs = [value(a, "broadcast_arrays") for a in args]
    shp = broadcast_shapes(*[shape(x) for x in xs])
    return tuple(broadcast_to(x, shp) for x in xs)


def _atleast(nd, name, arys, place):
    outs = []
    for a in arys:
        x = value(a, name)
        s = shape(x)
        outs.append(reshape(x, place(s)) if len(s) < nd else unchanged(x))
    return outs[0] if len(outs) == 1 else tuple(outs)


def atleast_1d(*arys):
    return _atleast(1, "atleast_1d", arys, lambda s: (1,))


def atleast_2d(*arys):
    return _atleast(2, "atleast_2d", arys, lambda s: (1,) * (2 - len(s)) + s)


def atleast_3d(*arys):
    """NumPy's rule: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(3, "atleast_3d", arys, lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,),
                                                      2: s + (1,)}[len(s)])
