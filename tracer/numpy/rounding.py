"""Rounding and integer division: floor ceil trunc fix rint round/around, floor_divide,
mod/remainder, fmod, divmod.

Floats run NumPy's own algorithm (npy_divmod: fmod, then the sign fix-up and snapping of
the quotient), so results agree to the last bit, signed zeros and NaN included; the
rounding kernels are flat, so `//` has zero gradient and `%` the gradient of x - k*y.
Integers use the `div` kernel (already floor division with NumPy's x // 0 == 0).
"""
import numpy as np

from ir.errors import DTypeError
from ir.types import BFLOAT16, dtype_kind
from tracer.core import Tracer
from tracer.numpy._base import (FLOAT16, FLOAT32, FLOAT64, INT8, broadcast,
                                broadcast_shapes, convert, dtype_of, elementwise, held,
                                innermost_trace, named, no_out, result_dtype, run_kernel,
                                shape, value)

from tracer.numpy.bitwise import logical_and, logical_xor
from tracer.numpy.elementwise import (_float_dtype, divide, equal, less, multiply, not_equal,
                                      where)


def _keep_int(x):
    """NumPy's floor/ceil/trunc of an integer or bool array is the same values."""
    return x if isinstance(x, Tracer) else np.array(x, dtype=dtype_of(x))


def _rounding(kernel, name):
    @named(name, f"Elementwise {name}, as numpy.{name} (integers pass unchanged).")
    def op(x, out=None):
        no_out(name, out)
        x = value(x, name)
        return elementwise(kernel, name, [x]) if dtype_kind(dtype_of(x)) == "f" else _keep_int(x)
    return op


floor = _rounding("floor", "floor")
ceil = _rounding("ceil", "ceil")
trunc = _rounding("trunc", "trunc")
fix = _rounding("trunc", "fix")


def rint(x):
    """Round half to even; integers give float64 (as NumPy)."""
    x = value(x, "rint")
    return elementwise("rint", "rint", [x], _float_dtype("rint", x))


def round(a, decimals=0, out=None):
    """NumPy's round: rint(a * 10**d) / 10**d (so round(2.675, 2) == 2.67, as NumPy)."""
    if out is not None:
        raise DTypeError("round: out= is not supported; use the returned value")
    a = value(a, "round")
    dt = dtype_of(a)
    if dtype_kind(dt) == "b":       # NumPy: float16 (and an error for decimals != 0)
        return round(convert(a, FLOAT16, "round"), decimals)
    if dt == BFLOAT16:      # as JAX: in float32, rounded once (a * 10**d would round first)
        return convert(round(convert(a, FLOAT32), decimals), dt, "round")
    if dtype_kind(dt) != "f":
        return _keep_int(a) if decimals >= 0 else convert(round(convert(a, FLOAT64), decimals),
                                                          dt, "round")
    # tnp's divide/multiply: NumPy's own / and * of an eager bfloat16 array and a Python
    # float give float32 (ml_dtypes); tnp keeps bfloat16, as JAX
    if decimals >= 0:
        f = 10.0 ** decimals
        return divide(elementwise("rint", "round", [multiply(a, f)]), f)
    f = 10.0 ** -decimals
    return multiply(elementwise("rint", "round", [divide(a, f)]), f)


around = round


def _int_operands(name, x, y):
    """The operands' dtype; two bools compute in int8, as NumPy's integer loops."""
    dt = result_dtype(name, x, y)
    return INT8 if dtype_kind(dt) == "b" else dt


def _signed_zero(sign_of, dt):
    """copysign(0, sign_of)."""
    return where(run_kernel("signbit", [sign_of]), np.array(-0.0, dt), np.array(0.0, dt))


def _float_divmod(x, y, dt):
    """npy_divmod (numpy/_core/src/npymath/npy_math_internal.h.src), branch for branch."""
    shp, trace = broadcast_shapes("divmod", shape(x), shape(y)), innermost_trace([x, y])
    x, y = (broadcast(convert(v, dt, "divmod"), shp, trace) for v in (x, y))
    mod = run_kernel("fmod", [x, y])
    div = (x - mod) / y
    fix_up = logical_and(not_equal(mod, 0), logical_xor(less(y, 0), less(mod, 0)))
    # a zero remainder takes y's sign; `- (held - mod)` adds +0 and keeps mod's gradient
    zero = _signed_zero(y, dt) - (held(mod) - mod)
    mod = where(fix_up, mod + y, where(mod == 0, zero, mod))
    div = where(fix_up, div - 1, div)
    fl = run_kernel("floor", [div])
    fl = where(div - fl > 0.5, fl + 1, fl)
    quotient = where(div == 0, _signed_zero(x / y, dt), fl)
    by_zero = y == 0
    return (where(by_zero, held(x / y), quotient),
            where(by_zero, run_kernel("fmod", [x, y]), mod))


def floor_divide(x1, x2):
    """x1 // x2 rounded toward -inf, as NumPy (integers: x // 0 == 0)."""
    x, y = value(x1, "floor_divide"), value(x2, "floor_divide")
    dt = _int_operands("floor_divide", x, y)
    if dtype_kind(dt) != "f":
        return elementwise("div", "floor_divide", [x, y], dt)
    return _float_divmod(x, y, dt)[0]


def mod(x1, x2):
    """Remainder with the sign of the divisor, as Python's % (integers: x % 0 == 0)."""
    x, y = value(x1, "mod"), value(x2, "mod")
    dt = _int_operands("mod", x, y)
    if dtype_kind(dt) == "f":
        return _float_divmod(x, y, dt)[1]
    x, y = convert(x, dt, "mod"), convert(y, dt, "mod")
    r = x - elementwise("div", "mod", [x, y], dt) * y
    return where(equal(y, 0), np.array(0, dt), r)


remainder = mod


def fmod(x1, x2):
    """C's fmod: the remainder with the sign of the dividend (integers: fmod(x, 0) == 0)."""
    x, y = value(x1, "fmod"), value(x2, "fmod")
    dt = _int_operands("fmod", x, y)
    if dtype_kind(dt) == "f":
        return elementwise("fmod", "fmod", [x, y], dt)
    m = mod(x, y)
    y = convert(y, dt, "fmod")
    flip = logical_and(not_equal(m, 0), logical_xor(less(x, 0), less(y, 0)))
    return m - where(flip, y, np.array(0, dt))


def divmod(x1, x2):
    """(floor_divide(x1, x2), mod(x1, x2)), computed once for floats."""
    x, y = value(x1, "divmod"), value(x2, "divmod")
    dt = _int_operands("divmod", x, y)
    if dtype_kind(dt) == "f":
        return _float_divmod(x, y, dt)
    return floor_divide(x, y), mod(x, y)
