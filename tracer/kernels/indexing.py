"""take (a gather along one axis) and scatter_add, its transpose: each is the other's
gradient. Batched indices index a flattened (batch * axis) dimension with per-example
offsets (vmap.flat_index), so no rule loops."""
from ir.errors import ShapeError
from ir.types import ShapedArray
from registry import declare_kernel
from registry.shape_rules import check_axes, check_index, int_attrs
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.vmap import batch_size, flat_index, moveaxis, to_dim


def _take_rule(x, idx, *, axis):
    check_index("take", idx)
    check_axes("take", x.ndim, (axis,))
    return ShapedArray(x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype)


def _take_batched(inputs, dims, attrs):
    (x, idx), (dx, di) = inputs, dims
    ax = attrs["axis"]
    if di is None:
        return run_kernel("take", [moveaxis(x, dx, 0), idx], {"axis": ax + 1}), 0
    size = batch_size(inputs, dims)
    x, idx = to_dim(x, dx, size, 0), moveaxis(idx, di, 0)
    pre, n, post = x.shape[1:ax + 1], x.shape[ax + 1], x.shape[ax + 2:]
    flat = tnp.reshape(moveaxis(x, ax + 1, 1), (size * n,) + pre + post)
    out = run_kernel("take", [flat, flat_index(idx, n, size, ax)], {"axis": 0})
    k = idx.ndim - 1          # out is (size, *idx dims, *pre, *post): put pre first
    perm = ((0,) + tuple(range(1 + k, 1 + k + len(pre))) + tuple(range(1, 1 + k))
            + tuple(range(1 + k + len(pre), out.ndim)))
    return tnp.transpose(out, perm), 0


declare_kernel("take", shape=_take_rule, family="gather", batching=_take_batched,
               gradient=lambda dy, i, o, a: (run_kernel("scatter_add", [dy, i[1]], {
                   "axis": a["axis"], "size": i[0].shape[a["axis"]]}), None))


def _scatter_add_rule(upd, idx, *, axis, size):
    """Inverse of take: out[..., idx[j], ...] += upd[..., j, ...] along `axis`."""
    check_index("scatter_add", idx)
    (size,) = int_attrs("scatter_add", "size", (size,))
    if size < 0:
        raise ShapeError(f"scatter_add: size {size} must be non-negative")
    if upd.shape[axis:axis + idx.ndim] != idx.shape:
        raise ShapeError(f"scatter_add: updates {upd.shape} do not match indices "
                         f"{idx.shape} at axis {axis}")
    return ShapedArray(upd.shape[:axis] + (size,) + upd.shape[axis + idx.ndim:], upd.dtype)


def _scatter_add_batched(inputs, dims, attrs):
    (upd, idx), (du, di) = inputs, dims
    ax, n = attrs["axis"], attrs["size"]
    if di is None:
        return run_kernel("scatter_add", [moveaxis(upd, du, 0), idx],
                          {"axis": ax + 1, "size": n}), 0
    size = batch_size(inputs, dims)
    upd, idx = to_dim(upd, du, size, 0), moveaxis(idx, di, 0)
    k = idx.ndim - 1          # upd is (size, *pre, *idx dims, *post): put idx dims first
    perm = ((0,) + tuple(range(1 + ax, 1 + ax + k)) + tuple(range(1, 1 + ax))
            + tuple(range(1 + ax + k, upd.ndim)))
    pre, post = upd.shape[1:1 + ax], upd.shape[1 + ax + k:]
    out = run_kernel("scatter_add", [tnp.transpose(upd, perm), flat_index(idx, n, size, ax)],
                     {"axis": 0, "size": size * n})
    return moveaxis(tnp.reshape(out, (size, n) + pre + post), 1, 1 + ax), 0


declare_kernel("scatter_add", shape=_scatter_add_rule, family="scatter",
               batching=_scatter_add_batched,
               gradient=lambda dy, i, o, a: (
                   run_kernel("take", [dy, i[1]], {"axis": a["axis"]}), None))
