"""jax.lax's shape ops and array constructors, as tracer.numpy compositions with jax.lax's
argument conventions (explicit dimension lists, no negative axes where jax.lax has none).
"""
import builtins

import numpy as np

from ir.errors import ShapeError, ShapeMismatchError
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.lax.lax_elementwise import same_dtype


def _dims(name, what, dims, ndim, negative=False):
    """dims as a tuple of in-range ints; negative ones count from the end only where
    jax.lax accepts them (`negative`)."""
    dims = tuple(int(d) for d in dims)
    low = -ndim if negative else 0
    if any(not low <= d < ndim for d in dims):
        raise ShapeError(f"lax.{name}: {what} {dims} out of range for an operand of rank "
                         f"{ndim} (must be in [{low}, {ndim}))")
    dims = tuple(d % ndim for d in dims)
    if len(set(dims)) != len(dims):
        raise ShapeError(f"lax.{name}: {what} {dims} must be distinct")
    return dims


def axis_of(name, axis, ndim):
    """axis (negative counts from the end) checked against the rank."""
    return _dims(name, "axis", [axis], ndim, negative=True)[0]


def reshape(operand, new_sizes, dimensions=None):
    """jax.lax.reshape: operand (first transposed by `dimensions`) in row-major order."""
    x = tnp.asarray(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = tuple(int(d) for d in new_sizes)
    if int(np.prod(new_sizes)) != x.size or any(d < 0 for d in new_sizes):
        raise ShapeError(f"lax.reshape: cannot reshape {x.shape} into {new_sizes} (sizes must "
                         f"be non-negative with the same total)")
    return tnp.reshape(x, new_sizes)


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """jax.lax.broadcast_in_dim: operand dim i becomes output dim broadcast_dimensions[i]
    (in any order, as JAX: the operand is transposed to the output's order first)."""
    x = tnp.asarray(operand)
    shape = tuple(int(d) for d in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    _check_broadcast_in_dim(x.shape, shape, dims)
    lifted = [1] * len(shape)
    for i, d in enumerate(dims):
        lifted[d] = x.shape[i]
    x = tnp.transpose(x, sorted(range(x.ndim), key=dims.__getitem__))
    return tnp.broadcast_to(tnp.reshape(x, tuple(lifted)), shape)


def _check_broadcast_in_dim(operand, shape, dims):
    """JAX's checks, in its order and words (TypeErrors there, ShapeMismatchError here)."""
    if len(dims) != len(operand):
        problem = (f"broadcast_dimensions must have length equal to operand ndim; got "
                   f"broadcast_dimensions {dims} for operand ndim {len(operand)}")
    elif len(shape) < len(operand):
        problem = (f"target broadcast shape must have equal or higher rank to the operand "
                   f"shape; got operand ndim {len(operand)} and target broadcast ndim "
                   f"{len(shape)}")
    elif not set(dims) <= set(range(len(shape))):
        problem = (f"broadcast_dimensions must be a subset of output dimensions, got {dims} "
                   f"for operand ndim {len(operand)} and shape {shape}")
    elif any(n not in (1, shape[d]) for n, d in zip(operand, dims)):
        problem = (f"operand dimension sizes must either be 1, or be equal to their "
                   f"corresponding dimensions in the target broadcast shape; got operand of "
                   f"shape {operand}, target broadcast shape {shape}, broadcast_dimensions "
                   f"{dims}")
    elif len(set(dims)) != len(dims):
        problem = f"broadcast_dimensions must not contain duplicates, got {dims}"
    else:
        return
    raise ShapeMismatchError(f"lax.broadcast_in_dim {problem}")


def broadcast(operand, sizes):
    """jax.lax.broadcast: new leading dimensions of the given sizes."""
    x = tnp.asarray(operand)
    sizes = tuple(sizes)
    return broadcast_in_dim(x, sizes + x.shape, range(len(sizes), len(sizes) + x.ndim))


def squeeze(array, dimensions):
    x = tnp.asarray(array)
    dims = _dims("squeeze", "dimensions", dimensions, x.ndim, negative=True)
    if any(x.shape[d] != 1 for d in dims):
        raise ShapeError(f"lax.squeeze: dimensions {dims} of {x.shape} must have size 1")
    return tnp.reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in dims))


def expand_dims(array, dimensions):
    x = tnp.asarray(array)
    n = x.ndim + len(dimensions)
    dims = _dims("expand_dims", "dimensions", dimensions, n, negative=True)
    shape = list(x.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return tnp.reshape(x, tuple(shape))


def transpose(operand, permutation):
    x = tnp.asarray(operand)
    perm = _dims("transpose", "permutation", permutation, x.ndim)
    if len(perm) != x.ndim:
        raise ShapeError(f"lax.transpose: permutation {perm} must list all {x.ndim} dimensions")
    return tnp.transpose(x, perm)


def rev(operand, dimensions):
    x = tnp.asarray(operand)
    dims = _dims("rev", "dimensions", dimensions, x.ndim)
    return run_kernel("rev", [x], {"axes": dims}) if dims else tnp.copy(x)


def concatenate(operands, dimension):
    if not operands:
        raise ValueError("lax.concatenate: needs at least one operand")
    xs = same_dtype("concatenate", operands)
    _dims("concatenate", "dimension", [dimension], xs[0].ndim)
    return tnp.concatenate(xs, axis=int(dimension))


def collapse(operand, start_dimension, stop_dimension=None):
    """jax.lax.collapse: dimensions [start, stop) merged into one."""
    x = tnp.asarray(operand)
    start = axis_of("collapse", start_dimension, x.ndim)
    stop = x.ndim if stop_dimension in (None, x.ndim) else axis_of("collapse", stop_dimension,
                                                                   x.ndim)
    size = int(np.prod(x.shape[start:stop]))
    return tnp.reshape(x, x.shape[:start] + (size,) + x.shape[stop:])


def pad(operand, padding_value, padding_config):
    """jax.lax.pad: per dimension (lo, hi, interior); negative lo/hi remove elements."""
    x, v = same_dtype("pad", [operand, padding_value])
    if v.ndim:
        raise ShapeError(f"lax.pad: padding_value must be a scalar, got shape {v.shape}")
    config = [tuple(int(c) for c in cfg) for cfg in padding_config]
    if len(config) != x.ndim or any(len(c) != 3 or c[2] < 0 for c in config):
        raise ShapeError(f"lax.pad: padding_config needs one (lo, hi, interior) triple per "
                         f"dimension of {x.shape} with interior >= 0, got {padding_config}")
    lo, hi, interior = ([c[k] for c in config] for k in range(3))
    attrs = {"lo": tuple(max(n, 0) for n in lo), "hi": tuple(max(n, 0) for n in hi),
             "interior": tuple(interior)}
    grown = run_kernel("pad", [x], attrs)
    grown = tnp.where(run_kernel("pad", [tnp.ones(x.shape, bool)], attrs), grown, v)
    starts = [max(-n, 0) for n in lo]
    stops = [n - max(-h, 0) for n, h in zip(grown.shape, hi)]
    if any(b > e for b, e in zip(starts, stops)):
        raise ShapeError(f"lax.pad: padding_config {config} leaves a negative size of "
                         f"{x.shape}")
    return grown[tuple(slice(b, e) for b, e in zip(starts, stops))] if any(
        b or e != n for b, e, n in zip(starts, stops, grown.shape)) else grown


def split(operand, sizes, axis=0):
    """jax.lax.split: consecutive pieces of the given sizes along axis."""
    x = tnp.asarray(operand)
    axis = axis_of("split", axis, x.ndim)
    sizes = [int(n) for n in sizes]
    if sum(sizes) != x.shape[axis] or min(sizes, default=0) < 0:
        raise ShapeError(f"lax.split: sizes {sizes} must be non-negative and add up to "
                         f"dimension {axis} of {x.shape}")
    edges = np.cumsum([0] + sizes)
    return [tnp.copy(x[(builtins.slice(None),) * axis + (builtins.slice(b, e),)])
            for b, e in zip(edges[:-1], edges[1:])]


def stack(operands, axis=0):
    axis = axis_of("stack", axis, tnp.asarray(operands[0]).ndim + 1)
    return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    x = tnp.asarray(x)
    return tuple(squeeze(p, (axis,)) for p in split(x, [1] * x.shape[axis], axis))


def tile(operand, reps):
    x = tnp.asarray(operand)
    if len(reps) != x.ndim:
        raise ShapeError(f"lax.tile: needs one repetition count per dimension of {x.shape}, "
                         f"got {tuple(reps)}")
    return tnp.tile(x, tuple(int(r) for r in reps))


def broadcast_to_rank(x, rank):
    x = tnp.asarray(x)
    return tnp.copy(x) if x.ndim >= rank else broadcast(x, (1,) * (rank - x.ndim))


def broadcast_like(arr, like_arr):
    x, like = tnp.asarray(arr), tnp.asarray(like_arr)
    return broadcast(x, like.shape[:like.ndim - x.ndim])


def empty(shape, dtype, *, out_sharding=None):
    return tnp.zeros(tuple(int(d) for d in shape), np.dtype(dtype))


def iota(dtype, size):
    return tnp.arange(int(size), dtype=np.dtype(dtype))


def broadcasted_iota(dtype, shape, dimension):
    shape = tuple(int(d) for d in shape)
    (d,) = _dims("broadcasted_iota", "dimension", [dimension], len(shape))
    return broadcast_in_dim(iota(dtype, shape[d]), shape, (d,))


def broadcast_shapes(*shapes):
    return tnp.broadcast_shapes(*shapes)


def full(shape, fill_value, dtype=None):
    v = tnp.asarray(fill_value)
    if v.ndim:
        raise ShapeError(f"lax.full: fill_value must be a scalar, got shape {v.shape}")
    if dtype is not None:
        v = tnp.astype(v, np.dtype(dtype))
    return tnp.broadcast_to(v, tuple(int(d) for d in shape))


def full_like(x, fill_value, dtype=None, shape=None):
    x = tnp.asarray(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype)


def zeros_like_array(x):
    return full_like(x, 0)


__all__ = ["reshape", "broadcast_in_dim", "broadcast", "squeeze", "expand_dims", "transpose",
           "rev", "concatenate", "collapse", "pad", "split", "stack", "unstack", "tile",
           "broadcast_to_rank", "broadcast_like", "broadcast_shapes", "empty", "iota", "broadcasted_iota", "full",
           "full_like", "zeros_like_array"]
