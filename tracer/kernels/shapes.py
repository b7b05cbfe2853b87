"""The kernels that move, copy or drop elements ("index_map"): broadcast_to, reshape,
transpose, slice, rev, pad and concatenate, each declared with its shape rule, gradient
and batching rule.

Gradients: only `broadcast_to` sums back (broadcasting is explicit in the graph); slice
and pad are each other's transposes. Batching rules map the per-example attrs to the
batched operand, keeping the batch dim where it is when the kernel allows it and moving
it to the front otherwise.
"""
import math

import numpy as np

from ir.errors import DTypeError, ShapeError, ShapeMismatchError
from ir.types import ShapedArray
from registry import declare_kernel
from registry.shape_rules import check_axes, check_shape, int_attrs
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.vmap import batch_size, batched_axis, moveaxis, to_dim


def _insert(values, d, v):
    values = tuple(values)
    return values[:d] + (v,) + values[d:]


# ---- broadcast_to -----------------------------------------------------------------------

def _broadcast_to_rule(x, *, shape):
    shape = check_shape("broadcast_to", shape)
    if len(shape) < x.ndim or any(d != 1 and d != s for d, s in
                                  zip(x.shape[::-1], shape[::-1])):
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to {tuple(shape)}")
    return ShapedArray(shape, x.dtype)


def _sum_to(g, shape):
    """Sum `g` (of a broadcast shape) back down to `shape` (the broadcast_to gradient)."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return tnp.reshape(tnp.sum(g, axis=axes), shape) if axes else tnp.reshape(g, shape)


def _broadcast_to_batched(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    x = moveaxis(x, d, 0)
    shape, size, rank = tuple(attrs["shape"]), x.shape[0], x.ndim - 1
    x = tnp.reshape(x, (size,) + (1,) * (len(shape) - rank) + x.shape[1:])
    return run_kernel("broadcast_to", [x], {"shape": (size,) + shape}), 0


declare_kernel("broadcast_to", shape=_broadcast_to_rule, family="index_map",
               gradient=lambda dy, i, o, a: (_sum_to(dy, i[0].shape),),
               batching=_broadcast_to_batched)


# ---- reshape, transpose -----------------------------------------------------------------

def _reshape_rule(x, *, shape):
    shape = check_shape("reshape", shape)
    if math.prod(shape) != x.size:
        raise ShapeMismatchError(f"reshape: cannot reshape {x.shape} ({x.size} elements) "
                                 f"to {tuple(shape)}")
    return ShapedArray(shape, x.dtype)


def _reshape_batched(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    x = moveaxis(x, d, 0)
    return run_kernel("reshape", [x], {"shape": (x.shape[0],) + tuple(attrs["shape"])}), 0


declare_kernel("reshape", shape=_reshape_rule, family="index_map",
               gradient=lambda dy, i, o, a: (tnp.reshape(dy, i[0].shape),),
               batching=_reshape_batched)


def _transpose_rule(x, *, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeMismatchError(f"transpose: perm {perm} is not a permutation of {x.ndim} "
                                 f"axes")
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype)


def _transpose_batched(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    perm = (d,) + tuple(batched_axis(p, d) for p in attrs["perm"])
    return run_kernel("transpose", [x], {"perm": perm}), 0


declare_kernel("transpose", shape=_transpose_rule, family="index_map",
               gradient=lambda dy, i, o, a: (
                   tnp.transpose(dy, tuple(np.argsort(a["perm"]))),),
               batching=_transpose_batched)


# ---- slice, pad, rev --------------------------------------------------------------------

def _slice_rule(x, *, start, limit, step):
    if not len(start) == len(limit) == len(step) == x.ndim:
        raise ShapeError(f"slice: start/limit/step need {x.ndim} entries each")
    start, limit, step = (int_attrs("slice", n, v) for n, v in
                          (("start", start), ("limit", limit), ("step", step)))
    out = []
    for d, s, e, k in zip(x.shape, start, limit, step):
        if not (k > 0 and 0 <= s <= e <= d):
            raise ShapeError(f"slice: bad bounds start={start} limit={limit} step={step} "
                             f"for shape {x.shape}")
        out.append(max(0, -(-(e - s) // k)))
    return ShapedArray(tuple(out), x.dtype)


def _slice_grad(dy, inputs, out, attrs):
    x, = inputs
    lo, hi = [], []
    for d, s, n, k in zip(x.shape, attrs["start"], dy.shape, attrs["step"]):
        lo.append(s if n else 0)
        hi.append(d - s - (n - 1) * k - 1 if n else d)
    return (run_kernel("pad", [dy], {"lo": tuple(lo), "hi": tuple(hi),
                                     "interior": tuple(k - 1 for k in attrs["step"])}),)


def _slice_batched(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    return run_kernel("slice", [x], {
        "start": _insert(attrs["start"], d, 0), "limit": _insert(attrs["limit"], d, x.shape[d]),
        "step": _insert(attrs["step"], d, 1)}), d


declare_kernel("slice", shape=_slice_rule, family="index_map", gradient=_slice_grad,
               batching=_slice_batched)


def _pad_rule(x, *, lo, hi, interior):
    lo, hi, interior = (int_attrs("pad", n, v) for n, v in
                        (("lo", lo), ("hi", hi), ("interior", interior)))
    if not len(lo) == len(hi) == len(interior) == x.ndim or min(lo + hi + interior,
                                                                  default=0) < 0:
        raise ShapeError(f"pad: need {x.ndim} non-negative lo/hi/interior entries")
    return ShapedArray(tuple(l + h + d + max(d - 1, 0) * i
                             for d, l, h, i in zip(x.shape, lo, hi, interior)), x.dtype)


def _pad_grad(dy, inputs, out, attrs):
    x, = inputs
    start = tuple(attrs["lo"])
    step = tuple(i + 1 for i in attrs["interior"])
    limit = tuple(l + (d - 1) * k + 1 if d else l for l, d, k in zip(start, x.shape, step))
    return (run_kernel("slice", [dy], {"start": start, "limit": limit, "step": step}),)


def _pad_batched(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    return run_kernel("pad", [x], {k: _insert(attrs[k], d, 0)
                                   for k in ("lo", "hi", "interior")}), d


declare_kernel("pad", shape=_pad_rule, family="index_map", gradient=_pad_grad,
               batching=_pad_batched)


def _rev_rule(x, *, axes):
    check_axes("rev", x.ndim, axes)
    return ShapedArray(x.shape, x.dtype)


def _rev_batched(inputs, dims, attrs):
    (x,), (d,) = inputs, dims
    return run_kernel("rev", [x], {**attrs, "axes": tuple(batched_axis(a, d)
                                                          for a in attrs["axes"])}), d


declare_kernel("rev", shape=_rev_rule, family="index_map",
               gradient=lambda dy, i, o, a: (run_kernel("rev", [dy], a),),
               batching=_rev_batched)


# ---- concatenate ------------------------------------------------------------------------

def _concatenate_rule(*xs, axis):
    if not xs:
        raise ShapeError("concatenate: needs at least one operand")
    r = xs[0]
    for x in xs:
        if x.ndim != r.ndim or (x.shape[:axis] + x.shape[axis + 1:]
                                != r.shape[:axis] + r.shape[axis + 1:]):
            raise ShapeMismatchError(f"concatenate: shapes {[x.shape for x in xs]} differ "
                                     f"off axis {axis}")
        if x.dtype != r.dtype:
            raise DTypeError(f"concatenate: dtypes {[str(x.dtype) for x in xs]} differ")
    check_axes("concatenate", r.ndim, (axis,))
    size = sum(x.shape[axis] for x in xs)
    return ShapedArray(r.shape[:axis] + (size,) + r.shape[axis + 1:], r.dtype)


def _concatenate_grad(dy, inputs, out, attrs):
    ax, grads, off = attrs["axis"], [], 0
    for x in inputs:
        n = x.shape[ax]
        idx = [slice(None)] * dy.ndim
        idx[ax] = slice(off, off + n)
        grads.append(dy[tuple(idx)])
        off += n
    return grads


def _concatenate_batched(inputs, dims, attrs):
    size = batch_size(inputs, dims)
    xs = [to_dim(x, d, size, 0) for x, d in zip(inputs, dims)]
    return run_kernel("concatenate", xs, {**attrs, "axis": attrs["axis"] + 1}), 0


declare_kernel("concatenate", shape=_concatenate_rule, family="index_map",
               gradient=_concatenate_grad, batching=_concatenate_batched)
