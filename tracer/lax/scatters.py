"""`scatter(x, updates, indices, how)`: x with each update combined into the row of x
(axis 0) its index names, one update after another in index order, so repeated indices
give one answer on every backend: "set" keeps the last write (NumPy's assignment), "add",
"mul", "min" and "max" combine every update (NumPy's `ufunc.at`). `x.at[...]` updates
lower to it. Indices must lie in [0, len(x)) and are checked on every backend: the front
end wraps negative ones and applies jax's out-of-bounds modes before the kernel.

Gradients follow the value: only the winning write of a repeated "set" index gets the
cotangent; "min"/"max" share it equally among the operand and the updates equal to the
result (as jax); "mul" uses the product of the other updates at the same row,
computed without dividing by a zero update. The NumPy impl is lowering.numpy_kernels',
the llvm impl lowering.llvm.shapes', the ONNX exporter lowering.onnx.shapes'.
"""
import numpy as np

from ir import ShapedArray
from ir.errors import ArgumentError, DTypeError, ShapeError
from ir.types import dtype_kind
from registry import declare_kernel
from tracer.core import run_kernel
from tracer.numpy.creation import arange, astype, ones, zeros
from tracer.numpy.elementwise import equal, maximum, where
from tracer.numpy.shape_ops import reshape
from tracer.vmap import batch_size, flat_index, to_dim

HOWS = ("set", "add", "mul", "min", "max")


def scatter(x, updates, indices, how):
    return run_kernel("scatter", [x, updates, indices], {"how": how})


def _rule(x, upd, idx, *, how):
    if how not in HOWS:
        raise ArgumentError(f"scatter: how={how!r} is not one of {HOWS}")
    if dtype_kind(idx.dtype) not in "iu":
        raise DTypeError(f"scatter: indices must be integers, got {idx}")
    if not x.shape:
        raise ShapeError(f"scatter: the operand needs a leading axis to index, got {x}")
    want = ShapedArray(idx.shape + x.shape[1:], x.dtype)
    if upd.shape != want.shape or upd.dtype != x.dtype:
        raise ShapeError(f"scatter: indices {idx} into {x} take updates {want}, got {upd}")
    return x.strip_weak()


def _grad(dy, ins, out, attrs):
    x, u, idx = ins
    how, rest = attrs["how"], (1,) * (x.ndim - 1)

    def at(a):
        return run_kernel("take", [a, idx], {"axis": 0})
    if how == "add":
        return dy, at(dy), None
    if how == "set":
        order = reshape(arange(int(np.prod(idx.shape)), dtype=np.int64), idx.shape)
        last = scatter(np.full(x.shape[:1], -1, np.int64), order, idx, "max")
        won = reshape(equal(at(last), order), idx.shape + rest)
        kept = scatter(np.ones(x.shape[:1], bool), np.zeros(idx.shape, bool), idx, "set")
        kept = reshape(kept, x.shape[:1] + rest)    # a constant when idx is one
        return where(kept, dy, 0), where(won, at(dy), 0), None
    if how == "mul":    # the product of the other updates at a row, correct to second
        unit = ones(x.shape, x.dtype)     # order unless two of them are zero
        rows = scatter(unit, u, idx, "mul")
        zero = equal(u, 0)
        nonzero = where(zero, 1, u)
        zeros_at = at(scatter(np.zeros(x.shape, np.int64), astype(zero, np.int64), idx,
                              "add"))
        others = where(zero, where(equal(zeros_at, 1), at(scatter(
            unit, nonzero, idx, "mul")), 0), at(rows) / nonzero)
        return dy * rows, at(dy * x) * others, None
    from_x = astype(equal(x, out), dy.dtype)
    from_u = astype(equal(u, at(out)), dy.dtype)
    count = from_x + scatter(zeros(x.shape, dy.dtype), from_u, idx, "add")
    share = dy / maximum(count, 1)          # NaN results: no one shares
    return share * from_x, at(share) * from_u, None


def _batched(inputs, dims, attrs):
    """Each example's rows become a block of one (size * n)-row operand."""
    size = batch_size(inputs, dims)
    x, u, idx = (to_dim(v, d, size, 0) for v, d in zip(inputs, dims))
    n = x.shape[1]
    flat = reshape(x, (size * n,) + tuple(x.shape[2:]))
    out = run_kernel("scatter", [flat, u, flat_index(idx, n, size)], attrs)
    return reshape(out, x.shape), 0


declare_kernel("scatter", shape=_rule, family="scatter", gradient=_grad, batching=_batched)
