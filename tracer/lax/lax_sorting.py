"""jax.lax.sort (several operands, lexicographic keys), sort_key_val and top_k, from the
stable argsort kernel: each key, from the last to the first, reorders the permutation
stably, so equal keys keep their order (NaNs sort last, -0.0 equals 0.0, as in jax).
"""
import numpy as np

from ir.errors import ShapeError
from tracer import numpy as tnp
from tracer.lax.lax_shapes import rev


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
    axis = dimension % xs[0].ndim
    order = _permutation(xs[:num_keys], axis)
    out = tuple(tnp.take_along_axis(x, order, axis=axis) for x in xs)
    return out[0] if single else out


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """jax.lax.sort_key_val: keys sorted along dimension, values carried along."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k):
    """jax.lax.top_k: the k largest entries along the last axis, in descending order, and
    their int32 indices (the first of equal entries first; NaN counts as largest)."""
    x = tnp.asarray(operand)
    k = int(k)
    if not x.ndim or not 0 <= k <= x.shape[-1]:
        raise ShapeError(f"lax.top_k: k={k} must be between 0 and the last dimension of "
                         f"{x.shape}")
    n, last = x.shape[-1], x.ndim - 1
    # ascending stable order of the reversed row, read backwards: descending, ties in order
    order = rev(tnp.argsort(rev(x, (last,)), axis=-1), (last,))[..., :k]
    return [tnp.take_along_axis(x, n - 1 - order, axis=-1),
            tnp.astype(n - 1 - order, np.int32)]


__all__ = ["sort", "sort_key_val", "top_k"]
