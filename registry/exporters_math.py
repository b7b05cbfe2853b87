"""ONNX exporters of the rounding, fmod, signbit, atan, bitwise and shift kernels; see
registry.exporters for the exporter protocol.

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
"""
import numpy as np

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


for _name, _fn in {
        "floor": _op("Floor"), "ceil": _op("Ceil"), "rint": _op("Round"), "trunc": _trunc,
        "atan": _atan, "fmod": _op("Mod", fmod=1), "signbit": _signbit,
        "and": _bitwise("And", "BitwiseAnd"), "or": _bitwise("Or", "BitwiseOr"),
        "xor": _bitwise("Xor", "BitwiseXor"), "not": _bitwise("Not", "BitwiseNot"),
        "shl": _shift("LEFT"), "shr": _shift("RIGHT")}.items():
    register_exporter(_name, "onnx", _fn)
