"""ONNX rules of the reductions, scans and sorts: reduce_*, argmax/argmin, cumsum,
cumprod, argsort.

Reduction axes are inputs (opset 18). NaN propagates through max/min reductions and
argmax/argmin return the first NaN, as NumPy does (ONNX Runtime skips NaNs). Bool
operands go through int32 (NumPy's bool cumsum is a running `or`, its cumprod a running
`and`). argsort is TopK over the whole axis in ascending order, which keeps equal
elements in index order (a stable sort)."""
import numpy as np

from lowering.onnx.idioms import BOOL, INT32, INT64, BoolViaInt32, i64, is_float


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
    """Products over doubling spans, in an ONNX Loop that runs while the span is shorter
    than the axis (read at run time, so it may follow the batch): each step multiplies by
    the running products `span` places before, padded with ones."""
    (x,), axis = inputs, attrs["axis"]
    dt = INT32 if g.in_avals[0].dtype == BOOL else g.in_avals[0].dtype
    nd, scalar = g.in_avals[0].ndim, g.const(np.zeros(1, np.int64))
    n = g.op("Shape", x, start=axis, end=axis + 1)
    span_type, x_type = (INT64, (1,)), (dt, g.root.plan.dims_of(g.node.inputs[0]))
    sub = g.subgraph()
    sub.input("iter", (INT64, ()))
    sub.input("cond", (BOOL, ()))
    span, y = sub.input("span", span_type), sub.input("products", x_type)
    head = sub.op("Slice", y, sub.const(np.zeros(1, np.int64)), sub.op("Neg", span),
                  sub.const(i64([axis])))
    pads = sub.op("Concat", sub.const(np.zeros(axis, np.int64)), span,
                  sub.const(np.zeros(2 * nd - axis - 1, np.int64)), axis=0)
    y = sub.op("Mul", y, sub.op("Pad", head, pads, sub.const(np.ones((), dt))))
    span = sub.op("Mul", span, sub.const(i64([2])))
    again = sub.op("Squeeze", sub.op("Less", span, n), scalar)
    body = sub.finish([again, span, y], [(BOOL, ()), span_type, x_type], "cumprod_body")
    first = g.op("Squeeze", g.op("Less", g.const(i64([1])), n), scalar)
    return g.op("Loop", "", first, g.const(i64([1])), x, body=body, outputs=2)[1]


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
