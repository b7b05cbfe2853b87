"""ONNX rules of the contractions and windows: matmul, conv, reduce_window (pooling) and
tile_scatter (the pooling gradient).

conv is ONNX Conv on float32 (float16/bfloat16 arrive widened to it), with the kernel's
channels-last layout transposed to ONNX's channels-first one and back; lhs dilation is
zeros put between the input's elements, negative padding a Slice. ONNX Runtime has
Conv for float32 only, so float64 and integer convs are the NumPy kernel's im2col and
MatMul (ints wrap as NumPy's matmul does; the narrow ones are computed in int32).

reduce_window is one strided Slice per window element of the input, padded and dilated
with the init value, combined in window order with Add/Max/Min and then with init, as
the NumPy kernel reduces (this covers every dtype, op, padding and base dilation, which
MaxPool does not). tile_scatter reads each window element the same way (strided Slices
of the covered part of x), keeps the first extreme (NaN first, as NumPy's argmax), and
interleaves the per-element results back into x's layout with Reshape and Transpose.
Shapes come from Shape at run time, so axes that windows do not touch follow
`dynamic_batch`; a window over the batch axis is an error there.
"""
import itertools

import numpy as np

from ir.errors import ShapeError
from ir.types import saturated
from lowering.onnx.idioms import INT64, BoolViaInt32, dilate, i64, where
from registry.exporters import OnnxOperator

F32 = np.dtype(np.float32)
END = np.iinfo(np.int64).max
COMBINE = {"add": "Add", "max": "Max", "min": "Min"}


def _zeros_like_output(g, shape):
    return g.op("Expand", g.const(np.zeros((), g.out_avals[0].dtype)), shape)


def _conv(g, inputs, attrs):
    x, w = inputs
    xa, wa, out = g.in_avals[0], g.in_avals[1], g.out_avals[0]
    if 0 in out.shape or 0 in wa.shape[:-1]:
        return _zeros_like_output(g, g.const(i64(out.shape)))
    if xa.dtype != F32:
        return _conv_im2col(g, x, w, attrs)
    nd, strides, pads = xa.ndim, attrs["strides"], attrs["pads"]
    if nd == 2:         # no spatial axis: ONNX Conv needs one, so add one of size 1
        x = g.op("Unsqueeze", x, g.const(i64([1])))
        w = g.op("Unsqueeze", w, g.const(i64([0])))
        nd, strides, pads = 3, (1,), ((0, 0),)
    sp = range(2, nd)
    x = g.op("Transpose", x, perm=[0, nd - 1, *range(1, nd - 1)])
    x = _dilate_and_crop(g, x, sp, attrs["ldil"] or (1,), pads, nd)
    w = g.op("Transpose", w, perm=[nd - 1, nd - 2, *range(nd - 2)])
    y = g.op("Conv", x, w, strides=list(strides), dilations=list(attrs["rdil"] or (1,)),
             pads=[max(lo, 0) for lo, _ in pads] + [max(hi, 0) for _, hi in pads],
             group=attrs["groups"])
    y = g.op("Transpose", y, perm=[0, *sp, 1])
    return y if xa.ndim > 2 else g.op("Squeeze", y, g.const(i64([1])))


def _dilate_and_crop(g, x, axes, ldil, pads, nd):
    """x with ldil - 1 zeros between elements along `axes`, negative padding cut off."""
    for axis, d in zip(axes, ldil):
        if d > 1:
            x = dilate(g, x, axis, d - 1, nd)
    crop = [(axis, max(-lo, 0), -max(-hi, 0) or END) for axis, (lo, hi) in zip(axes, pads)
            if lo < 0 or hi < 0]
    if not crop:
        return x
    axes, starts, ends = zip(*crop)
    return g.op("Slice", x, g.const(i64(starts)), g.const(i64(ends)), g.const(i64(axes)))


def _conv_im2col(g, x, w, attrs):
    """The NumPy kernel's algorithm, for dtypes ONNX Runtime has MatMul but no Conv for
    (float64, integers): the window rows of each output pixel (one strided Slice per
    kernel element, concatenated along channels), times the kernel as a matrix, one
    batched MatMul over the feature groups."""
    xa, wa, out = g.in_avals[0], g.in_avals[1], g.out_avals[0]
    nd, groups, strides = xa.ndim, attrs["groups"], attrs["strides"]
    sp, ksp, osp = list(range(1, nd - 1)), wa.shape[:-2], out.shape[1:-1]
    x = _dilate_and_crop(g, x, sp, attrs["ldil"], attrs["pads"], nd)
    grow = np.zeros(2 * nd, np.int64)
    for a, (lo, hi) in zip(sp, attrs["pads"]):
        grow[a], grow[nd + a] = max(lo, 0), max(hi, 0)
    if grow.any():
        x = g.op("Pad", x, g.const(grow))
    cols = []
    for kpos in itertools.product(*map(range, ksp)):
        starts = [k * d for k, d in zip(kpos, attrs["rdil"])]
        ends = [b + s * (o - 1) + 1 for b, s, o in zip(starts, strides, osp)]
        cols.append(g.op("Slice", x, g.const(i64(starts)), g.const(i64(ends)),
                         g.const(i64(sp)), g.const(i64(strides))))
    k, cg, o = int(np.prod(ksp)), wa.shape[-2], wa.shape[-1]
    cols = g.op("Reshape", g.op("Concat", *cols, axis=-1), g.const(i64([-1, k, groups, cg])))
    cols = g.op("Reshape", g.op("Transpose", cols, perm=[2, 0, 1, 3]),
                g.const(i64([groups, -1, k * cg])))
    w = g.op("Reshape", w, g.const(i64([k, cg, groups, o // groups])))
    w = g.op("Reshape", g.op("Transpose", w, perm=[2, 0, 1, 3]),
             g.const(i64([groups, k * cg, o // groups])))
    y = g.op("Transpose", g.op("MatMul", cols, w), perm=[1, 0, 2])
    shape = g.op("Concat", g.op("Shape", x, start=0, end=1), g.const(i64(osp + (o,))), axis=0)
    return g.op("Reshape", y, shape)


def _check_batch_free(g, axes):
    dims = g.root.plan.dims_of(g.node.inputs[0])
    if any(dims[a] == "batch" for a in axes):
        raise ShapeError(f"to_onnx(dynamic_batch=True): {g.node.kernel} has a window over "
                         f"the batch axis (window {g.node.attrs['window']}); export with a "
                         f"fixed batch")


def _reduce_window(g, inputs, attrs):
    (x,) = inputs
    xa, out = g.in_avals[0], g.out_avals[0]
    window, strides, pads, bdil = (attrs[k] for k in ("window", "strides", "pads", "bdil"))
    active = [a for a in range(xa.ndim) if (window[a], strides[a], pads[a], bdil[a])
              != (1, 1, (0, 0), 1)]
    _check_batch_free(g, active)
    init = g.const(saturated(attrs["init"], g.node.inputs[0].aval.dtype).astype(xa.dtype))
    combine = COMBINE[attrs["op"]]
    if 0 in window:         # no element in any window: init everywhere, as the kernel
        return g.op(combine, _zeros_like_output(g, g.const(i64(out.shape))), init)
    for a in active:
        if bdil[a] > 1:
            x = dilate(g, x, a, bdil[a] - 1, xa.ndim, fill=init)
    grow = np.zeros(2 * xa.ndim, np.int64)
    for a, (lo, hi) in enumerate(pads):
        grow[a], grow[xa.ndim + a] = max(lo, 0), max(hi, 0)
    if grow.any():
        x = g.op("Pad", x, g.const(grow), init)
    acc = None
    for kpos in itertools.product(*(range(window[a]) for a in active)):
        starts = [k + max(-pads[a][0], 0) for k, a in zip(kpos, active)]
        ends = [s + strides[a] * (out.shape[a] - 1) + 1 for s, a in zip(starts, active)]
        part = g.op("Slice", x, g.const(i64(starts)), g.const(i64(ends)),
                    g.const(i64(active)), g.const(i64([strides[a] for a in active])))
        acc = part if acc is None else g.op(combine, acc, part)
    return g.op(combine, acc, init)


def _beats(g, op, v, best, is_float):
    """v replaces the extreme so far: strictly greater (less), or a NaN over a number."""
    better = g.op("Greater" if op == "max" else "Less", v, best)
    if not is_float:
        return better
    return g.op("Or", better, g.op("And", g.op("IsNaN", v), g.op("Not", g.op("IsNaN", best))))


def _tile_scatter(g, inputs, attrs):
    x, dy = inputs
    xa, dya = g.in_avals
    window, op, n = tuple(attrs["window"]), attrs["op"], xa.ndim
    _check_batch_free(g, [a for a in range(n) if window[a] != 1])
    if xa.size == 0 or dya.size == 0:
        return _zeros_like_output(g, g.op("Shape", x))
    cover = g.op("Mul", g.op("Shape", dy), g.const(i64(window)))
    steps, axes = g.const(i64(window)), g.const(i64(range(n)))
    offsets = list(itertools.product(*map(range, window)))
    zero = g.const(np.zeros((), dya.dtype))
    if op == "add":
        parts = [dy] * len(offsets)
    else:
        reads = [g.op("Slice", x, g.const(i64(k)), g.op("Add", cover, g.const(i64(k))),
                      axes, steps) for k in offsets]
        best, at = reads[0], g.const(np.zeros((), INT64))
        for j, v in enumerate(reads[1:], 1):
            better = _beats(g, op, v, best, xa.dtype.kind == "f")
            best = g.op("Where", better, v, best)
            at = g.op("Where", better, g.const(np.array(j, INT64)), at)
        parts = [where(g, g.op("Equal", at, g.const(np.array(j, INT64))), dy, zero, dya.dtype)
                 for j in range(len(offsets))]
    last = g.const(i64([-1]))
    y = g.op("Concat", *[g.op("Unsqueeze", p, last) for p in parts], axis=-1)
    y = g.op("Reshape", y, g.op("Concat", g.op("Shape", dy), g.const(i64(window)), axis=0),
             allowzero=1)
    y = g.op("Transpose", y, perm=[a for i in range(n) for a in (i, n + i)])
    y = g.op("Reshape", y, cover, allowzero=1)
    rim = g.op("Sub", g.op("Shape", x), cover)
    return g.op("Pad", y, g.op("Concat", g.const(np.zeros(n, np.int64)), rim, axis=0))


RULES = {"matmul": BoolViaInt32(OnnxOperator("MatMul")), "conv": _conv,
         "reduce_window": _reduce_window, "tile_scatter": _tile_scatter}
