"""matmul: (..., m, k) @ (..., k, n) with equal batch dims (the ops broadcast first)."""
from ir.errors import DTypeError, ShapeError
from ir.types import ShapedArray
from registry import declare_kernel
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.vmap import moveaxis


def _rule(a, b):
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} do not match "
                         f"(kernel wants (..., m, k) @ (..., k, n) with equal batch dims)")
    if a.dtype != b.dtype:
        raise DTypeError(f"matmul: dtypes {a.dtype} and {b.dtype} differ")
    return ShapedArray(a.shape[:-1] + b.shape[-1:], a.dtype)


def _gradient(dy, inputs, out, attrs):
    a, b = inputs
    return dy @ tnp.swapaxes(b, -1, -2), tnp.swapaxes(a, -1, -2) @ dy


def _batched(inputs, dims, attrs):
    """Both batched: one more leading batch dim. One batched: its batch joins its rows
    (a) or columns (b), so the shared operand is read as is (one kernel call, no copies)."""
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


declare_kernel("matmul", shape=_rule, family="contraction", gradient=_gradient,
               batching=_batched)
