"""ONNX rules of the elementwise kernels: arithmetic, comparisons, select, conversions,
rounding, atan, bitwise ops and shifts.

They keep the kernels' NumPy semantics where ONNX or ONNX Runtime differ: log1p and expm1
stay accurate near 0; integer division floors, with x // 0 == 0 and INT_MIN // -1 ==
INT_MIN; float -> int conversion saturates; bool operands go through int32. ONNX's Round
rounds half to even and Mod(fmod=1) is C's fmod, as NumPy's rint and fmod. ONNX's
BitShift takes unsigned operands only and leaves counts outside [0, width) undefined, so
shifts run on the unsigned bits with the count kept in range, and NumPy's result for the
others is selected: 0, or -1 for a negative value shifted right (which is also what a
shift by width - 1 gives, so shr clamps the count there). A signed right shift is
~(~x >> n) for negative x (~x is then non-negative, where logical and arithmetic shifts
agree). The narrower ints arrive widened (lowering.onnx.dtypes), whose cast back keeps
the low bits NumPy keeps. signbit(-nan) is False here where NumPy says True (see
idioms.negative).
"""
import numpy as np

from ir.types import dtype_kind
from lowering.onnx.idioms import BOOL, BoolViaInt32, negative, sign_of, where
from registry.exporters import OnnxOperator

UNSIGNED = {np.dtype(np.int32): np.dtype(np.uint32), np.dtype(np.int64): np.dtype(np.uint64),
            np.dtype(np.uint64): np.dtype(np.uint64)}


def _select(g, inputs, attrs):
    return where(g, *inputs, g.in_avals[-1].dtype)


def _abs(g, inputs, attrs):
    return g.op("Identity", *inputs) if g.in_avals[0].dtype == BOOL else g.op("Abs", *inputs)


def _log1p(g, inputs, attrs):
    """Goldberg's log1p: log(u) * x / (u - 1) with u = 1 + x (x itself where u rounds
    to 1): accurate near 0, where log(1 + x) loses every digit."""
    (x,) = inputs
    one = g.const(np.ones((), g.in_avals[0].dtype))
    u = g.op("Add", x, one)
    d = g.op("Sub", u, one)
    r = g.op("Div", g.op("Mul", g.op("Log", u), x), d)
    r = g.op("Where", g.op("IsInf", u, detect_negative=0), u, r)
    return where(g, g.op("Equal", d, g.const(np.zeros((), g.in_avals[0].dtype))), x, r,
                 g.in_avals[0].dtype)


def _expm1(g, inputs, attrs):
    """Kahan's expm1: (u - 1) * x / log(u) with u = exp(x) (x itself where u rounds
    to 1): accurate near 0, where exp(x) - 1 loses every digit."""
    (x,) = inputs
    dt = g.in_avals[0].dtype
    u = g.op("Exp", x)
    d = g.op("Sub", u, g.const(np.ones((), dt)))
    r = g.op("Div", g.op("Mul", d, x), g.op("Log", u))
    r = g.op("Where", g.op("IsInf", u, detect_negative=0), u, r)
    r = g.op("Where", g.op("Equal", d, g.const(np.array(-1, dt))), d, r)
    return where(g, g.op("Equal", u, g.const(np.ones((), dt))), x, r, dt)


def _div(g, inputs, attrs):
    """True division of floats; NumPy's floor division of integers, where x // 0 == 0
    and INT_MIN // -1 wraps to INT_MIN (ONNX's Div truncates, and would trap on both):
    truncate by a safe divisor, step down where the remainder's sign differs from the
    divisor's, then patch the two special divisors."""
    x, y = inputs
    dt = g.in_avals[0].dtype
    if dtype_kind(dt) == "f":
        return g.op("Div", x, y)
    if dtype_kind(dt) == "u":       # truncation is floor; x // 0 == 0 (no uint64 Where)
        by_zero = g.op("Equal", y, g.const(np.array(0, dt)))
        q = g.op("Div", x, g.op("Add", y, g.cast(by_zero, dt)))
        return g.op("Mul", q, g.cast(g.op("Not", by_zero), dt))
    zero, one, minus_one = (g.const(np.array(v, dt)) for v in (0, 1, -1))
    by_zero, by_minus_one = g.op("Equal", y, zero), g.op("Equal", y, minus_one)
    safe = g.op("Where", g.op("Or", by_zero, by_minus_one), one, y)
    q = g.op("Div", x, safe)
    r = g.op("Sub", x, g.op("Mul", q, safe))
    down = g.op("And", g.op("Not", g.op("Equal", r, zero)),
                g.op("Xor", g.op("Less", r, zero), g.op("Less", safe, zero)))
    q = g.op("Sub", q, g.cast(down, dt))
    q = g.op("Where", by_minus_one, g.op("Sub", zero, x), q)
    return g.op("Where", by_zero, zero, q)


def _ne(g, inputs, attrs):
    return g.op("Not", g.op("Equal", *inputs))


def _convert(g, inputs, attrs):
    """Cast; float -> int truncates and saturates as the kernels do (NaN -> 0, beyond the
    range its minimum or maximum; ONNX leaves those casts undefined): the bounds are
    powers of two, exact in any float dtype, and out-of-range values are cast as 0 and
    the bound added in the (widened) output dtype, where ONNX Runtime has Mul and Add."""
    (x,), to, wide = inputs, np.dtype(attrs["dtype"]), g.out_avals[0].dtype
    if dtype_kind(g.in_avals[0].dtype) != "f" or to.kind not in "iu":
        return g.cast(x, to)
    info, fdt = np.iinfo(to), g.in_avals[0].dtype
    below = g.op("Less", x, g.const(np.array(info.min, fdt)))
    above = g.op("GreaterOrEqual", x, g.const(np.array(float(info.max) + 1, fdt)))
    out_of_range = g.op("Or", g.op("Or", below, above), g.op("IsNaN", x))
    inside = g.op("Where", out_of_range, g.const(np.zeros((), fdt)), x)
    out = g.cast(g.cast(inside, to), wide) if to != wide else g.cast(inside, to)
    for hit, bound in ((above, info.max), (below, info.min)):
        if bound:
            out = g.op("Add", out, g.op("Mul", g.cast(hit, wide), g.const(np.array(bound, wide))))
    return out


def _trunc(g, inputs, attrs):
    (x,) = inputs
    return g.op("Mul", g.op("Floor", g.op("Abs", x)), sign_of(g, x, g.in_avals[0].dtype))


def _signbit(g, inputs, attrs):
    return negative(g, inputs[0], g.in_avals[0].dtype)


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
    return g.op("Mul", g.op("Abs", g.op("Where", mid, r, z)), sign_of(g, x, np.float64))


def _bitwise(bool_op, int_op):
    def export(g, inputs, attrs):
        return g.op(bool_op if g.in_avals[0].dtype == BOOL else int_op, *inputs)
    return export


def _shift(direction):
    def export(g, inputs, attrs):
        x, n = inputs
        dt = g.in_avals[0].dtype
        width, unsigned = 8 * dt.itemsize, UNSIGNED[dt]
        in_range = g.op("Less", g.cast(n, unsigned), g.const(np.array(width, unsigned)))
        if dt.kind == "i" and direction == "RIGHT":
            n = g.op("Where", in_range, n, g.const(np.array(width - 1, dt)))
            minus = g.op("Less", x, g.const(np.zeros((), dt)))
            x = g.op("Where", minus, g.op("BitwiseNot", x), x)
            out = g.cast(g.op("BitShift", g.cast(x, unsigned), g.cast(n, unsigned),
                              direction=direction), dt)
            return g.op("Where", minus, g.op("BitwiseNot", out), out)
        keep = g.cast(in_range, unsigned)       # a product: ONNX Runtime has no uint64 Where
        out = g.op("BitShift", g.cast(x, unsigned), g.op("Mul", g.cast(n, unsigned), keep),
                   direction=direction)
        return g.cast(g.op("Mul", out, keep), dt)
    return export


RULES = {
    **{k: OnnxOperator(v) for k, v in [
        ("neg", "Neg"), ("exp", "Exp"), ("log", "Log"), ("sqrt", "Sqrt"), ("sin", "Sin"),
        ("cos", "Cos"), ("tanh", "Tanh"), ("erf", "Erf"), ("sign", "Sign"), ("sub", "Sub"),
        ("pow", "Pow"), ("eq", "Equal"), ("floor", "Floor"), ("ceil", "Ceil"),
        ("rint", "Round"), ("stop_gradient", "Identity"),
        ("checkpoint_name", "Identity")]},
    **{k: BoolViaInt32(OnnxOperator(v)) for k, v in [
        ("add", "Add"), ("mul", "Mul"), ("max", "Max"), ("min", "Min"), ("gt", "Greater"),
        ("ge", "GreaterOrEqual"), ("lt", "Less"), ("le", "LessOrEqual")]},
    "select": BoolViaInt32(_select, data_from=1),
    "abs": _abs, "log1p": _log1p, "expm1": _expm1, "div": _div, "ne": _ne,
    "convert": _convert, "trunc": _trunc, "signbit": _signbit, "atan": _atan,
    "fmod": OnnxOperator("Mod", fmod=1),
    "and": _bitwise("And", "BitwiseAnd"), "or": _bitwise("Or", "BitwiseOr"),
    "xor": _bitwise("Xor", "BitwiseXor"), "not": _bitwise("Not", "BitwiseNot"),
    "shl": _shift("LEFT"), "shr": _shift("RIGHT"),
}
