"""The reductions (reduce_sum, reduce_max, reduce_min, reduce_prod over sorted `axes`)
and the arg reductions (argmax, argmin over one `axis`, not differentiable: their outputs
are indices)."""
import math

import numpy as np

from ir.errors import ShapeError
from ir.types import ShapedArray
from registry import declare_kernel
from registry.shape_rules import INDEX, check_axes
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.kernels.scans import exclusive_cumprod
from tracer.vmap import batched_axis


def _reduce_rule(kernel):
    def rule(x, *, axes):
        check_axes(kernel, x.ndim, axes)
        if kernel in ("reduce_max", "reduce_min") and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{kernel}: reducing over an empty axis of shape {x.shape} "
                             f"has no identity; pass a non-empty array")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def _expand(g, in_shape, axes):
    """Broadcast a reduction's cotangent back over the reduced `axes` (leading axes
    need no reshape: broadcasting aligns shapes on the right)."""
    if axes != tuple(range(len(axes))):
        g = tnp.reshape(g, tuple(1 if i in axes else d for i, d in enumerate(in_shape)))
    return tnp.broadcast_to(g, in_shape)


def _reduce_extreme(dy, inputs, out, attrs):
    """The cotangent is shared evenly by the items equal to the extreme (as JAX)."""
    x, = inputs
    axes = attrs["axes"]
    mask = (x == _expand(out, x.shape, axes)).astype(x.dtype)
    count = _expand(tnp.sum(mask, axis=axes), x.shape, axes)
    return (_expand(dy, x.shape, axes) * mask / count,)


def _reduce_prod(dy, inputs, out, attrs):
    """d prod / dx_i is the product of the other items: an exclusive prefix product
    times an exclusive suffix product (cumprod, whose gradient is a polynomial). No
    division, so any number of zeros is exact, to every order."""
    x, = inputs
    axes = attrs["axes"]
    keep = [i for i in range(x.ndim) if i not in axes]
    perm = keep + list(axes)
    rows = tnp.reshape(tnp.transpose(x, perm), tuple(x.shape[i] for i in keep) +
                       (math.prod(x.shape[i] for i in axes),))
    ax = rows.ndim - 1
    rev = {"axes": (ax,)}
    others = exclusive_cumprod(rows, ax) * run_kernel(
        "rev", [exclusive_cumprod(run_kernel("rev", [rows], rev), ax)], rev)
    others = tnp.transpose(tnp.reshape(others, tuple(x.shape[i] for i in perm)),
                           tuple(np.argsort(perm)))
    return (_expand(dy, x.shape, axes) * others,)


def _reduce_batched(kernel):
    def rule(inputs, dims, attrs):
        (x,), (d,) = inputs, dims
        axes = tuple(batched_axis(a, d) for a in attrs["axes"])
        return (run_kernel(kernel, [x], {**attrs, "axes": axes}),
                d - sum(a < d for a in attrs["axes"]))
    return rule


for _name, _grad in (("reduce_sum", lambda dy, i, o, a: (_expand(dy, i[0].shape, a["axes"]),)),
                     ("reduce_max", _reduce_extreme), ("reduce_min", _reduce_extreme),
                     ("reduce_prod", _reduce_prod)):
    declare_kernel(_name, shape=_reduce_rule(_name), family="reduction", gradient=_grad,
                   batching=_reduce_batched(_name))


def _arg_rule(kernel):
    def rule(x, *, axis):
        check_axes(kernel, x.ndim, (axis,))
        if x.shape[axis] == 0:
            raise ShapeError(f"{kernel}: attempt to get {kernel} of an empty sequence "
                             f"(axis {axis} of shape {x.shape})")
        return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], INDEX)
    return rule


def _arg_batched(kernel):
    def rule(inputs, dims, attrs):
        (x,), (d,) = inputs, dims
        axis = attrs["axis"]
        return (run_kernel(kernel, [x], {**attrs, "axis": batched_axis(axis, d)}),
                d - (axis < d))
    return rule


for _name in ("argmax", "argmin"):
    declare_kernel(_name, shape=_arg_rule(_name), family="arg_reduction",
                   batching=_arg_batched(_name), differentiable=False)
