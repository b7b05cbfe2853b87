"""`stop_gradient`, and reading / writing one slot of an array at a traced index.

`dynamic_index(x, i)` is `x[i]` and `dynamic_update_index(x, i, v)` is `x.at[i].set(v)`
along axis 0, with `i` a traced integer scalar; as in jax.lax, a negative `i` counts
from the end and the result is then clamped into range (the kernels only clamp): a loop
reads and writes a buffer of checkpoints with them. Batched with a batched index, they
read or write one slot per lane (a gather into the flattened batch, or a one-hot select).
"""
import numpy as np

import registry
from ir import ShapedArray
from ir.errors import DTypeError, ShapeError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.core import Tracer, run_kernel
from tracer.lax.region_batching import at_dim
from tracer.pytree import flatten, unflatten
from tracer.vmap import batch_size


def stop_gradient(x):
    """x (a pytree), with a zero gradient: differentiation treats it as a constant."""
    leaves, tree = flatten(x)
    return unflatten(tree, [run_kernel("stop_gradient", [v]) for v in leaves])


def dynamic_index(x, i):
    return run_kernel("dynamic_index", [x, _from_end(x, i)])


def dynamic_update_index(x, i, v):
    return run_kernel("dynamic_update_index", [x, _from_end(x, i), v])


def _from_end(x, i):
    """i, or i + len(x) when negative (jax's start-index rule); anything but a signed
    integer scalar is left to the kernel's shape rule to reject."""
    n = np.shape(x)[0] if np.ndim(x) else 0
    if not isinstance(i, Tracer):
        a = np.asarray(i)
        if a.ndim or dtype_kind(a.dtype) != "i" or a >= 0:
            return i
        return np.int64(int(a) + n)
    if i.shape or dtype_kind(i.dtype) != "i":
        return i
    if n > np.iinfo(i.dtype).max:           # i + n must not wrap
        i = tnp.astype(i, np.int64)
    return tnp.where(i < 0, i + n, i)


def _check_index(kernel, x, i):
    if not x.shape:
        raise ShapeError(f"{kernel}: needs an array with a leading axis, got {x}")
    if i.shape != () or dtype_kind(i.dtype) not in "iu":
        raise DTypeError(f"{kernel}: the index must be an integer scalar, got {i}")


def _index_rule(x, i):
    _check_index("dynamic_index", x, i)
    return ShapedArray(x.shape[1:], x.dtype)


def _update_rule(x, i, v):
    _check_index("dynamic_update_index", x, i)
    if v.shape != x.shape[1:] or v.dtype != x.dtype:
        raise ShapeError(f"dynamic_update_index: the update must be one slot of {x}, i.e. "
                         f"{ShapedArray(x.shape[1:], x.dtype)}, got {v}")
    return x.strip_weak()


def _slot(i, n):
    return tnp.clip(tnp.astype(i, np.int64), 0, n - 1)


def _index_batched(inputs, dims, attrs):
    (x, i), (dx, di) = inputs, dims
    size = batch_size(inputs, dims)
    if di is None:                          # x is batched; its slot axis is 0, or 1 if dx is
        if dx == 0:
            return run_kernel("take", [x, _slot(i, x.shape[1])], {"axis": 1}), 0
        return dynamic_index(x, i), dx - 1
    i = at_dim(i, di, 0, size)
    if dx is None:
        return run_kernel("take", [x, _slot(i, np.shape(x)[0])], {"axis": 0}), 0
    x = at_dim(x, dx, 0, size)              # lane b's slot i_b is row b * n + i_b
    n = x.shape[1]
    flat = tnp.reshape(x, (size * n,) + tuple(x.shape[2:]))
    rows = _slot(i, n) + tnp.arange(size, dtype=np.int64) * n
    return run_kernel("take", [flat, rows], {"axis": 0}), 0


def _update_batched(inputs, dims, attrs):
    """x batched off axis 0 and i unbatched: one dynamic_update_index (in place in a
    loop). Otherwise a one-hot select writes each lane's slot (x batched at 0 or not)."""
    (x, i, v), (dx, di, dv) = inputs, dims
    size = batch_size(inputs, dims)
    if di is None and dx:
        return dynamic_update_index(x, i, at_dim(v, dv, dx - 1, size)), dx
    x = x if dx is None else at_dim(x, dx, 0, size)
    n, lanes = np.shape(x)[0 if dx is None else 1], 1 if di is None else size
    slots = tnp.reshape(_slot(i if di is None else at_dim(i, di, 0, size), n), (lanes, 1))
    hit = tnp.equal(tnp.reshape(tnp.arange(n, dtype=np.int64), (1, n)), slots)
    v = at_dim(v, dv, 0, size)
    slot_shape = tuple(np.shape(v)[1:])
    hit = tnp.reshape(hit, (lanes, n) + (1,) * len(slot_shape))
    return tnp.where(hit, tnp.reshape(v, (size, 1) + slot_shape), x), 0


registry.declare_kernel("stop_gradient", shape=lambda x: x.strip_weak(), family="elementwise",
                        differentiable=False)
registry.declare_kernel(
    "dynamic_index", shape=_index_rule, family="gather", batching=_index_batched,
    gradient=lambda dy, i, o, a: (run_kernel("dynamic_update_index", [
        tnp.zeros(i[0].shape, i[0].dtype), i[1], dy]), None))
registry.declare_kernel(
    "dynamic_update_index", shape=_update_rule, family="scatter", batching=_update_batched,
    gradient=lambda dy, i, o, a: (run_kernel("dynamic_update_index", [
        dy, i[1], tnp.zeros(i[2].shape, i[2].dtype)]), None,
        run_kernel("dynamic_index", [dy, i[1]])))
