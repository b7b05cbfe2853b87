"""ONNX exporters of the scan and sort kernels (cumsum, cumprod, argsort); see
registry.exporters for the exporter protocol. Bool operands go through int32, which
ONNX Runtime's CumSum/TopK/Mul support (NumPy's bool cumsum is a running `or`, its
cumprod a running `and`: nonzero -> True). argsort is TopK over the whole axis in
ascending order, which keeps equal elements in index order (a stable sort)."""
import numpy as np

from registry.exporters import BOOL, INT32, INT64, register_exporter


def _via_int32(export):
    def wrapped(g, inputs, attrs):
        if g.in_avals[0].dtype != BOOL:
            return export(g, inputs, attrs)
        out = export(g, [g.cast(inputs[0], INT32)], attrs)
        return g.cast(out, BOOL) if g.out_avals[0].dtype == BOOL else out
    return wrapped


def _cumsum(g, inputs, attrs):
    return g.op("CumSum", inputs[0], g.const(np.array(attrs["axis"], np.int64)))


def _cumprod(g, inputs, attrs):
    """Products over doubling spans (log2(n) steps; n is the static axis length): each
    step multiplies by the running products `d` places before, padded with ones."""
    (x,), axis = inputs, attrs["axis"]
    n, nd = g.in_avals[0].shape[axis], g.in_avals[0].ndim
    one = g.const(np.ones((), g.in_avals[0].dtype if g.in_avals[0].dtype != BOOL else INT32))
    d = 1
    while d < n:
        head = g.op("Slice", x, g.const(np.zeros(1, np.int64)), g.const(np.array([-d])),
                    g.const(np.array([axis], np.int64)))
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


for _name, _fn in {"cumsum": _cumsum, "cumprod": _cumprod, "argsort": _argsort}.items():
    register_exporter(_name, "onnx", _via_int32(_fn))
