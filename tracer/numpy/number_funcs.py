"""Integer and real-number functions of numpy 2 that jax.numpy also has (issue 26): angle
(the argument of a real number: 0 or pi), i0 (NumPy's own Chebyshev series of Clenshaw, so
the values agree with numpy.i0 to the last few ulp), and the argument checks and Euclid
step of gcd and lcm (tracer/numpy_mapped.py: a Python loop eagerly, a `while_loop` under
tracing, as in JAX)."""
import numpy as np

from ir.errors import DTypeError
from ir.types import dtype_kind
from tracer.numpy._base import broadcast_shapes, convert, dtype_of, result_dtype, shape, value
from tracer.numpy.elementwise import (abs, add, divide, exp, less_equal, multiply, not_equal,
                                      sqrt, subtract, where)
from tracer.numpy.mathfuncs import arctan2, rad2deg
from tracer.numpy.rounding import remainder
from tracer.numpy.shape_ops import broadcast_to


def _integers(name, x1, x2):
    a, b = value(x1, name), value(x2, name)
    dt = result_dtype(name, a, b)
    if dtype_kind(dt) not in "iu":
        raise DTypeError(f"{name}: needs integer operands, got {dtype_of(a)} and "
                         f"{dtype_of(b)} (NumPy has no {name} of floats or bools); "
                         f"astype an integer dtype first")
    shp = broadcast_shapes(name, shape(a), shape(b))
    return (broadcast_to(convert(a, dt, name), shp), broadcast_to(convert(b, dt, name), shp))


def _euclid_step(a, b):
    """(b, a mod b) where b != 0; a finished pair (b == 0) stays as it is."""
    live = not_equal(b, 0)
    return (where(live, b, a),
            where(live, remainder(a, where(live, b, np.ones((), dtype_of(b)))), b))


def angle(z, deg=False):
    """The counterclockwise angle of z from the positive real axis, as numpy.angle: for
    the real numbers here 0, or pi for negative numbers and -0.0 (NaN for NaN); the
    dtype is arctan2(0, z)'s (float64 for bools and wide ints)."""
    x = value(z, "angle")
    if dtype_kind(dtype_of(x)) not in "biuf":
        raise DTypeError(f"angle: needs real numbers, got {dtype_of(x)}")
    a = arctan2(0, x)
    return rad2deg(a) if deg else a


_I0A = [
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
    -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
    9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
    -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
    0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764,
    0.17162090152220877, -0.3046826723431984, 0.6767952744094761]
_I0B = [
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
    3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
    1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
    -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
    -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
    3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
    2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088]


def _chbevl(x, coefficients):
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = add(subtract(multiply(x, b1), b2), c)
    return multiply(0.5, subtract(b0, b2))


def i0(x):
    """The modified Bessel function of the first kind, order 0, as numpy.i0: float64
    for integer inputs; both branches get arguments they are smooth at, so the
    gradient is i1 (the series' derivative) everywhere."""
    x = value(x, "i0")
    kind = dtype_kind(dtype_of(x))
    if kind not in "biuf":
        raise DTypeError(f"i0: not supported for {dtype_of(x)} values; needs real numbers")
    if kind != "f":
        x = convert(x, np.float64, "i0")
    x = abs(x)
    small = less_equal(x, 8.0)
    xs = where(small, x, 8.0)           # each branch at a point where it is finite
    xl = where(small, 9.0, x)
    near = multiply(exp(xs), _chbevl(subtract(divide(xs, 2.0), 2.0), _I0A))
    far = divide(multiply(exp(xl), _chbevl(subtract(divide(32.0, xl), 2.0), _I0B)),
                  sqrt(xl))
    return where(small, near, far)
