"""Index arithmetic, functional assembly and type predicates of numpy 2 (issue 26).

unravel_index/ravel_multi_index are integer arithmetic; put_along_axis and fill_diagonal
are JAX's functional forms (`inplace=False` is required: arrays here are immutable, so
the new array is returned) and one `x.at[...].set`; choose is a take_along_axis of the
stacked choices; apply_along_axis is nested vmaps (as JAX's). Index checks NumPy makes
(`mode='raise'`) need concrete indices: under tracing pass mode='clip' or 'wrap', as
in JAX. trim_zeros' result size is data, so it is eager only."""

import numpy as np

from ir.errors import (ArgumentError, ArgumentValueError, ConcretizationError, DTypeError,
                       OutOfBoundsError, ShapeError)
from ir.types import dtype_kind
from tracer.core import Tracer, as_array
from tracer.numpy._base import (broadcast_shapes, convert, dtype_of, has_tracer,
                                normalize_axis, shape, value)
from tracer.numpy.bitwise import logical_not
from tracer.numpy.creation import asarray, ones, zeros
from tracer.numpy.elementwise import add, equal, multiply, where
from tracer.numpy.indexing import take, take_along_axis
from tracer.numpy.reductions import all as all_, any as any_
from tracer.numpy.rounding import floor_divide, remainder
from tracer.numpy.shape_ops import broadcast_to, expand_dims, ravel, reshape, stack

MODES = ("raise", "wrap", "clip")


def _int_index(op, x):
    x = value(x, op)
    if dtype_kind(dtype_of(x)) not in "iu":
        raise DTypeError(f"{op}: indices must be integers, got {dtype_of(x)}; astype(int)")
    return convert(x, np.int64, op)


def _dims(op, dims):
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if any(isinstance(d, Tracer) for d in dims):
        raise ConcretizationError(f"{op}: the dims (shape) must be static ints, not traced")
    return tuple(int(d) for d in dims)


def _mode_index(op, idx, d, mode):
    """idx into an axis of size d under NumPy's mode: checked ('raise', concrete only),
    wrapped or clipped."""
    if mode == "wrap":
        return remainder(idx, d)
    if mode == "clip":
        return where(idx < 0, 0, where(idx >= d, d - 1, idx))
    if isinstance(idx, Tracer):
        raise ConcretizationError(f"{op}: mode='raise' checks the indices, which are traced "
                                  f"here; pass mode='wrap' or mode='clip', as in JAX")
    if np.any((idx < 0) | (idx >= d)):
        raise OutOfBoundsError(f"{op}: invalid entry in coordinates array: an index is out "
                               f"of bounds for an axis of size {d}")
    return idx


def unravel_index(indices, shape, order="C"):
    """The coordinate arrays of flat `indices` into an array of `shape`, as NumPy
    (out-of-bounds indices raise when concrete; traced ones are clamped, as in JAX)."""
    dims = _dims("unravel_index", shape)
    if order not in ("C", "F"):
        raise ArgumentValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    idx = _int_index("unravel_index", indices)
    size = int(np.prod(dims, dtype=np.int64))
    if not isinstance(idx, Tracer) and np.any((idx < 0) | (idx >= size)):
        bad = np.asarray(idx)[(idx < 0) | (idx >= size)].flat[0]
        raise OutOfBoundsError(f"unravel_index: index {bad} is out of bounds for array with "
                               f"size {size}")
    idx = where(idx < 0, 0, where(idx >= size, max(size - 1, 0), idx))
    out = []
    for d in (reversed(dims) if order == "C" else dims):
        out.append(remainder(idx, d) if d else idx)
        idx = floor_divide(idx, d) if d else idx
    return tuple(reversed(out)) if order == "C" else tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinate arrays into an array of shape `dims`, as NumPy;
    `mode` per axis ('raise', 'wrap', 'clip', or a tuple of them)."""
    dims = _dims("ravel_multi_index", dims)
    coords = [_int_index("ravel_multi_index", c) for c in multi_index]
    if len(coords) != len(dims):
        raise ArgumentValueError(f"ravel_multi_index: parameter multi_index must be a "
                                 f"sequence of length {len(dims)}, got {len(coords)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if any(m not in MODES for m in modes) or len(modes) != len(dims):
        raise ArgumentValueError(f"ravel_multi_index: mode must be one of {MODES} or a "
                                 f"tuple of them per axis, got {mode!r}")
    if order not in ("C", "F"):
        raise ArgumentValueError(f"ravel_multi_index: order must be 'C' or 'F', got "
                                 f"{order!r}")
    strides = np.cumprod((1,) + (dims[:0:-1] if order == "C" else dims[:-1]))
    strides = strides[::-1] if order == "C" else strides
    out = np.zeros((), np.int64)
    for c, d, m, st in zip(coords, dims, modes, strides):
        out = add(out, multiply(_mode_index("ravel_multi_index", c, d, m), int(st)))
    return out


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for every i (a and the choices broadcast), as numpy.choose; under
    tracing mode='wrap' or 'clip', as in JAX."""
    if out is not None:
        raise ArgumentError("choose: out= is not supported (arrays here are immutable); "
                            "use the returned value")
    if mode not in MODES:
        raise ArgumentValueError(f"choose: mode must be one of {MODES}, got {mode!r}")
    idx = _int_index("choose", a)
    cs = [value(c, "choose") for c in choices]
    if not cs:
        raise ArgumentValueError("choose: choices must not be empty")
    idx = _mode_index("choose", idx, len(cs), mode)
    shp = broadcast_shapes("choose", shape(idx), *[shape(c) for c in cs])
    stacked = stack([broadcast_to(c, shp) for c in cs])
    pick = expand_dims(broadcast_to(idx, shp), 0)
    return reshape(take_along_axis(stacked, pick, 0), shp)


def resize(a, new_shape):
    """a's elements repeated in order to fill `new_shape`, as numpy.resize (zeros for an
    empty a)."""
    x = ravel(value(a, "resize"))
    new = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    if any(d < 0 for d in new):
        raise ArgumentValueError(f"resize: all elements of `new_shape` must be "
                                 f"non-negative, got {new_shape}")
    n = int(np.prod(new, dtype=np.int64))
    if not shape(x)[0]:
        return zeros(new, dtype_of(x))
    return reshape(take(x, np.arange(n) % shape(x)[0]), new)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each of `axes` in turn, keeping the reduced axes, as
    numpy.apply_over_axes."""
    val = value(a, "apply_over_axes")
    nd = len(shape(val))
    for axis in ((axes,) if isinstance(axes, (int, np.integer)) else axes):
        ax = normalize_axis("apply_over_axes", axis, nd)
        res = value(func(val, ax), "apply_over_axes")
        if len(shape(res)) != nd:
            res = expand_dims(res, ax)
            if len(shape(res)) != nd:
                raise ShapeError("apply_over_axes: function is not returning an array of "
                                 "the correct shape")
        val = res
    return val


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i] (a function or a value) where condlist[i] holds, the last true
    condition winning, an extra last function where none does, 0 elsewhere; x's dtype.
    Each function sees all of x (as JAX's), not only x[condlist[i]] as NumPy's, so it
    must be elementwise."""
    x = value(x, "piecewise")
    if isinstance(condlist, (bool, np.bool_, Tracer, np.ndarray)) and (
            not shape(condlist) or len(shape(condlist)) == len(shape(x))) or (
            isinstance(condlist, (list, tuple)) and condlist and
            not isinstance(condlist[0], (list, tuple, np.ndarray, Tracer)) and shape(x)):
        condlist = [condlist]
    conds = [broadcast_to(convert(value(c, "piecewise"), np.bool_), shape(x))
             for c in condlist]
    if len(funclist) == len(conds) + 1:
        none = logical_not(any_(stack(conds), axis=0)) if conds else ones(shape(x), bool)
        conds.append(none)
    elif len(funclist) != len(conds):
        raise ArgumentValueError(f"piecewise: with {len(conds)} condition(s), either "
                                 f"{len(conds)} or {len(conds) + 1} functions are needed, "
                                 f"got {len(funclist)}")
    dt = dtype_of(x)
    y = zeros(shape(x), dt)
    for cond, f in zip(conds, funclist):
        v = f(x, *args, **kw) if callable(f) else f
        y = where(cond, convert(broadcast_to(value(v, "piecewise"), shape(x)), dt), y)
    return y


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and/or trailing ('b') zeros, as numpy.trim_zeros:
    eager only, since the result's size is data."""
    if isinstance(filt, Tracer) or (isinstance(filt, (list, tuple)) and has_tracer(filt)):
        raise ConcretizationError("trim_zeros: the result's size depends on the data, so it "
                                  "cannot be traced; call it outside jit/grad/vmap, or "
                                  "mask with where")
    return as_array(np.trim_zeros(as_array(filt, "trim_zeros"), trim, axis), "trim_zeros")


def array_equiv(a1, a2):
    """Shapes that broadcast together and equal elements, as numpy.array_equiv (a Python
    bool eagerly; a traced bool under tracing)."""
    x, y = value(a1, "array_equiv"), value(a2, "array_equiv")
    try:
        broadcast_shapes("array_equiv", shape(x), shape(y))
    except ValueError:
        return False
    eq = all_(equal(x, y))
    return eq if isinstance(eq, Tracer) else bool(eq)


def isscalar(element):
    """numpy.isscalar; a 0-d traced value counts as a scalar (JAX's rule), so a jitted
    function given a Python number sees what NumPy sees."""
    if isinstance(element, Tracer):
        return element.ndim == 0
    return bool(np.isscalar(element))


def iscomplexobj(x):
    """Whether x has a complex type: never for the arrays here (no complex dtypes)."""
    return False if isinstance(x, Tracer) else bool(np.iscomplexobj(x))


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise 'has a non-zero imaginary part': all False for real arrays."""
    x = value(x, "iscomplex")
    return zeros(shape(x), bool)


def isreal(x):
    """Elementwise 'has no imaginary part': all True for real arrays."""
    x = value(x, "isreal")
    return ones(shape(x), bool)


def ascontiguousarray(a, dtype=None, *, like=None):
    """An array of a (at least 1-d, as NumPy's), as asarray."""
    out = asarray(a, dtype=dtype)
    return reshape(out, (1,)) if not shape(out) else out


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """numpy.asanyarray: asarray here (no array subclasses)."""
    return asarray(a, dtype=dtype, order=order, device=device, copy=copy)
