"""Scalar bodies of the elementwise built-in kernels, with NumPy's semantics.

NaN propagates through max/min; comparisons with NaN are false except `ne`; bool add/mul/
max/min are or/and; integer arithmetic wraps; integer `div` is NumPy's floor division
(x // 0 == 0, INT_MIN // -1 == INT_MIN, and no trap), and integer `pow` raises on negative
exponents (both like the numpy kernels); float -> int conversion truncates and saturates
(NaN: 0), as JAX's does (_float_to_int). Unsigned integers compare, divide, shift right
and take max/min as unsigned; float16/bfloat16 results are rounded after each op, so
values match NumPy's and ml_dtypes' op for op. Float ops carry no fast-math flags
(irutil.FAST): each rounds once, as NumPy's ufuncs do.
"""
import numpy as np
from llvmlite import ir

from ir.errors import CodegenError, KernelError
from lowering.llvm.irutil import (BF16, F32, F64, FAST, HALF, I1, I32, const, from_memory,
                                  kind, lltype, memtype, round_to, to_memory, typed_intrinsic)
from lowering.llvm.protocol import ScalarKernel

TRANSCENDENTAL = ("exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "erf")


def _float_to_int(b, x, dst):
    """Truncating float -> int that saturates, as JAX on CPU converts (and the numpy
    kernel): NaN gives 0, values beyond the range its minimum or maximum. x is clamped to
    the range in its float type (a min and a max instruction; NaN made 0) and converted
    (narrow types through int32); where the integer maximum has no float of x's type, the
    values from the next power of two up select it. LLVM's fptosi.sat intrinsics say the
    same but are scalarized (7x slower here)."""
    info, t = np.iinfo(dst), lltype(dst)
    ftype = np.float32 if x.type == F32 else np.float64
    cap = ftype(info.max)
    cap = np.nextafter(cap, ftype(0)) if int(cap) > info.max else cap
    y = b.select(b.fcmp_ordered(">", x, ir.Constant(x.type, float(cap))),
                 ir.Constant(x.type, float(cap)), x)
    lo = ir.Constant(x.type, float(info.min))
    y = b.select(b.fcmp_ordered("<", y, lo), lo, y)
    y = b.select(b.fcmp_unordered("uno", x, x), ir.Constant(x.type, 0.0), y)
    if t.width < 32:
        r = b.trunc(b.fptosi(y, I32), t)
    else:
        r = (b.fptoui if dst.kind == "u" else b.fptosi)(y, t)
    if int(cap) == info.max:
        return r
    top = b.fcmp_ordered(">=", x, ir.Constant(x.type, float(info.max + 1)))
    return b.select(top, const(info.max, dst), r)


def _to_odd_float(b, x):
    """double x -> float rounded to odd (the nearest float if exact, else the neighbour
    with an odd last bit), so that rounding it again to float16 rounds x only once."""
    f = b.fptrunc(x, F32)
    bits = b.bitcast(f, I32)
    inexact = b.fcmp_ordered("!=", b.fpext(f, F64), x)
    even = b.icmp_unsigned("==", b.and_(bits, ir.Constant(I32, 1)), ir.Constant(I32, 0))
    away = b.fcmp_ordered(">", b.call(typed_intrinsic(b, "fabs", F64, 1), [b.fpext(f, F64)]),
                          b.call(typed_intrinsic(b, "fabs", F64, 1), [x]))
    step = b.select(away, ir.Constant(I32, -1), ir.Constant(I32, 1))
    fixed = b.bitcast(b.add(bits, step), F32)
    return b.select(b.and_(inexact, even), fixed, f)


def convert_value(b, x, src, dst):
    """x (register value of dtype src) as dtype dst, with NumPy's astype semantics
    (bfloat16 as ml_dtypes: through float32)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    s, d, t = kind(src), kind(dst), lltype(dst)
    if d == "b":
        return (b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0)) if s == "f"
                else b.icmp_unsigned("!=", x, ir.Constant(x.type, 0)))
    if s == "b":
        return b.uitofp(x, t) if d == "f" else b.zext(x, t)
    if d != "f":
        if s == "f":
            return _float_to_int(b, x, dst)
        if t.width == x.type.width:
            return x
        return b.trunc(x, t) if t.width < x.type.width else (b.sext if s == "i" else b.zext)(x, t)
    if s != "f":
        return round_to(b, (b.sitofp if s == "i" else b.uitofp)(x, t), dst)
    if t == F64:
        return x if x.type == F64 else b.fpext(x, F64)
    if x.type == F64:
        x = _to_odd_float(b, x) if dst == HALF else b.fptrunc(x, F32)
    return round_to(b, x, dst)


# Kernels whose float result is exact (no float16/bfloat16 rounding needed after them).
EXACT = frozenset(("neg", "abs", "sign", "max", "min", "floor", "ceil", "trunc", "rint",
                   "fmod"))


def _by_kind(ops, name):
    """A scalar body dispatching on the operands' dtype kind: ops = {'f'|'i'|'u'|'b': fn}.
    A float16/bfloat16 result is rounded to its precision, as NumPy rounds each op's."""
    def body(ctx, *xs, **attrs):
        op = ops.get(kind(ctx.in_dtypes[0]))
        if op is None:
            raise CodegenError(f"llvm backend: kernel {name!r} is not defined for "
                               f"{ctx.in_dtypes[0]} operands (convert them first)")
        r = op(ctx, *xs)
        return r if name in EXACT else round_to(ctx.b, r, ctx.out_dtype)
    body.__name__ = name
    return body


def _fmax(ctx, x, y, cmp):
    b = ctx.b
    take_x = b.or_(b.fcmp_ordered(cmp, x, y), b.fcmp_unordered("uno", x, x))
    return b.select(take_x, x, y)


def _sign_f(ctx, x):
    """NaN for NaN, 0.0 for zeros (ml_dtypes' bfloat16 sign keeps -0.0: so do we)."""
    b, z = ctx.b, ir.Constant(x.type, 0.0)
    r = x if ctx.in_dtypes[0] == BF16 else b.select(b.fcmp_unordered("uno", x, x), x, z)
    r = b.select(b.fcmp_ordered("<", x, z), ir.Constant(x.type, -1.0), r)
    return b.select(b.fcmp_ordered(">", x, z), ir.Constant(x.type, 1.0), r)


def _sign_i(ctx, x):
    b, z = ctx.b, ir.Constant(x.type, 0)
    return b.sub(b.zext(b.icmp_signed(">", x, z), x.type), b.zext(b.icmp_signed("<", x, z), x.type))


def _div_i(ctx, x, y):
    """x // y rounding down, as NumPy's floor_divide. `sdiv` traps (x86 idiv) or is
    undefined for y == 0 and for INT_MIN / -1, so those divide by 1 instead: the quotient
    is then x, which is NumPy's INT_MIN // -1, and y == 0 selects 0 at the end."""
    b, t = ctx.b, x.type
    zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
    by_zero = b.icmp_signed("==", y, zero)
    wraps = b.and_(b.icmp_signed("==", y, ir.Constant(t, -1)),
                   b.icmp_signed("==", x, ir.Constant(t, -(1 << (t.width - 1)))))
    d = b.select(b.or_(by_zero, wraps), one, y)
    q, r = b.sdiv(x, d), b.srem(x, d)
    inexact_negative = b.and_(b.icmp_signed("!=", r, zero),
                              b.icmp_signed("<", b.xor(r, d), zero))
    q = b.sub(q, b.zext(inexact_negative, t))
    return b.select(by_zero, zero, q)


def _div_u(ctx, x, y):
    """Unsigned x // y; x // 0 == 0 as for signed integers."""
    b, zero = ctx.b, ir.Constant(x.type, 0)
    by_zero = b.icmp_unsigned("==", y, zero)
    return b.select(by_zero, zero, b.udiv(x, b.select(by_zero, ir.Constant(x.type, 1), y)))


def _pow_i(ctx, x, e, signed=True):
    """Exponentiation by squaring (wrapping, like NumPy); negative exponents raise."""
    b = ctx.b
    if signed:
        ctx.fail_if(b.icmp_signed("<", e, ir.Constant(e.type, 0)),
                    "pow: integers to negative integer powers are not allowed", KernelError)
    one = ir.Constant(x.type, 1)
    result, base = one, x
    for k in range(x.type.width - signed):
        bit = b.trunc(b.lshr(e, ir.Constant(e.type, k)), I1)
        result = b.select(bit, b.mul(result, base), result)
        base = b.mul(base, base)
    return result


def _iabs(ctx, x):
    """|x| wrapping at the integer minimum, as NumPy does."""
    b = ctx.b
    return b.select(b.icmp_signed("<", x, ir.Constant(x.type, 0)), b.neg(x), x)


def _int_intrinsic(name):
    return lambda ctx, x, y: ctx.b.call(typed_intrinsic(ctx.b, name, x.type, 2), [x, y])


def _fcmp(op):
    return lambda ctx, x, y: (ctx.b.fcmp_unordered(op, x, y, flags=FAST) if op == "!="
                              else ctx.b.fcmp_ordered(op, x, y, flags=FAST))


def _ident(ctx, x):
    return x


def _B(method):
    return lambda ctx, x, y: getattr(ctx.b, method)(x, y)


def _F(method):
    return lambda ctx, x, y: getattr(ctx.b, method)(x, y, flags=FAST)


BINARY = {  # name: ({kind: fn(ctx, x, y)}, cost)
    "add": ({"f": _F("fadd"), "i": _B("add"), "b": _B("or_")}, 1),
    "sub": ({"f": _F("fsub"), "i": _B("sub"), "b": _B("xor")}, 1),
    "mul": ({"f": _F("fmul"), "i": _B("mul"), "b": _B("and_")}, 1),
    "div": ({"f": _F("fdiv"), "i": _div_i}, 4),
    "pow": ({"f": lambda ctx, x, y: ctx.math("pow", x, y), "i": _pow_i}, 30),
    "max": ({"f": lambda ctx, x, y: _fmax(ctx, x, y, ">"), "i": _int_intrinsic("smax"),
             "b": _B("or_")}, 2),
    "min": ({"f": lambda ctx, x, y: _fmax(ctx, x, y, "<"), "i": _int_intrinsic("smin"),
             "b": _B("and_")}, 2),
}
for _name, _op in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="), ("eq", "=="),
                   ("ne", "!=")):
    BINARY[_name] = ({"f": _fcmp(_op),
                      "i": (lambda o: lambda ctx, x, y: ctx.b.icmp_signed(o, x, y))(_op),
                      "b": (lambda o: lambda ctx, x, y: ctx.b.icmp_unsigned(o, x, y))(_op)}, 1)

UNARY = {  # name: ({kind: fn(ctx, x)}, cost)
    "neg": ({"f": lambda ctx, x: ctx.b.fneg(x, flags=FAST), "i": lambda ctx, x: ctx.b.neg(x),
             "b": _ident}, 1),
    "sqrt": ({"f": lambda ctx, x: ctx.intrinsic("sqrt", x)}, 4),
    "abs": ({"f": lambda ctx, x: ctx.intrinsic("fabs", x), "i": _iabs, "b": _ident}, 1),
    "sign": ({"f": _sign_f, "i": _sign_i, "b": _ident}, 3),
    **{n: ({"f": (lambda n: lambda ctx, x: ctx.math(n, x))(n)}, 20) for n in TRANSCENDENTAL},
}


# G1 (issue 11): rounding (native round instructions), fmod (LLVM's frem is C's fmod,
# exact; it lowers to a libm fmod call, so it does not vectorize), bitwise ops and
# NumPy's shifts: a shift by a negative amount or by the width or more gives 0 (and -1
# for a negative integer shifted right), where LLVM's shl/ashr would give poison.
def _shift(ctx, x, y, right, signed=True):
    b, t = ctx.b, x.type
    in_range = b.icmp_unsigned("<", y, ir.Constant(t, t.width))
    amount = b.and_(y, ir.Constant(t, t.width - 1))
    if not right or not signed:
        return b.select(in_range, (b.lshr if right else b.shl)(x, amount), ir.Constant(t, 0))
    return b.select(in_range, b.ashr(x, amount), b.ashr(x, ir.Constant(t, t.width - 1)))


def _signbit(ctx, x):
    ity = ir.IntType(32 if isinstance(x.type, ir.FloatType) else 64)
    return ctx.b.icmp_signed("<", ctx.b.bitcast(x, ity), ir.Constant(ity, 0))


for _name in ("floor", "ceil", "trunc", "rint"):
    UNARY[_name] = ({"f": (lambda n: lambda ctx, x: ctx.intrinsic(n, x))(_name)}, 1)
UNARY["signbit"] = ({"f": _signbit}, 1)
UNARY["atan"] = ({"f": lambda ctx, x: ctx.math("atan", x)}, 20)     # lowering.llvm.mathlib
UNARY["not"] = ({"i": lambda ctx, x: ctx.b.not_(x), "b": lambda ctx, x: ctx.b.not_(x)}, 1)
BINARY["fmod"] = ({"f": lambda ctx, x, y: ctx.b.frem(x, y)}, 20)
for _name, _method in (("and", "and_"), ("or", "or_"), ("xor", "xor")):
    BINARY[_name] = ({"i": _B(_method), "b": _B(_method)}, 1)
BINARY["shl"] = ({"i": lambda ctx, x, y: _shift(ctx, x, y, False)}, 2)
BINARY["shr"] = ({"i": lambda ctx, x, y: _shift(ctx, x, y, True)}, 2)


# Unsigned integers: as signed ones (wrapping add/sub/mul/neg, bitwise ops, shl) except
# where the sign matters.
UNSIGNED = {
    "div": _div_u, "pow": lambda ctx, x, e: _pow_i(ctx, x, e, signed=False),
    "max": _int_intrinsic("umax"), "min": _int_intrinsic("umin"), "abs": _ident,
    "sign": lambda ctx, x: ctx.b.zext(ctx.b.icmp_unsigned("!=", x, ir.Constant(x.type, 0)),
                                      x.type),
    "shr": lambda ctx, x, y: _shift(ctx, x, y, True, signed=False),
    **{n: BINARY[n][0]["b"] for n in ("gt", "ge", "lt", "le", "eq", "ne")},  # icmp_unsigned
}
for _name, (_ops, _) in (*UNARY.items(), *BINARY.items()):
    if "i" in _ops:
        _ops["u"] = UNSIGNED.get(_name, _ops["i"])


def arith(op, dtype):
    """fn(ctx, x, y) computing binary kernel `op` on `dtype` values (for whole kernels
    that accumulate: reductions, matmul, scatter_add)."""
    return BINARY[op][0][kind(dtype)]


def _select(ctx, c, x, y):
    return ctx.b.select(c, x, y)


def _convert(ctx, x, *, dtype):
    return convert_value(ctx.b, x, ctx.in_dtypes[0], dtype)


def _bitcast(ctx, x, *, dtype):
    """x's bits as dtype (equal item sizes; tracer.lax.bitcast): integers of one width
    share a register type."""
    src, dst = ctx.in_dtypes[0], np.dtype(dtype)
    if src == dst:
        return x
    b = ctx.b
    if src == BF16:     # its float32 register holds its 16 bits, exactly: no rounding
        x = b.trunc(b.lshr(b.bitcast(x, I32), ir.Constant(I32, 16)), ir.IntType(16))
    elif kind(src) == "f":
        x = b.bitcast(to_memory(b, x, src), ir.IntType(8 * src.itemsize))
    if kind(dst) == "f":
        x = from_memory(ctx.b, ctx.b.bitcast(x, memtype(dst)), dst)
    return x


KERNELS = {name: ScalarKernel(_by_kind(ops, name), cost)
           for name, (ops, cost) in {**UNARY, **BINARY}.items()}
KERNELS["select"] = ScalarKernel(_select)
KERNELS["convert"] = ScalarKernel(_convert)
KERNELS["bitcast"] = ScalarKernel(_bitcast, cost=0)
