"""jax.lax.sort (several operands, lexicographic keys), sort_key_val and top_k, from the
stable argsort kernel: each key, from the last to the first, reorders the permutation
stably, so equal keys keep their order (NaNs sort last, -0.0 equals 0.0, as in jax).
"""
import numpy as np

from ir.errors import ShapeError
from tracer import numpy as tnp
from tracer.lax.lax_shapes import axis_of, rev


def _permutation(keys, axis):
    order = None
    for key in reversed(keys):
        k = key if order is None else tnp.take_along_axis(key, order, axis=axis)
        step = tnp.argsort(k, axis=axis)
        order = step if order is None else tnp.take_along_axis(order, step, axis=axis)
    return order


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """jax.lax.sort: operand (an array, or a sequence of arrays of one shape sorted together
    by their first num_keys arrays) along dimension."""
    single = not isinstance(operand, (tuple, list))
    xs = [tnp.asarray(x) for x in ([operand] if single else operand)]
    if not xs or any(x.shape != xs[0].shape for x in xs) or not xs[0].ndim:
        raise ShapeError(f"lax.sort: needs one or more arrays of one shape (rank >= 1), got "
                         f"{[x.shape for x in xs]}")
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"lax.sort: num_keys={num_keys} must be between 1 and the number "
                         f"of operands ({len(xs)})")
    axis = axis_of("sort", dimension, xs[0].ndim)
    order = _permutation(xs[:num_keys], axis)
    out = tuple(tnp.take_along_axis(x, order, axis=axis) for x in xs)
    return out[0] if single else out


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """jax.lax.sort_key_val: keys sorted along dimension, values carried along."""
    return sort((keys, values), dimension, is_stable, 1)


def _extremes(name, x, k, axis, largest):
    """The k largest (or smallest) entries along axis in order, and their int32 indices;
    equal entries keep their order, NaN counts as the largest."""
    x = tnp.asarray(x)
    k = int(k)
    axis = axis_of(name, axis, x.ndim) if x.ndim else axis
    if not x.ndim or not 0 <= k <= x.shape[axis]:
        raise ShapeError(f"lax.{name}: k={k} must be between 0 and dimension {axis} of "
                         f"{x.shape}")
    x = tnp.moveaxis(x, axis, -1)
    n, last = x.shape[-1], x.ndim - 1
    if n > np.iinfo(np.int32).max:
        raise ShapeError(f"lax.{name}: {name} returns int32 indices, which will overflow for "
                         f"an axis of {n} entries; split the axis into rows and combine the "
                         f"rows' results")
    if largest:     # the stable ascending order of the reversed row, read backwards
        index = n - 1 - rev(tnp.argsort(rev(x, (last,)), axis=-1), (last,))[..., :k]
    else:
        index = tnp.argsort(x, axis=-1)[..., :k]
    return [tnp.moveaxis(tnp.take_along_axis(x, index, axis=-1), -1, axis),
            tnp.moveaxis(tnp.astype(index, np.int32), -1, axis)]


def top_k(operand, k, *, axis=-1):
    """jax.lax.top_k: the k largest entries along `axis` (the last by default), in
    descending order, and their int32 indices (the first of equal entries first; NaN
    counts as largest)."""
    return _extremes("top_k", operand, k, axis, True)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """jax.lax.approx_max_k, answered exactly (recall 1)."""
    return _extremes("approx_max_k", operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """jax.lax.approx_min_k, answered exactly (recall 1)."""
    return _extremes("approx_min_k", operand, k, reduction_dimension, False)


__all__ = ["sort", "sort_key_val", "top_k", "approx_max_k", "approx_min_k"]
