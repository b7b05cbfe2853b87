"""The built-in kernels' batching rules, written with traceable ops (as gradients are).

`rule(inputs, batch_dims, attrs) -> (outputs, out_batch_dims)`. Elementwise kernels need
no entry here: they share vmap's family rule. Each rule below maps the per-example attrs
(axes, shapes, bounds) to the batched operand, keeping the batch dim where it is when the
kernel allows it and moving it to the front otherwise. No rule loops: matmul folds an
unbatched operand's partner batch into its rows or columns (one kernel call, no copies of
the shared operand), and take/scatter_add with batched indices index a flattened
(batch * axis) dimension with per-example offsets. Control-flow primitives (cond, while,
scan) register their rules next to their kernels in tracer.lax.
"""

import numpy as np

from registry.batching import register_batching_rule
from registry.shape_rules import ARG_REDUCE, REDUCE
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.custom import CustomRule
from tracer.numpy.linalg_kernels import KERNELS as LINALG
from tracer.vmap import batch_graph, batch_size, moveaxis, to_dim, vmap


def _full(axis, d):
    """Per-example axis -> the batched operand's axis (batch dim at d)."""
    return axis + (axis >= d)


def _reduction(kernel):
    def rule(inputs, dims, attrs):
        (x,), (d,) = inputs, dims
        axes = tuple(_full(a, d) for a in attrs["axes"])
        return (run_kernel(kernel, [x], {**attrs, "axes": axes}),
                d - sum(a < d for a in attrs["axes"]))
    return rule


def _arg_reduction(kernel):
    def rule(inputs, dims, attrs):
        (x,), (d,) = inputs, dims
        axis = attrs["axis"]
        return run_kernel(kernel, [x], {**attrs, "axis": _full(axis, d)}), d - (axis < d)
    return rule


def _broadcast_to(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    x = moveaxis(x, d, 0)
    shape, size, rank = tuple(attrs["shape"]), x.shape[0], x.ndim - 1
    x = tnp.reshape(x, (size,) + (1,) * (len(shape) - rank) + x.shape[1:])
    return run_kernel("broadcast_to", [x], {"shape": (size,) + shape}), 0


def _reshape(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    x = moveaxis(x, d, 0)
    return run_kernel("reshape", [x], {"shape": (x.shape[0],) + tuple(attrs["shape"])}), 0


def _transpose(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    perm = (d,) + tuple(_full(p, d) for p in attrs["perm"])
    return run_kernel("transpose", [x], {"perm": perm}), 0


def _insert(values, d, v):
    values = tuple(values)
    return values[:d] + (v,) + values[d:]


def _slice(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    return run_kernel("slice", [x], {
        "start": _insert(attrs["start"], d, 0), "limit": _insert(attrs["limit"], d, x.shape[d]),
        "step": _insert(attrs["step"], d, 1)}), d


def _pad(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    return run_kernel("pad", [x], {k: _insert(attrs[k], d, 0)
                                   for k in ("lo", "hi", "interior")}), d


def _rev(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    return run_kernel("rev", [x], {**attrs, "axes": tuple(_full(a, d)
                                                          for a in attrs["axes"])}), d


def _concatenate(inputs, dims, attrs):
    size = batch_size(inputs, dims)
    xs = [to_dim(x, d, size, 0) for x, d in zip(inputs, dims)]
    return run_kernel("concatenate", xs, {**attrs, "axis": attrs["axis"] + 1}), 0


def _flat_index(idx, n, size):
    """Indices (size, ...) into one example's axis of length n -> indices into the
    (size * n) axis of all examples. An index out of [0, n) becomes -1, so the kernel
    still reports it instead of reading a neighbouring example."""
    idx = tnp.astype(idx, np.int64)
    offsets = tnp.reshape(tnp.arange(size, dtype=np.int64) * n, (size,) + (1,) * (idx.ndim - 1))
    return tnp.where(idx < 0, -1, tnp.where(idx >= n, -1, idx + offsets))


def _take(inputs, dims, attrs):
    (x, idx), (dx, di) = inputs, dims
    ax = attrs["axis"]
    if di is None:
        return run_kernel("take", [moveaxis(x, dx, 0), idx], {"axis": ax + 1}), 0
    size = batch_size(inputs, dims)
    x, idx = to_dim(x, dx, size, 0), moveaxis(idx, di, 0)
    pre, n, post = x.shape[1:ax + 1], x.shape[ax + 1], x.shape[ax + 2:]
    flat = tnp.reshape(moveaxis(x, ax + 1, 1), (size * n,) + pre + post)
    out = run_kernel("take", [flat, _flat_index(idx, n, size)], {"axis": 0})
    k = idx.ndim - 1          # out is (size, *idx dims, *pre, *post): put pre first
    perm = ((0,) + tuple(range(1 + k, 1 + k + len(pre))) + tuple(range(1, 1 + k))
            + tuple(range(1 + k + len(pre), out.ndim)))
    return tnp.transpose(out, perm), 0


def _scatter_add(inputs, dims, attrs):
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
    out = run_kernel("scatter_add", [tnp.transpose(upd, perm), _flat_index(idx, n, size)],
                     {"axis": 0, "size": size * n})
    return moveaxis(tnp.reshape(out, (size, n) + pre + post), 1, 1 + ax), 0


def _scatter(inputs, dims, attrs):
    """Each example's rows become a block of one (size * n)-row operand."""
    size = batch_size(inputs, dims)
    x, u, idx = (to_dim(v, d, size, 0) for v, d in zip(inputs, dims))
    n = x.shape[1]
    flat = tnp.reshape(x, (size * n,) + tuple(x.shape[2:]))
    out = run_kernel("scatter", [flat, u, _flat_index(idx, n, size)], attrs)
    return tnp.reshape(out, x.shape), 0


def _leading(kernel):
    """Kernels that batch over their leading dims (linalg): the batch dim goes first."""
    def rule(inputs, dims, attrs):
        size = batch_size(inputs, dims)
        out = run_kernel(kernel, [to_dim(x, d, size, 0) for x, d in zip(inputs, dims)], attrs)
        return out, (0,) * len(out) if isinstance(out, tuple) else 0
    return rule


def _matmul(inputs, dims, attrs):
    """(..., m, k) @ (..., k, n). Both batched: one more leading batch dim. One batched:
    its batch joins its rows (a) or columns (b), so the shared operand is read as is."""
    (a, b), (da, db) = inputs, dims
    if da is not None and db is not None:
        return run_kernel("matmul", [moveaxis(a, da, 0), moveaxis(b, db, 0)], attrs), 0
    if db is None:
        r = a.ndim - 3
        a = moveaxis(a, da, r)                      # (*lead, size, m, k)
        lead, (size, m, k) = a.shape[:r], a.shape[r:]
        out = run_kernel("matmul", [tnp.reshape(a, lead + (size * m, k)), b], attrs)
        return tnp.reshape(out, lead + (size, m, out.shape[-1])), r
    r = b.ndim - 1
    b = moveaxis(b, db, r)                          # (*lead, k, n, size)
    lead, (k, n, size) = b.shape[:-3], b.shape[-3:]
    out = run_kernel("matmul", [a, tnp.reshape(b, lead + (k, n * size))], attrs)
    return tnp.reshape(out, out.shape[:-1] + (n, size)), r


def _custom_call(inputs, dims, attrs):
    """Batch the primal and forward regions (everything at dim 0) and wrap the backward
    in a vmap, so the batched function is still differentiated by its own rule."""
    size = batch_size(inputs, dims)
    xs = [to_dim(x, d, size, 0) for x, d in zip(inputs, dims)]
    body, rule = attrs["body"], attrs["rule"]
    zeros = [0] * len(xs)
    new_body = batch_graph(body, size, zeros)[0]
    forward = batch_graph(rule.forward, size, zeros)[0]

    def backward(ins, computed, cts):
        return vmap(lambda i, c, t: list(rule.backward(i, c, t)))(
            list(ins), list(computed), list(cts))
    out = run_kernel("custom_call", xs, {**attrs, "body": new_body, "rule": CustomRule(
        f"vmap({rule.name})", forward, rule.n_out, rule.n_args, backward)})
    return out, (0,) * len(out)


RULES = {
    **{k: _reduction(k) for k in REDUCE},
    **{k: _arg_reduction(k) for k in ARG_REDUCE},
    "broadcast_to": _broadcast_to, "reshape": _reshape, "transpose": _transpose,
    "slice": _slice, "pad": _pad, "rev": _rev, "concatenate": _concatenate,
    "take": _take, "scatter_add": _scatter_add, "scatter": _scatter, "matmul": _matmul,
    "custom_call": _custom_call, **{k: _leading(k) for k in LINALG},
}

for _name, _rule in RULES.items():
    register_batching_rule(_name, _rule)
