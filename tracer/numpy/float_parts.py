"""A float's parts and neighbours (issue 26: numpy's ldexp frexp modf nextafter spacing),
read from its bits with the `bitcast` kernel (tracer.lax.bitcast registers it; imported
where used, since tracer.lax builds on tracer.numpy), so every backend agrees bit for bit
with NumPy. float16 and bfloat16 are computed in float32, whose values hold theirs
exactly. ldexp and modf differentiate (a scaling, x - trunc(x)); frexp's mantissa,
nextafter and spacing are bit manipulations and carry no gradient, as in JAX."""
import numpy as np

from ir.errors import DTypeError
from ir.types import dtype_kind
from tracer.core import run_kernel
from tracer.numpy._base import (FLOAT32, broadcast_shapes, convert, dtype_of, float_dtype,
                                result_dtype, shape, value)
from tracer.numpy.bitwise import bitwise_and, bitwise_or, right_shift
from tracer.numpy.elementwise import (abs, add, equal, greater, less, multiply, not_equal,
                                      power, subtract, where)
from tracer.numpy.bitwise import logical_and, logical_or
from tracer.numpy.mathfuncs import copysign
from tracer.numpy.rounding import trunc
from tracer.numpy.shape_ops import broadcast_to

_LAYOUT = {4: (np.uint32, np.int32, 23, 127), 8: (np.uint64, np.int64, 52, 1023)}


def _bits(x, dt):
    """x's bits as dt, of x's item size: the bitcast kernel (tracer.lax.bitcast registers
    it), by name, since tracer.numpy does not import tracer.lax, which builds on it."""
    return run_kernel("bitcast", [x], {"dtype": np.dtype(dt)})


def _float(name, x):
    """x as the float dtype NumPy's loop computes `name` in, and the dtype it works in
    (float32 for the half floats)."""
    x = value(x, name)
    if dtype_kind(dtype_of(x)) not in "biuf":
        raise DTypeError(f"{name}: needs real numbers, got {dtype_of(x)}")
    dt = float_dtype(dtype_of(x))
    work = dt if np.dtype(dt).itemsize >= 4 else FLOAT32
    return convert(x, dt, name), dt, work


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 integers), as numpy.ldexp: the power is applied in two exact halves,
    so the product overflows or underflows only where the result does."""
    x, dt, work = _float("ldexp", x1)
    n = value(x2, "ldexp")
    if dtype_kind(dtype_of(n)) not in "biu":
        raise DTypeError(f"ldexp: the exponent x2 must be integers, got {dtype_of(n)}; "
                         f"pass astype(int) or use x1 * 2.0 ** x2")
    limit = 2 * (np.finfo(work).maxexp - np.finfo(work).minexp + np.finfo(work).nmant)
    n = convert(n, np.int64, "ldexp")
    n = where(greater(n, limit), limit, where(less(n, -limit), -limit, n))
    half = right_shift(n, np.int64(1))          # floor(n / 2)
    rest = subtract(n, half)
    two = np.asarray(2.0, work)
    out = multiply(multiply(convert(x, work), power(two, convert(half, work))),
                   power(two, convert(rest, work)))
    return convert(out, dt, "ldexp")


def frexp(x, /):
    """(mantissa, exponent) with x == mantissa * 2**exponent, |mantissa| in [0.5, 1)
    (x itself and exponent 0 for zeros, inf and NaN); exponents are int32, as NumPy's."""
    x, dt, work = _float("frexp", x)
    w = convert(x, work, "frexp")
    ubits, _, nmant, bias = _LAYOUT[np.dtype(work).itemsize]
    u = np.dtype(ubits)
    tiny = np.finfo(work).tiny
    sub = logical_and(less(abs(w), tiny), not_equal(w, 0))
    scaled = where(sub, multiply(w, np.asarray(2.0 ** nmant, work)), w)
    bits = _bits(scaled, u)
    field = bitwise_and(right_shift(bits, np.asarray(nmant, u)), np.asarray(2 * bias + 1, u))
    exp = subtract(convert(field, np.int32), np.int32(bias - 1))
    exp = subtract(exp, where(sub, np.int32(nmant), np.int32(0)))
    keep = np.asarray(~((2 * bias + 1) << nmant) & ((1 << (8 * u.itemsize)) - 1), u)
    mant = _bits(bitwise_or(bitwise_and(bits, keep), np.asarray((bias - 1) << nmant, u)),
                 np.dtype(work))
    special = logical_or(equal(w, 0), logical_or(not_equal(w, w), equal(abs(w), np.inf)))
    return (convert(where(special, w, mant), dt, "frexp"),
            where(special, np.int32(0), exp))


def modf(x, /):
    """(fractional part, integral part), both with x's sign (modf(-0.5) is (-0.5, -0.0),
    modf(inf) is (0.0, inf)), as numpy.modf."""
    x, dt, _ = _float("modf", x)
    whole = trunc(x)
    frac = where(equal(abs(x), np.inf), np.asarray(0, dt), subtract(x, whole))
    return copysign(frac, x), whole


def nextafter(x1, x2, /):
    """The float after x1 towards x2, as numpy.nextafter: x2 when they are equal, NaN when
    either is, the smallest subnormal (signed towards x2) after a zero."""
    a, b = value(x1, "nextafter"), value(x2, "nextafter")
    dt = float_dtype(result_dtype("nextafter", a, b))
    work = dt if np.dtype(dt).itemsize >= 4 else FLOAT32
    shp = broadcast_shapes("nextafter", shape(a), shape(b))
    a, b = (broadcast_to(convert(v, dt, "nextafter"), shp) for v in (a, b))
    out = _next(convert(a, work), convert(b, work), dt, work)
    return convert(out, dt, "nextafter")


def _next(a, b, dt, work):
    """nextafter in `work`, stepping by one ulp of the result dtype `dt` (float16 and
    bfloat16 step in their own bits, carried in float32)."""
    if np.dtype(dt).itemsize < 4:
        return _next_half(a, b, dt)
    ubits, _, _, _ = _LAYOUT[np.dtype(work).itemsize]
    u = np.dtype(ubits)
    bits = _bits(a, u)
    grow = equal(greater(b, a), greater(a, 0))          # magnitude moves away from 0
    stepped = _bits(where(grow, add(bits, np.asarray(1, u)), subtract(bits, np.asarray(1, u))),
                    np.dtype(work))
    smallest = copysign(np.asarray(np.finfo(work).smallest_subnormal, work), b)
    out = where(equal(a, 0), smallest, stepped)
    out = where(equal(a, b), b, out)
    return where(logical_or(not_equal(a, a), not_equal(b, b)), np.asarray(np.nan, work), out)


def _next_half(a, b, dt):
    """nextafter for float16/bfloat16 values carried in float32: their 16 bits are the top
    (bfloat16) or a re-encoded (float16) part of float32's, so step in their own dtype."""
    u = np.dtype(np.uint16)
    h = convert(a, dt)
    bits = _bits(h, u)
    grow = equal(greater(b, a), greater(a, 0))
    stepped = convert(_bits(where(grow, add(bits, np.asarray(1, u)),
                                  subtract(bits, np.asarray(1, u))), dt), FLOAT32)
    smallest = copysign(np.asarray(float(_smallest_subnormal(dt)), FLOAT32), b)
    out = where(equal(a, 0), smallest, stepped)
    out = where(equal(a, b), a, out)        # NumPy's half loop keeps x1 (-0.0 towards 0.0)
    return where(logical_or(not_equal(a, a), not_equal(b, b)), np.asarray(np.nan, FLOAT32),
                 out)


def _smallest_subnormal(dt):
    import ml_dtypes
    return ml_dtypes.finfo(dt).smallest_subnormal


def spacing(x, /):
    """The distance from x to the next float away from zero (negative for negative x;
    the smallest subnormal at zeros, NaN at inf and NaN), as numpy.spacing. NumPy's
    float16 loop differs, and is followed: always positive, and for a negative x the gap
    towards zero (which differs from the other only at powers of two)."""
    x, dt, work = _float("spacing", x)
    w = convert(x, work)
    inf = np.asarray(np.inf, work)
    if np.dtype(dt) == np.float16:
        m = abs(w)
        nxt = _next(m, where(less(w, 0), np.asarray(0, work), inf), dt, work)
        out = where(equal(w, 0), np.asarray(float(_smallest_subnormal(dt)), work),
                    abs(subtract(nxt, m)))
        out = where(equal(m, np.inf), np.asarray(np.nan, work), out)
        return convert(out, dt, "spacing")
    nxt = _next(w, copysign(inf, w), dt, work)
    small = np.asarray(float(_smallest_subnormal(dt)), work)
    out = where(equal(w, 0), small, subtract(nxt, w))
    out = where(equal(abs(w), np.inf), np.asarray(np.nan, work), out)
    return convert(out, dt, "spacing")
