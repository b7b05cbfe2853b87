"""ONNX rule of bitcast. ONNX has no BitCast below opset 26, so it goes through the bits
as uint64 arithmetic: a float's fields from its value, exactly (so tracer.random's
samplers export bit for bit), except a NaN's sign and payload, which come out as NumPy's
default NaN."""
import numpy as np

from ir import BFLOAT16
from lowering.onnx.idioms import BOOL, negative

# (mantissa bits, exponent bits) of each float dtype's layout
LAYOUT = {np.dtype(np.float16): (10, 5), BFLOAT16: (7, 8), np.dtype(np.float32): (23, 8),
          np.dtype(np.float64): (52, 11)}
F64, U64 = np.dtype(np.float64), np.dtype(np.uint64)


def _float_bits(g, x, dt):
    """The bits of float x (of layout `dt`, computed in float64) as uint64: exponent from
    log2 corrected by the exact power of two, mantissa from the exact scaling."""
    mb, eb = LAYOUT[dt]
    bias, top = 2 ** (eb - 1) - 1, 2 ** eb - 1

    def c(v):
        return g.const(np.float64(v))
    x = g.cast(x, F64)
    a = g.op("Abs", x)
    finite = g.op("Not", g.op("Or", g.op("IsNaN", x), g.op("IsInf", x)))
    normal = g.op("And", finite, g.op("GreaterOrEqual", a, c(2.0 ** (1 - bias))))
    safe = g.op("Where", normal, a, c(1.0))
    e = g.op("Floor", g.op("Div", g.op("Log", safe), c(np.log(2))))
    p = g.op("Pow", c(2.0), e)
    e = g.op("Sub", e, g.cast(g.op("Greater", p, safe), F64))
    e = g.op("Add", e, g.cast(g.op("LessOrEqual", g.op("Mul", p, c(2.0)), safe), F64))
    frac = g.op("Mul", g.op("Sub", g.op("Div", safe, g.op("Pow", c(2.0), e)), c(1.0)),
                c(2.0 ** mb))
    half = c(2.0 ** ((mb + bias - 1) / 2))      # two factors: 2**1074 overflows float64
    tiny = g.op("Mul", g.op("Mul", g.op("Where", finite, a, c(0.0)), half), half)
    exponent = g.op("Where", normal, g.op("Add", e, c(bias)),
                    g.op("Where", finite, c(0.0), c(top)))
    mantissa = g.op("Where", normal, frac, g.op(
        "Where", finite, tiny, g.op("Where", g.op("IsNaN", x), c(2.0 ** (mb - 1)), c(0.0))))
    bits = g.op("Add", g.op("Mul", g.cast(exponent, U64), g.const(np.uint64(2 ** mb))),
                g.cast(mantissa, U64))
    sign = g.cast(negative(g, x, F64), U64)
    return g.op("Add", bits, g.op("Mul", sign, g.const(np.uint64(2 ** (mb + eb)))))


def _bits_float(g, bits, dt):
    """The float64 value of uint64 `bits` in the layout of `dt`."""
    mb, eb = LAYOUT[dt]
    bias, width = 2 ** (eb - 1) - 1, 1 + eb + mb

    def field(shift_left, keep):
        up = g.op("BitShift", bits, g.const(np.uint64(shift_left)), direction="LEFT")
        return g.cast(g.op("BitShift", up, g.const(np.uint64(64 - keep)),
                           direction="RIGHT"), F64)

    def c(v):
        return g.const(np.float64(v))
    e, m, sign = field(65 - width, eb), field(64 - mb, mb), field(64 - width, 1)
    value = g.op("Mul", g.op("Add", m, c(2.0 ** mb)),
                 g.op("Pow", c(2.0), g.op("Sub", e, c(bias + mb))))
    value = g.op("Where", g.op("Equal", e, c(0.0)), g.op("Mul", m, c(2.0 ** (1 - bias - mb))),
                 value)
    special = g.op("Where", g.op("Equal", m, c(0.0)), c(np.inf), c(np.nan))
    value = g.op("Where", g.op("Equal", e, c(2.0 ** eb - 1)), special, value)
    return g.op("Mul", value, g.op("Sub", c(1.0), g.op("Mul", sign, c(2.0))))


def _bitcast(g, inputs, attrs):
    """Through the bits as uint64: a float's from its value (a NaN's sign and payload
    are not readable in ONNX: NaN gives NumPy's default quiet NaN), an integer's by
    reduction modulo 2**width; then the value of the target dtype."""
    (x,), src = inputs, g.node.inputs[0].aval.dtype
    dst = np.dtype(attrs["dtype"])
    if src == BOOL:
        return g.op("Identity", x)
    if src in LAYOUT:
        bits = _float_bits(g, x, src)
    elif src.itemsize == 8:
        bits = g.cast(x, U64)
    else:
        words = g.const(np.int64(2 ** (8 * src.itemsize)))
        bits = g.cast(g.op("Mod", g.cast(x, np.int64), words), U64)
    return g.cast(_bits_float(g, bits, dst) if dst in LAYOUT else bits, g.out_avals[0].dtype)


RULES = {"bitcast": _bitcast}
