"""jax.lax.gather and the scatter family with XLA's dimension numbers, and the dynamic
slices (which are gathers and scatters of one window).

One mechanism serves all of them: every element of every window is one flat position of
the operand, `start . strides + offset` (start: the window's clamped start per operand
dimension; offset: the element's place in the window, a constant). A gather is then one
`take` of the raveled operand, a scatter one `scatter` into it, so both differentiate,
batch and compile like those kernels. Out-of-bounds windows follow jax's modes: clamped
("clip", "promise_in_bounds", and gather's default), filled with `fill_value` (gather
"fill") or dropped (scatter's default "fill"/"drop": the window's writes go to one slot
past the end, which is then cut off).
"""
import enum
from typing import NamedTuple

import numpy as np

from ir.errors import DTypeError, ShapeError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.lax.gather_checks import check_gather, check_scatter
from tracer.lax.lax_elementwise import same_dtype
from tracer.lax.loops import fori_loop


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        modes = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
        if s not in modes:
            raise ValueError(f'Unknown gather mode "{s}" (use "clip", "fill", "drop" or '
                             f'"promise_in_bounds")')
        return modes[s]


def window_positions(shape, starts, sizes, mode, name):
    """(flat operand positions of each window, shaped batch + sizes; in-bounds mask of each
    window, shaped batch, or None when clamped). starts: int array, batch + (len(shape),)."""
    if any(not 0 <= k <= n for k, n in zip(sizes, shape)) or len(sizes) != len(shape):
        raise ShapeError(f"lax.{name}: slice sizes {tuple(sizes)} must be one per dimension "
                         f"of {tuple(shape)}, each between 0 and that dimension")
    starts = tnp.astype(starts, np.int64)
    limit = np.array(shape, np.int64) - np.array(sizes, np.int64)
    inside = None
    if mode is GatherScatterMode.FILL_OR_DROP:
        inside = tnp.all((starts >= 0) & (starts <= limit), axis=-1)
    starts = tnp.clip(starts, 0, limit)
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1].astype(np.int64)
    offset = sum(np.arange(k).reshape((-1,) + (1,) * (len(sizes) - d - 1)) * strides[d]
                 for d, k in enumerate(sizes)) if sizes else np.int64(0)
    first = tnp.sum(starts * strides, axis=-1)
    return tnp.reshape(first, first.shape + (1,) * len(sizes)) + offset, inside


def _starts(name, operand_ndim, indices, index_map, operand_batching, index_batching):
    """The start of every window, shaped indices.shape[:-1] + (operand_ndim,)."""
    idx = tnp.asarray(indices)
    if dtype_kind(idx.dtype) not in "iu":
        raise DTypeError(f"lax.{name}: indices must be integers, got {idx.dtype}")
    batch = idx.shape[:-1]
    zero = tnp.zeros(batch, np.int64)
    cols = []
    for d in range(operand_ndim):
        if d in index_map:
            cols.append(tnp.astype(idx[..., list(index_map).index(d)], np.int64))
        elif d in operand_batching:
            axis = index_batching[list(operand_batching).index(d)]    # before the index axis
            ramp = np.arange(batch[axis]).reshape((-1,) + (1,) * (len(batch) - axis - 1))
            cols.append(zero + ramp)
        else:
            cols.append(zero)
    return tnp.stack(cols, axis=-1) if cols else tnp.zeros(batch + (0,), np.int64)


def _fill(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    kind = dtype_kind(dtype)
    if kind in "fb":
        return np.nan if kind == "f" else True
    return np.iinfo(dtype).max if kind == "u" else np.iinfo(dtype).min


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """jax.lax.gather: windows of `operand` at `start_indices` (index vector last)."""
    x = tnp.asarray(operand)
    dn = dimension_numbers
    sizes = tuple(int(k) for k in slice_sizes)
    check_gather(x.shape, np.shape(start_indices), dn, sizes)
    dropped = tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims)
    starts = _starts("gather", x.ndim, start_indices, dn.start_index_map,
                     dn.operand_batching_dims, dn.start_indices_batching_dims)
    parsed = GatherScatterMode.from_any(mode) if mode is not None else GatherScatterMode.CLIP
    pos, inside = window_positions(x.shape, starts, sizes, parsed, "gather")
    kept = [d for d in range(x.ndim) if d not in dropped]
    nb = starts.ndim - 1
    pos = tnp.reshape(pos, pos.shape[:nb] + tuple(sizes[d] for d in kept))
    out_ndim = nb + len(kept)
    batch_dims = [d for d in range(out_ndim) if d not in dn.offset_dims]
    order = np.argsort(batch_dims + list(dn.offset_dims))     # output dim <- pos dim
    pos = tnp.transpose(pos, tuple(int(o) for o in order))
    out = tnp.reshape(run_kernel("take", [tnp.ravel(x), tnp.ravel(pos)], {"axis": 0}),
                      pos.shape)
    if inside is None:
        return out
    inside = tnp.reshape(inside, inside.shape + (1,) * len(kept))
    inside = tnp.transpose(inside, tuple(int(o) for o in order))
    return tnp.where(inside, out, tnp.astype(tnp.asarray(_fill(x.dtype, fill_value)), x.dtype))


def _scatter(name, how, operand, scatter_indices, updates, dimension_numbers, mode):
    x, upd = same_dtype(name, [operand, updates])
    dn = dimension_numbers
    check_scatter(name, x.shape, np.shape(scatter_indices), upd.shape, dn)
    dropped = tuple(dn.inserted_window_dims) + tuple(dn.operand_batching_dims)
    window = [d for d in range(x.ndim) if d not in dropped]
    sizes = [1] * x.ndim
    for d, u in zip(window, dn.update_window_dims):
        sizes[d] = upd.shape[u]
    starts = _starts(name, x.ndim, scatter_indices, dn.scatter_dims_to_operand_dims,
                     dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    scatter_dims = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    pos, inside = window_positions(x.shape, starts, sizes, GatherScatterMode.from_any(mode),
                                   name)
    upd = tnp.transpose(upd, tuple(scatter_dims) + tuple(dn.update_window_dims))
    flat = tnp.ravel(x)
    if inside is not None:                         # dropped windows write one slot past the end
        pos = tnp.where(tnp.reshape(inside, inside.shape + (1,) * x.ndim), pos, x.size)
        flat = tnp.concatenate([flat, tnp.zeros((1,), x.dtype)])
    out = run_kernel("scatter", [flat, tnp.ravel(upd), tnp.ravel(pos)], {"how": how})
    return tnp.reshape(out[:x.size] if inside is not None else out, x.shape)


def _scatter_op(name, how, transform=None):
    def op(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        updates = transform(updates) if transform else updates
        return _scatter(name, how, operand, scatter_indices, updates, dimension_numbers, mode)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"jax.lax.{name}: updates combined into operand's windows ({how}); "
                  f"out-of-bounds windows are dropped unless mode='clip'.")
    return op


scatter = _scatter_op("scatter", "set")
scatter_add = _scatter_op("scatter_add", "add")
scatter_sub = _scatter_op("scatter_sub", "add", tnp.negative)
scatter_mul = _scatter_op("scatter_mul", "mul")
scatter_min = _scatter_op("scatter_min", "min")
scatter_max = _scatter_op("scatter_max", "max")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """jax.lax.scatter_apply: func (elementwise) applied to each element once per window
    covering it, as XLA's scatter does for repeated indices."""
    x = tnp.asarray(operand)
    hits = _scatter("scatter_apply", "add", tnp.zeros(x.shape, np.int32), scatter_indices,
                    tnp.ones(tuple(update_shape), np.int32), dimension_numbers, mode)
    times = tnp.max(hits) if x.size else 0
    return fori_loop(0, times, lambda j, v: tnp.where(hits > j, func(v), v), x)


__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max", "scatter_apply"]
