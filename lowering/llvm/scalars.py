"""Scalar bodies of the elementwise built-in kernels, with NumPy's semantics.

NaN propagates through max/min; comparisons with NaN are false except `ne`; bool add/mul/
max/min are or/and; integer arithmetic wraps; integer `div` is NumPy's floor division
(x // 0 == 0, INT_MIN // -1 == INT_MIN, and no trap), and integer `pow` raises on negative
exponents (both like the numpy kernels); float -> int conversion truncates, and NaN or
out-of-range values give the integer minimum, as NumPy does on x86.
"""
import numpy as np
from llvmlite import ir

from ir.errors import CodegenError, KernelError
from lowering.llvm.irutil import FAST, I1, lltype, typed_intrinsic
from lowering.llvm.protocol import ScalarKernel

# Division keeps IEEE results: `arcp` would turn x / 49.0 into x * (1 / 49.0), and 49 / 49
# into 0.9999999999999999, which truncates to 0 where NumPy gives 1.
EXACT_DIV = tuple(f for f in FAST if f != "arcp")

TRANSCENDENTAL = ("exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "erf")


def _kind(dtype):
    return np.dtype(dtype).kind      # 'b', 'i' or 'f'


def convert_value(b, x, src, dst):
    """x (register value of dtype src) as dtype dst, with NumPy's astype semantics."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    s, d, t = _kind(src), _kind(dst), lltype(dst)
    if d == "b":
        return (b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0)) if s == "f"
                else b.icmp_unsigned("!=", x, ir.Constant(x.type, 0)))
    if s == "b":
        return b.uitofp(x, t) if d == "f" else b.zext(x, t)
    if s == "i" and d == "i":
        return b.sext(x, t) if dst.itemsize > src.itemsize else b.trunc(x, t)
    if s == "i":
        return b.sitofp(x, t)
    if d == "f":
        return b.fpext(x, t) if dst.itemsize > src.itemsize else b.fptrunc(x, t)
    bits = dst.itemsize * 8                      # float -> int: NumPy/x86 semantics
    lo, hi = ir.Constant(x.type, -2.0 ** (bits - 1)), ir.Constant(x.type, 2.0 ** (bits - 1))
    ok = b.and_(b.fcmp_ordered(">=", x, lo), b.fcmp_ordered("<", x, hi))
    r = b.fptosi(b.select(ok, x, ir.Constant(x.type, 0.0)), t)
    return b.select(ok, r, ir.Constant(t, -(1 << (bits - 1))))


def _by_kind(ops, name):
    """A scalar body dispatching on the operands' dtype kind: ops = {'f'|'i'|'b': fn}."""
    def body(ctx, *xs, **attrs):
        op = ops.get(_kind(ctx.in_dtypes[0]))
        if op is None:
            raise CodegenError(f"llvm backend: kernel {name!r} is not defined for "
                               f"{ctx.in_dtypes[0]} operands (convert them first)")
        return op(ctx, *xs)
    body.__name__ = name
    return body


def _fmax(ctx, x, y, cmp):
    b = ctx.b
    take_x = b.or_(b.fcmp_ordered(cmp, x, y), b.fcmp_unordered("uno", x, x))
    return b.select(take_x, x, y)


def _sign_f(ctx, x):
    b, z = ctx.b, ir.Constant(x.type, 0.0)
    r = b.select(b.fcmp_unordered("uno", x, x), x, z)
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


def _pow_i(ctx, x, e):
    """Exponentiation by squaring (wrapping, like NumPy); negative exponents raise."""
    b = ctx.b
    ctx.fail_if(b.icmp_signed("<", e, ir.Constant(e.type, 0)),
                "pow: integers to negative integer powers are not allowed", KernelError)
    one = ir.Constant(x.type, 1)
    result, base = one, x
    for k in range(x.type.width - 1):
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
    "div": ({"f": lambda ctx, x, y: ctx.b.fdiv(x, y, flags=EXACT_DIV), "i": _div_i}, 4),
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
def _shift(ctx, x, y, right):
    b, t = ctx.b, x.type
    in_range = b.icmp_unsigned("<", y, ir.Constant(t, t.width))
    amount = b.and_(y, ir.Constant(t, t.width - 1))
    if not right:
        return b.select(in_range, b.shl(x, amount), ir.Constant(t, 0))
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


def arith(op, dtype):
    """fn(ctx, x, y) computing binary kernel `op` on `dtype` values (for whole kernels
    that accumulate: reductions, matmul, scatter_add)."""
    return BINARY[op][0][_kind(dtype)]


def _select(ctx, c, x, y):
    return ctx.b.select(c, x, y)


def _convert(ctx, x, *, dtype):
    return convert_value(ctx.b, x, ctx.in_dtypes[0], dtype)


KERNELS = {name: ScalarKernel(_by_kind(ops, name), cost)
           for name, (ops, cost) in {**UNARY, **BINARY}.items()}
KERNELS["select"] = ScalarKernel(_select)
KERNELS["convert"] = ScalarKernel(_convert)

# ---- G2 (issue 11): scan kernels are whole-kernel emitters, listed here so that the
# package registers them with the other built-ins
from lowering.llvm.scans import KERNELS as _SCANS  # noqa: E402

KERNELS.update(_SCANS)
