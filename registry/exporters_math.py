"""ONNX exporters of the rounding, fmod, signbit, atan, bitwise, shift and bitcast
kernels; see registry.exporters for the exporter protocol.

ONNX's Round rounds half to even and Mod(fmod=1) is C's fmod, as NumPy's rint and fmod.
Bitwise kernels are And/Or/Xor/Not on bools and the Bitwise* ops on integers. ONNX's
BitShift takes unsigned operands only and leaves counts outside [0, width) undefined, so
shifts run on the unsigned bits with the count kept in range, and NumPy's result for the
others is selected: 0, or -1 for a negative value shifted right (which is also what a
shift by width - 1 gives, so shr clamps the count there). A signed right shift is
~(~x >> n) for negative x (~x is then non-negative, where logical and arithmetic shifts
agree). The narrower ints arrive widened (registry.exporters_dtypes), whose cast back
keeps the low bits NumPy keeps.

signbit is min(x, 1 / x) < 0, which holds for -0.0 too: ONNX below opset 26 has no op
that reads a NaN's sign bit, so signbit(-nan) is False in ONNX where NumPy says True.
bitcast (no BitCast op below opset 26) goes through the bits as uint64 arithmetic: a
float's fields from its value, exactly (so tracer.random's samplers export bit for bit),
except a NaN's sign and payload, which come out as NumPy's default NaN.
"""
import numpy as np

from ir import BFLOAT16
from registry.exporters import BOOL, register_exporter

UNSIGNED = {np.dtype(np.int32): np.dtype(np.uint32), np.dtype(np.int64): np.dtype(np.uint64),
            np.dtype(np.uint64): np.dtype(np.uint64)}


def _op(op_type, **attributes):
    return lambda g, inputs, attrs: g.op(op_type, *inputs, **attributes)


def _bitwise(bool_op, int_op):
    def export(g, inputs, attrs):
        return g.op(bool_op if g.in_avals[0].dtype == BOOL else int_op, *inputs)
    return export


def _negative(g, x, dt):
    """x's sign bit, of -0.0 too (min(x, 1 / x) is -inf there); False for NaN."""
    return g.op("Less", g.op("Min", x, g.op("Reciprocal", x)), g.const(np.zeros((), dt)))


def _sign_of(g, x, dt):
    """-1 where x's sign bit is set, 1 elsewhere (a Where of nonzero constants: ONNX
    Runtime's Where loses the sign of zeros, see registry.exporters.where)."""
    return g.op("Where", _negative(g, x, dt), g.const(-np.ones((), dt)),
                g.const(np.ones((), dt)))


def _trunc(g, inputs, attrs):
    (x,) = inputs
    return g.op("Mul", g.op("Floor", g.op("Abs", x)), _sign_of(g, x, g.in_avals[0].dtype))


def _signbit(g, inputs, attrs):
    return _negative(g, inputs[0], g.in_avals[0].dtype)


# Cephes' atan (atan.c)
ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
          -1.228866684490136173410e2, -6.485021904942025371773e1)
ATAN_Q = (1.0, 2.485846490142306297962e1, 1.650270098316988542046e2,
          4.328810604912902668951e2, 4.853903996359136964868e2, 1.945506571482613964425e2)
MOREBITS, TAN_3PI_8 = 6.123233995736765886130e-17, 2.41421356237309504880


def _atan(g, inputs, attrs):
    """float32 in float64, rounded once: ONNX Runtime's float32 Atan is off by an ulp
    where NumPy's is not (and it has no float64 one)."""
    (x,), dt = inputs, g.in_avals[0].dtype
    return _atan64(g, x) if dt == np.float64 else g.cast(_atan64(g, g.cast(x, np.float64)), dt)


def _atan64(g, x):
    """Cephes' reduction of |x| to |t| <= 0.66 and a rational function: |x| itself below
    0.66, (|x| - 1) / (|x| + 1) around pi/4 and -1 / |x| around pi/2 (adding the low bits
    of pi/4 and pi/2); x's sign put back (of -0.0 too)."""
    def c(v):
        return g.const(np.float64(v))

    def poly(z, coefs):
        acc = c(coefs[0])
        for k in coefs[1:]:
            acc = g.op("Add", g.op("Mul", acc, z), c(k))
        return acc
    a = g.op("Abs", x)
    far, mid = g.op("Greater", a, c(TAN_3PI_8)), g.op("Greater", a, c(0.66))
    t = g.op("Where", far, g.op("Div", c(-1.0), a), g.op(
        "Where", mid, g.op("Div", g.op("Sub", a, c(1.0)), g.op("Add", a, c(1.0))), a))
    z = g.op("Mul", t, t)
    z = g.op("Div", g.op("Mul", z, poly(z, ATAN_P)), poly(z, ATAN_Q))
    z = g.op("Add", g.op("Mul", t, z), t)
    r = g.op("Add", g.op("Where", far, c(np.pi / 2), c(np.pi / 4)),
             g.op("Add", z, g.op("Where", far, c(MOREBITS), c(MOREBITS / 2))))
    return g.op("Mul", g.op("Abs", g.op("Where", mid, r, z)), _sign_of(g, x, np.float64))


def _shift(direction):
    def export(g, inputs, attrs):
        x, n = inputs
        dt = g.in_avals[0].dtype
        width, unsigned = 8 * dt.itemsize, UNSIGNED[dt]
        in_range = g.op("Less", g.cast(n, unsigned), g.const(np.array(width, unsigned)))
        if dt.kind == "i" and direction == "RIGHT":
            n = g.op("Where", in_range, n, g.const(np.array(width - 1, dt)))
            negative = g.op("Less", x, g.const(np.zeros((), dt)))
            x = g.op("Where", negative, g.op("BitwiseNot", x), x)
            out = g.cast(g.op("BitShift", g.cast(x, unsigned), g.cast(n, unsigned),
                              direction=direction), dt)
            return g.op("Where", negative, g.op("BitwiseNot", out), out)
        keep = g.cast(in_range, unsigned)       # a product: ONNX Runtime has no uint64 Where
        out = g.op("BitShift", g.cast(x, unsigned), g.op("Mul", g.cast(n, unsigned), keep),
                   direction=direction)
        return g.cast(g.op("Mul", out, keep), dt)
    return export


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
    sign = g.cast(_negative(g, x, F64), U64)
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


for _name, _fn in {
        "bitcast": _bitcast, "floor": _op("Floor"), "ceil": _op("Ceil"),
        "rint": _op("Round"), "trunc": _trunc,
        "atan": _atan, "fmod": _op("Mod", fmod=1), "signbit": _signbit,
        "and": _bitwise("And", "BitwiseAnd"), "or": _bitwise("Or", "BitwiseOr"),
        "xor": _bitwise("Xor", "BitwiseXor"), "not": _bitwise("Not", "BitwiseNot"),
        "shl": _shift("LEFT"), "shr": _shift("RIGHT")}.items():
    register_exporter(_name, "onnx", _fn)
