"""ONNX building blocks that several rule modules share: dtype constants, the
bool-through-int32 wrapper (BoolViaInt32), a Where that keeps the sign of zeros, the
sign bit of floats, run-time dims, dilation and reversal along axes."""
import numpy as np

from ir.types import dtype_kind

BOOL, INT32, INT64 = np.dtype(bool), np.dtype(np.int32), np.dtype(np.int64)
INT64_MIN = np.iinfo(np.int64).min


def i64(values):
    return np.array(values, np.int64)


class BoolViaInt32:
    """An exporter run on int32 where the node's data inputs (those from `data_from` on,
    all of one dtype) are bool: ONNX Runtime has no bool kernels for arithmetic,
    ordering, reductions, scans, TopK, MatMul and Where. A bool result is cast back
    (nonzero -> True, as NumPy's bool add, multiply, max, min, any, cumsum and cumprod
    are)."""

    def __init__(self, export, data_from=0):
        self.export, self.data_from = export, data_from

    def __call__(self, g, inputs, attrs):
        if g.in_avals[-1].dtype != BOOL:
            return self.export(g, inputs, attrs)
        k = self.data_from
        out = self.export(g, list(inputs[:k]) + [g.cast(x, INT32) for x in inputs[k:]], attrs)
        return g.cast(out, BOOL) if g.out_avals[0].dtype == BOOL else out

    def __repr__(self):
        inner = self.export
        name = f"{inner.__module__}.{inner.__qualname__}" if hasattr(inner, "__qualname__") \
            else repr(inner)
        return f"BoolViaInt32({name})"


def is_float(g):
    return dtype_kind(g.in_avals[0].dtype) == "f"


def where(g, cond, a, b, dtype):
    """Where(cond, a, b) of `dtype`, keeping the sign of a zero: ONNX Runtime's float Where
    returns +0.0 for a -0.0 in its first slot (it merges the two selections by testing
    the first against 0), and its optimizer swaps the slots (Not + Where), so no slot is
    safe. Only zeros go wrong, and a zero's reciprocal is an infinity, which survives:
    zero results are made +0.0, then multiplied by -1 where Where(cond, 1 / a, 1 / b) is
    -inf."""
    out = g.op("Where", cond, a, b)
    if dtype_kind(dtype) != "f":
        return out
    zero, one = g.const(np.zeros((), dtype)), g.const(np.ones((), dtype))
    inverse = g.op("Where", cond, g.op("Reciprocal", a), g.op("Reciprocal", b))
    is_zero = g.op("Equal", out, zero)
    negative = g.op("And", is_zero, g.op("Less", inverse, zero))
    return g.op("Mul", g.op("Where", is_zero, zero, out),
                g.op("Where", negative, g.const(-np.ones((), dtype)), one))


def negative(g, x, dt):
    """x's sign bit, of -0.0 too (min(x, 1 / x) is -inf there); False for NaN: ONNX below
    opset 26 has no op that reads a NaN's sign bit."""
    return g.op("Less", g.op("Min", x, g.op("Reciprocal", x)), g.const(np.zeros((), dt)))


def sign_of(g, x, dt):
    """-1 where x's sign bit is set, 1 elsewhere (a Where of nonzero constants, which
    ONNX Runtime selects exactly)."""
    return g.op("Where", negative(g, x, dt), g.const(-np.ones((), dt)),
                g.const(np.ones((), dt)))


def dims(g, x, start, stop):
    """Dims [start, stop) of x's run-time shape (None if empty)."""
    return g.op("Shape", x, start=start, end=stop) if stop > start else None


def dilate(g, x, axis, gap, ndim, fill=None):
    """`gap` zeros (or the scalar constant named `fill`) between neighbours along `axis`:
    give each element a trailing block of them on a new axis, merge the two axes, and
    drop the last block."""
    pads = np.zeros(2 * (ndim + 1), np.int64)
    pads[ndim + 1 + axis + 1] = gap
    y = g.op("Pad", g.op("Unsqueeze", x, g.const(i64([axis + 1]))), g.const(pads),
             *[fill] if fill else [])
    merged = g.op("Mul", dims(g, x, axis, axis + 1), g.const(i64([gap + 1])))
    parts = [dims(g, x, 0, axis), merged, dims(g, x, axis + 1, ndim)]
    y = g.op("Reshape", y, g.op("Concat", *[p for p in parts if p], axis=0), allowzero=1)
    return g.op("Slice", y, g.const(np.zeros(1, np.int64)), g.const(i64([-gap])),
                g.const(i64([axis])))


def reverse(g, x, axes):
    """x reversed along `axes` (a Slice with step -1 over each)."""
    if not axes:
        return g.op("Identity", x)
    k = len(axes)
    return g.op("Slice", x, g.const(np.full(k, -1, np.int64)),
                g.const(np.full(k, INT64_MIN, np.int64)), g.const(i64(axes)),
                g.const(np.full(k, -1, np.int64)))
