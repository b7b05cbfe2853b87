"""jax.flatten_util's ravel_pytree: a pytree of arrays as one vector and the function that
rebuilds the pytree from such a vector, for optimizers, line searches and finite-difference
checks written for flat parameters. As in JAX, the vector's dtype is the promotion of the
leaves' dtypes taken as strongly typed (a Python float leaf counts as float64), by this
project's rule (NumPy 2's: int32 with float32 gives float64, where JAX gives float32); the
rebuilt leaves take their own dtypes back. An empty pytree ravels to an empty float32
vector."""
import functools

import numpy as np

import tracer.numpy as tnp
from ir.errors import DTypeError, ShapeError
from tracer.numpy._base import dtype_of, shape
from tracer.pytree import flatten, unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """(the leaves raveled and concatenated in tree order, unravel); unravel(vector)
    gives the pytree back and differentiates, jits and vmaps like any tracer function."""
    leaves, tree = flatten(pytree)
    arrays = [tnp.asarray(leaf) for leaf in leaves]
    dtypes = [np.dtype(dtype_of(a)) for a in arrays]
    to = tnp.result_type(*dtypes) if dtypes else np.dtype(np.float32)
    flat = tnp.concatenate([tnp.ravel(a).astype(to) for a in arrays]) if arrays else \
        tnp.zeros(0, to)
    mixed = any(dt != to for dt in dtypes)
    return flat, functools.partial(_unravel, tree, [shape(a) for a in arrays],
                                   dtypes if mixed else None, to)


def _unravel(tree, shapes, dtypes, to, flat):
    """The leaves cut from flat; cast back to their dtypes when they were promoted (then
    flat must have the promoted dtype, as JAX checks), else flat's own dtype is kept."""
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    flat = tnp.asarray(flat)
    if shape(flat) != (sum(sizes),):
        raise ShapeError(f"ravel_pytree's unravel: expected a vector of {sum(sizes)} "
                         f"elements (the raveled pytree's), got shape {shape(flat)}")
    if dtypes is not None and dtype_of(flat) != to:
        raise DTypeError(f"unravel function given array of dtype {dtype_of(flat)}, but "
                         f"expected dtype {to}; the leaves have dtypes "
                         f"{', '.join(map(str, dtypes))}, so cast the vector to {to}")
    chunks = tnp.split(flat, np.cumsum(sizes)[:-1].tolist()) if sizes else []
    leaves = [tnp.reshape(c, s) for c, s in zip(chunks, shapes)]
    if dtypes is not None:
        leaves = [leaf.astype(dt) for leaf, dt in zip(leaves, dtypes)]
    return unflatten(tree, leaves)
