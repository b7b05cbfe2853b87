"""matmul and dot with NumPy semantics, built on one batched `matmul` kernel
((..., m, k) @ (..., k, n), equal batch dims): vectors are reshaped, batch dims broadcast."""
import numpy as np

from ir.errors import ShapeError
from tracer.core import innermost_trace, run_kernel
from tracer.numpy._base import (broadcast, broadcast_shapes, convert, dtype_of, result_dtype,
                                shape, value)
from tracer.numpy.shape_ops import reshape, transpose


def _operands(op, a, b):
    a, b = value(a, op), value(b, op)
    dt = result_dtype(op, a, b)
    if len(shape(a)) == 0 or len(shape(b)) == 0:
        raise ShapeError(f"{op}: operands must not be 0-d (shapes {shape(a)}, {shape(b)}); "
                         f"use multiply for scalars")
    return convert(a, dt, op), convert(b, dt, op)


def matmul(a, b):
    a, b = _operands("matmul", a, b)
    if dtype_of(a).kind == "b":     # NumPy: the OR of ANDs, i.e. a nonzero integer product
        from tracer.numpy.elementwise import not_equal
        return not_equal(matmul(convert(a, np.int64), convert(b, np.int64)), 0)
    sa, sb = shape(a), shape(b)
    a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
    if shape(a2)[-1] != shape(b2)[-2]:
        raise ShapeError(f"matmul: shapes {sa} and {sb} are not aligned: {shape(a2)[-1]} "
                         f"(dim -1 of a) != {shape(b2)[-2]} (dim -2 of b)")
    batch = broadcast_shapes("matmul", shape(a2)[:-2], shape(b2)[:-2])
    trace = innermost_trace([a2, b2])
    a2 = broadcast(a2, batch + shape(a2)[-2:], trace)
    b2 = broadcast(b2, batch + shape(b2)[-2:], trace)
    out = run_kernel("matmul", [a2, b2])
    final = batch + (sa[-2:-1] if len(sa) > 1 else ()) + (sb[-1:] if len(sb) > 1 else ())
    return reshape(out, final)


def dot(a, b):
    """numpy.dot: inner product of vectors, matmul of matrices, for N-D a sum over the
    last axis of a and the second-to-last of b, and a product when one is 0-d (where,
    unlike in ufuncs, a Python scalar counts as a strong array)."""
    if len(shape(value(a, "dot"))) == 0 or len(shape(value(b, "dot"))) == 0:
        from tracer.numpy.creation import asarray
        from tracer.numpy.elementwise import multiply
        return multiply(asarray(a), asarray(b))
    a, b = _operands("dot", a, b)
    sa, sb = shape(a), shape(b)
    if len(sb) <= 2:
        return matmul(a, b)
    k = sb[-2]
    if sa[-1] != k:
        raise ShapeError(f"dot: shapes {sa} and {sb} not aligned: {sa[-1]} != {k}")
    bm = transpose(b, (len(sb) - 2,) + tuple(range(len(sb) - 2)) + (len(sb) - 1,))
    out = matmul(reshape(a, (-1, k)), reshape(bm, (k, -1)))
    return reshape(out, sa[:-1] + sb[:-2] + sb[-1:])


def outer(a, b):
    return matmul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


__all__ = ["matmul", "dot", "outer"]
