"""ONNX rules of the kernels that move data: broadcast, reshape, transpose, slices, pads,
concatenation, gathers and scatters. Shape attrs are read with `g.ints` (so an entry
that is the batch size follows it at run time) and other dims from `Shape`; the dynamic
index kernels clamp the index into range, as the kernels do."""
import numpy as np

from lowering.onnx.idioms import INT64, dilate, dims, i64, reverse


def _broadcast_to(g, inputs, attrs):
    return g.op("Expand", inputs[0], g.ints("shape"))


def _reshape(g, inputs, attrs):
    return g.op("Reshape", inputs[0], g.ints("shape"), allowzero=1)


def _transpose(g, inputs, attrs):
    if not attrs["perm"]:       # a 0-d operand; ONNX cannot spell an empty perm
        return g.op("Identity", *inputs)
    return g.op("Transpose", *inputs, perm=list(attrs["perm"]))


def _slice(g, inputs, attrs):
    n = len(attrs["start"])
    return g.op("Slice", inputs[0], g.const(i64(attrs["start"])), g.ints("limit"),
                g.const(np.arange(n, dtype=np.int64)), g.const(i64(attrs["step"])))


def _rev(g, inputs, attrs):
    return reverse(g, inputs[0], attrs["axes"])


def _pad(g, inputs, attrs):
    (x,) = inputs
    lo, hi, interior = attrs["lo"], attrs["hi"], attrs["interior"]
    for axis, gap in enumerate(interior):
        if gap:
            x = dilate(g, x, axis, gap, len(interior))
    if any(lo) or any(hi):
        x = g.op("Pad", x, g.const(i64(lo + hi)))
    return x if x is not inputs[0] else g.op("Identity", x)


def _concatenate(g, inputs, attrs):
    return g.op("Concat", *inputs, axis=attrs["axis"])


def _take(g, inputs, attrs):
    # indices are already in [0, size): the ops wrap negative ones before the kernel
    return g.op("Gather", *inputs, axis=attrs["axis"])


def _scatter_add(g, inputs, attrs):
    """ScatterND(reduction="add") into zeros, with the scattered axis moved to the front
    (ScatterND indexes leading axes): out[..., idx[j], ...] += upd[..., j, ...]."""
    upd, idx = inputs
    axis, r, n = attrs["axis"], g.in_avals[1].ndim, g.in_avals[0].ndim
    if axis:
        upd = g.op("Transpose", upd, perm=list(range(axis, axis + r)) + list(range(axis))
                   + list(range(axis + r, n)))
    parts = [g.ints("size"), dims(g, inputs[0], 0, axis), dims(g, inputs[0], axis + r, n)]
    shape = g.op("Concat", *[p for p in parts if p], axis=0)
    zeros = g.op("Expand", g.const(np.zeros((), g.in_avals[0].dtype)), shape)
    index = g.op("Unsqueeze", g.cast(idx, INT64), g.const(i64([-1])))
    out = g.op("ScatterND", zeros, index, upd, reduction="add")
    if axis:
        out = g.op("Transpose", out, perm=list(range(1, axis + 1)) + [0]
                   + list(range(axis + 1, n - r + 1)))
    return out


def _scatter(g, inputs, attrs):
    """ScatterND on rows. ONNX leaves the order of repeated indices open, so for "set"
    every write to a row carries that row's last update (found by a max-scatter of the
    update numbers): the order no longer matters. Sizes are read at run time."""
    x, u, idx = inputs
    at = g.op("Unsqueeze", g.cast(idx, INT64), g.const(i64([-1])))
    if attrs["how"] == "set":
        count, n = g.op("Size", idx), g.in_avals[0].ndim
        numbers = g.op("Range", g.const(np.int64(0)), count, g.const(np.int64(1)))
        last = g.op("ScatterND", g.op("Expand", g.const(np.int64(-1)), dims(g, x, 0, 1)), at,
                    g.op("Reshape", numbers, g.op("Shape", idx)), reduction="max")
        row = [dims(g, x, 1, n)] if n > 1 else []
        rows = g.op("Reshape", u, g.op("Concat", g.op("Unsqueeze", count, g.const(i64([0]))),
                                       *row, axis=0))
        u = g.op("Reshape", g.op("Gather", rows, g.op("Gather", last, idx, axis=0), axis=0),
                 g.op("Concat", g.op("Shape", idx), *row, axis=0))
    return g.op("ScatterND", x, at, u,
                reduction="none" if attrs["how"] == "set" else attrs["how"])


def _clamped(g, x, i):
    """The index i (any integer dtype) as an int64 scalar clamped into [0, len(x) - 1]."""
    size = g.op("Squeeze", dims(g, x, 0, 1), g.const(np.zeros(1, np.int64)))
    last = g.op("Sub", size, g.const(np.int64(1)))
    return g.op("Clip", g.cast(i, INT64), g.const(np.int64(0)), last)


def _dynamic_index(g, inputs, attrs):
    x, i = inputs
    return g.op("Gather", x, _clamped(g, x, i), axis=0)


def _dynamic_update_index(g, inputs, attrs):
    x, i, v = inputs
    at = g.op("Reshape", _clamped(g, x, i), g.const(i64([1, 1])))
    return g.op("ScatterND", x, at, g.op("Unsqueeze", v, g.const(np.zeros(1, np.int64))))


RULES = {"broadcast_to": _broadcast_to, "reshape": _reshape, "transpose": _transpose,
         "slice": _slice, "rev": _rev, "pad": _pad, "concatenate": _concatenate,
         "take": _take, "scatter_add": _scatter_add, "scatter": _scatter,
         "dynamic_index": _dynamic_index,
         "dynamic_update_index": _dynamic_update_index}
