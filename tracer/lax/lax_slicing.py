"""jax.lax's static and dynamic slicing. Static slices are basic indexing; dynamic ones are
one-window gathers and scatters (tracer.lax.lax_gather), with jax's start rule: a negative
start counts from the end once, then the start is clamped so the window fits.
"""
import builtins

import numpy as np

from ir.errors import DTypeError, ShapeError, ShapeMismatchError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.numpy._base import is_weak
from tracer.lax.lax_elementwise import same_dtype
from tracer.lax.lax_gather import GatherScatterMode, window_positions
from tracer.lax.lax_shapes import axis_of

_CLAMP = GatherScatterMode.CLIP


def slice(operand, start_indices, limit_indices, strides=None):    # noqa: A001  (jax name)
    """jax.lax.slice: operand[start:limit:stride] per dimension (no negative indices)."""
    x = tnp.asarray(operand)
    strides = (1,) * x.ndim if strides is None else tuple(strides)
    spec = list(zip(start_indices, limit_indices, strides))
    if len(spec) != x.ndim or len(strides) != x.ndim or any(
            not (0 <= b <= e <= n and s >= 1) for (b, e, s), n in zip(spec, x.shape)):
        raise ShapeError(f"lax.slice: starts {tuple(start_indices)}, limits "
                         f"{tuple(limit_indices)}, strides {strides} must give, per dimension "
                         f"of {x.shape}, 0 <= start <= limit <= size and stride >= 1")
    return tnp.copy(x[tuple(builtins.slice(*s) for s in spec)])


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    x = tnp.asarray(operand)
    axis = axis_of("slice_in_dim", axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else start_index % n if start_index < 0 else start_index
    limit = n if limit_index is None else limit_index % n if limit_index < 0 else limit_index
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    x = tnp.asarray(operand)
    axis = axis_of("index_in_dim", axis, x.ndim)
    index = index + x.shape[axis] if index < 0 else index
    if not 0 <= index < x.shape[axis]:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} "
                         f"of size {x.shape[axis]}")
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else tnp.reshape(out, x.shape[:axis] + x.shape[axis + 1:])


def _window(name, x, start_indices, sizes):
    """Flat positions of the window of `sizes` at the (jax-normalized, clamped) start."""
    if len(start_indices) != x.ndim:
        raise ShapeError(f"lax.{name}: needs one start index per dimension of {x.shape}, got "
                         f"{len(start_indices)}")
    starts, strong = [], set()          # Python ints (weak) go with any integer dtype
    for s, n in zip(start_indices, x.shape):
        weak, s = is_weak(s), tnp.asarray(s)
        if s.ndim or dtype_kind(s.dtype) not in "iu":
            raise ShapeMismatchError(f"lax.{name}: start indices must be integer scalars, got "
                                     f"{s.dtype}{list(s.shape)}")
        if not weak:
            strong.add(str(s.dtype))
        s = tnp.astype(s, np.int64)
        starts.append(tnp.where(s < 0, s + n, s))
    if len(strong) > 1:
        raise DTypeError(f"lax.{name}: index arguments to {name} must be integers of the same "
                         f"type, got: {', '.join(sorted(strong))} (convert them to one dtype, "
                         f"or pass Python ints)")
    starts = tnp.stack(starts) if starts else tnp.zeros((0,), np.int64)
    return window_positions(x.shape, starts, sizes, _CLAMP, name)[0]


def dynamic_slice(operand, start_indices, slice_sizes):
    """jax.lax.dynamic_slice: the window of slice_sizes at (possibly traced) starts."""
    x = tnp.asarray(operand)
    sizes = tuple(int(k) for k in slice_sizes)
    pos = _window("dynamic_slice", x, start_indices, sizes)
    return tnp.reshape(run_kernel("take", [tnp.ravel(x), tnp.ravel(pos)], {"axis": 0}), sizes)


def dynamic_update_slice(operand, update, start_indices):
    """jax.lax.dynamic_update_slice: operand with update written at (possibly traced)
    starts."""
    x, upd = same_dtype("dynamic_update_slice", [operand, update])
    if upd.ndim != x.ndim:
        raise ShapeError(f"lax.dynamic_update_slice: update {upd.shape} must have the rank of "
                         f"the operand {x.shape}")
    pos = _window("dynamic_update_slice", x, start_indices, upd.shape)
    out = run_kernel("scatter", [tnp.ravel(x), tnp.ravel(upd), tnp.ravel(pos)], {"how": "set"})
    return tnp.reshape(out, x.shape)


def _in_dim(x, index, axis):
    starts = [0] * x.ndim
    starts[axis_of("dynamic_slice_in_dim", axis, x.ndim)] = index
    return starts


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    x = tnp.asarray(operand)
    sizes = list(x.shape)
    sizes[axis_of("dynamic_slice_in_dim", axis, x.ndim)] = slice_size
    return dynamic_slice(x, _in_dim(x, start_index, axis), sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    x = tnp.asarray(operand)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    axis = axis_of("dynamic_index_in_dim", axis, x.ndim)
    return out if keepdims else tnp.reshape(out, x.shape[:axis] + x.shape[axis + 1:])


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    x = tnp.asarray(operand)
    return dynamic_update_slice(x, update, _in_dim(x, start_index, axis))


def dynamic_update_index_in_dim(operand, update, index, axis):
    x, upd = tnp.asarray(operand), tnp.asarray(update)
    if upd.ndim == x.ndim - 1:
        upd = tnp.expand_dims(upd, axis_of("dynamic_update_index_in_dim", axis, x.ndim))
    return dynamic_update_slice_in_dim(x, upd, index, axis)


def index_take(src, idxs, axes):
    """jax.lax.index_take: src[idxs[0], idxs[1], ...] along `axes` (other axes kept); an
    index wraps around its axis (taken modulo its size), as JAX's."""
    x = tnp.asarray(src)
    axes = tuple(axis_of("index_take", a, x.ndim) for a in axes)
    ids = tnp.broadcast_arrays(*[tnp.remainder(i, x.shape[a]) for i, a in zip(idxs, axes)])
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    x = tnp.transpose(x, axes + rest)
    return x[tuple(ids) + (builtins.slice(None),) * len(rest)]


__all__ = ["slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_update_slice",
           "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "index_take"]
