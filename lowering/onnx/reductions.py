"""ONNX rules of the reductions, scans and sorts: reduce_*, argmax/argmin, cumsum,
cumprod, argsort.

Reduction axes are inputs (opset 18). NaN propagates through max/min reductions and
argmax/argmin return the first NaN, as NumPy does (ONNX Runtime skips NaNs). Bool
operands go through int32 (NumPy's bool cumsum is a running `or`, its cumprod a running
`and`). argsort is TopK over the whole axis in ascending order, which keeps equal
elements in index order (a stable sort)."""
import numpy as np

from lowering.onnx.idioms import (BOOL, INT32, INT64, BoolViaInt32, check_batch_free, i64,
                                  is_float)


def _reduce(op_type):
    def export(g, inputs, attrs):
        (x,) = inputs
        if not attrs["axes"]:
            return g.op("Identity", x)
        axes = g.const(i64(attrs["axes"]))
        out = g.op(op_type, x, axes, keepdims=0)
        if op_type in ("ReduceMax", "ReduceMin") and is_float(g):
            # ONNX Runtime skips NaN here; NumPy propagates it. A sum of the NaNs is NaN
            # exactly when the reduced slice holds one.
            zero = g.const(np.zeros((), g.in_avals[0].dtype))
            isnan = g.op("IsNaN", x)
            nans = g.op("ReduceSum", g.op("Where", isnan, x, zero), axes, keepdims=0)
            out = g.op("Where", g.op("IsNaN", nans), nans, out)
        return out
    return export


def _arg_reduce(op_type):
    def export(g, inputs, attrs):
        (x,) = inputs
        axis = attrs["axis"]
        out = g.op(op_type, x, axis=axis, keepdims=0, select_last_index=0)
        if is_float(g):   # NumPy returns the first NaN; ONNX Runtime ignores NaNs
            isnan = g.cast(g.op("IsNaN", x), INT32)
            first = g.op("ArgMax", isnan, axis=axis, keepdims=0, select_last_index=0)
            any_nan = g.op("ReduceMax", isnan, g.const(i64([axis])), keepdims=0)
            out = g.op("Where", g.cast(any_nan, BOOL), first, out)
        return out
    return export


def _cumsum(g, inputs, attrs):
    return g.op("CumSum", inputs[0], g.const(np.array(attrs["axis"], np.int64)))


def _cumprod(g, inputs, attrs):
    """Products over doubling spans (log2(n) steps; n is the static axis length): each
    step multiplies by the running products `d` places before, padded with ones."""
    (x,), axis = inputs, attrs["axis"]
    check_batch_free(g, [axis], "runs log2(n) steps for the example's length n of its axis, "
                     "the batch axis")
    n, nd = g.in_avals[0].shape[axis], g.in_avals[0].ndim
    one = g.const(np.ones((), g.in_avals[0].dtype if g.in_avals[0].dtype != BOOL else INT32))
    d = 1
    while d < n:
        head = g.op("Slice", x, g.const(np.zeros(1, np.int64)), g.const(i64([-d])),
                    g.const(i64([axis])))
        pads = np.zeros(2 * nd, np.int64)
        pads[axis] = d
        x = g.op("Mul", x, g.op("Pad", head, g.const(pads), one))
        d *= 2
    return x if x is not inputs[0] else g.op("Identity", x)


def _argsort(g, inputs, attrs):
    (x,), axis = inputs, attrs["axis"]
    k = g.op("Shape", x, start=axis, end=axis + 1)
    _, idx = g.op("TopK", x, k, axis=axis, largest=0, sorted=1, outputs=2)
    return g.cast(idx, INT64)


RULES = {name: BoolViaInt32(fn) for name, fn in {
    "reduce_sum": _reduce("ReduceSum"), "reduce_max": _reduce("ReduceMax"),
    "reduce_min": _reduce("ReduceMin"), "reduce_prod": _reduce("ReduceProd"),
    "argmax": _arg_reduce("ArgMax"), "argmin": _arg_reduce("ArgMin"),
    "cumsum": _cumsum, "cumprod": _cumprod, "argsort": _argsort}.items()}
