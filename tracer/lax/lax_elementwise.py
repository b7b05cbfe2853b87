"""jax.lax's elementwise and comparison ops, each a composition of tracer.numpy ops.

Unlike tracer.numpy, lax ops never promote: every operand must already have the same
dtype (a Python scalar has its default dtype: float64, int64 or bool), or a TypeError
names the op. Shapes broadcast only as in jax.lax: operands of rank 0, or of one common
rank whose mismatched sizes are 1. The table `_OPS` maps each name to the tracer.numpy
function (or small composition) computing it and the dtype kinds it accepts.
"""
import enum

import ml_dtypes
import numpy as np

from ir.errors import ArgumentError, DTypeError, ShapeError
from ir.types import dtype_kind
from tracer import core
from tracer import numpy as tnp
from tracer.custom import custom_vjp
from tracer.lax.bitcast import bitcast_convert_type
from tracer.numpy._base import complex_only
from tracer.pytree import flatten, unflatten

FLOAT, INT, SIGNED, NUM, INTB, ANY = "f", "iu", "if", "iuf", "biu", "biuf"


class LaxShapeError(ShapeError, TypeError):
    """jax.lax reports incompatible operand shapes as a TypeError."""


def operands(name, args, kinds=ANY):
    """args as arrays of one dtype of an accepted kind and jax.lax-compatible shapes."""
    xs = same_dtype(name, args, kinds)
    shapes = [x.shape for x in xs if x.ndim]
    if shapes and (len({len(s) for s in shapes}) > 1 or any(
            len({d for d in dims if d != 1}) > 1 for dims in zip(*shapes))):
        raise LaxShapeError(f"lax.{name} got incompatible shapes "
                            f"{', '.join(str(x.shape) for x in xs)}: operands must have equal "
                            f"shapes (sizes of 1 and scalars broadcast)")
    return xs


def same_dtype(name, args, kinds=ANY):
    """args as arrays of one dtype of an accepted kind."""
    xs = []
    for i, a in enumerate(args):
        try:
            xs.append(tnp.asarray(a))
        except ArgumentError as e:      # JAX's words, then which conversion failed
            raise ArgumentError(f"Error interpreting argument to {name} as a JAX value. The "
                                f"problematic value is of type {type(a)} and was passed to "
                                f"{name} at position {i}. lax.{name}: {e}") from None
    dts = [x.dtype for x in xs]
    if len(set(dts)) > 1:
        raise DTypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                         f"{', '.join(map(str, dts))} (tracer.numpy's functions promote; or "
                         f"convert first with lax.convert_element_type)")
    if dtype_kind(dts[0]) not in kinds:
        raise DTypeError(f"lax.{name} does not accept dtype {dts[0]}; it takes "
                         f"{_KIND_NAMES[kinds]}")
    return xs


_KIND_NAMES = {FLOAT: "floating dtypes", INT: "integer dtypes", SIGNED: "signed numbers",
               NUM: "numbers (not bool)", INTB: "integers or bool", ANY: "any dtype"}


def _safe_divisor(y):
    """y, with 1 where XLA defines the integer result without dividing (y == 0, and
    y == -1, whose quotient of the most negative integer would overflow)."""
    special = (y == 0) | (y == -1) if dtype_kind(y.dtype) == "i" else y == 0
    return tnp.where(special, tnp.ones_like(y), y)


def _div(x, y):
    """C division: integers truncate toward zero (x - rem is an exact multiple of y);
    x / 0 has every bit set and x / -1 is -x (wrapping), as XLA defines."""
    if dtype_kind(x.dtype) == "f":
        return tnp.true_divide(x, y)
    d = _safe_divisor(y)
    q = tnp.floor_divide(x - tnp.fmod(x, d), d)
    q = tnp.where(y == 0, tnp.bitwise_not(tnp.zeros_like(x)), q)
    return tnp.where(y == -1, -x, q) if dtype_kind(x.dtype) == "i" else q


def _rem(x, y):
    """C remainder (the sign of x); x % 0 is x, as XLA defines."""
    if dtype_kind(x.dtype) == "f":
        return tnp.fmod(x, y)
    return tnp.where(y == 0, x, tnp.fmod(x, _safe_divisor(y)))


class RoundingMethod(enum.IntEnum):
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round(x, rounding_method=0):
    method = int(rounding_method)
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return tnp.rint(x)
    if method != 0:
        raise ValueError(f"lax.round: rounding_method must be RoundingMethod.AWAY_FROM_ZERO "
                         f"(0) or TO_NEAREST_EVEN (1), got {rounding_method!r}")
    t = tnp.trunc(x)                                  # x - t is exact: half-way test is too
    return tnp.where(tnp.abs(x - t) >= 0.5, t + tnp.sign(x), t)


def _bits(x):
    return 8 * np.dtype(x.dtype).itemsize


def _as(x, kind):
    """x's bits read as the same-size signed ("i") or unsigned ("u") integer dtype (back to
    a float: bitcast_convert_type(bits, dtype); "f2" would lose bfloat16)."""
    return bitcast_convert_type(x, np.dtype(f"{kind}{np.dtype(x.dtype).itemsize}"))


def _shift(x, s, shift, kind):
    """x shifted by s as `kind` integers; counts outside [0, bits) give 0 (or the sign
    fill for an arithmetic right shift), as XLA defines."""
    n = _bits(x)
    out_of_range = (s < 0) | (s >= n)
    v, c = _as(x, kind), _as(tnp.where(out_of_range, tnp.zeros_like(s), s), kind)
    r = shift(v, c)
    fill = shift(v, tnp.full_like(c, n - 1)) if kind == "i" and shift is tnp.right_shift \
        else tnp.zeros_like(v)
    return _as(tnp.where(out_of_range, fill, r), dtype_kind(x.dtype))


def _popcount(x):
    """Bits set per element, by the SWAR bit-counting sequence on the unsigned view."""
    u = _as(x, "u")
    U, n = u.dtype.type, _bits(x)
    ones = (1 << n) - 1
    m1, m2, m4 = (U(ones // (2 ** k + 1)) for k in (1, 2, 4))   # 0x55.., 0x33.., 0x0f..
    u = u - tnp.bitwise_and(tnp.right_shift(u, U(1)), m1)
    u = tnp.bitwise_and(u, m2) + tnp.bitwise_and(tnp.right_shift(u, U(2)), m2)
    u = tnp.bitwise_and(u + tnp.right_shift(u, U(4)), m4)
    u = tnp.right_shift(u * U(ones // 255), U(n - 8))           # sum of the bytes
    return _as(u, dtype_kind(x.dtype))


def _clz(x):
    u = _as(x, "u")
    k = 1
    while k < _bits(x):                                # smear the highest set bit rightwards
        u = tnp.bitwise_or(u, tnp.right_shift(u, np.array(k, u.dtype)))
        k *= 2
    return _popcount(_as(tnp.bitwise_not(u), dtype_kind(x.dtype)))


def _mulhi(x, y):
    """The high half of the double-width product: through a wider type up to 32 bits, from
    32-bit limbs for 64 (the signed high half corrected from the unsigned one)."""
    n, kind = _bits(x), dtype_kind(x.dtype)
    if n < 64:
        wide = np.dtype(f"{kind}8")
        prod = tnp.astype(x, wide) * tnp.astype(y, wide)
        return tnp.astype(tnp.right_shift(prod, np.array(n, wide)), x.dtype)
    a, b = _as(x, "u"), _as(y, "u")
    U, mask, half = np.uint64, np.uint64(2 ** 32 - 1), np.uint64(32)
    a_lo, a_hi = tnp.bitwise_and(a, mask), tnp.right_shift(a, half)
    b_lo, b_hi = tnp.bitwise_and(b, mask), tnp.right_shift(b, half)
    u = a_hi * b_lo + tnp.right_shift(a_lo * b_lo, half)
    w = a_lo * b_hi + tnp.bitwise_and(u, mask)
    hi = a_hi * b_hi + tnp.right_shift(u, half) + tnp.right_shift(w, half)
    if kind == "i":
        hi = hi - tnp.where(x < 0, b, U(0)) - tnp.where(y < 0, a, U(0))
    return _as(hi, kind)


def _integer_pow(x, y):
    if not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow: the exponent must be a Python int, got {y!r}")
    n, acc, base = -int(y) if y < 0 else int(y), None, x
    while n:                                           # square-and-multiply, as XLA
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    acc = tnp.ones_like(x) if acc is None else acc
    if y < 0:
        return tnp.reciprocal(acc)
    return tnp.copy(acc) if acc is x else acc        # x ** 1 is a new array, never x


def _nextafter(x, y):
    """The float after x towards y, by stepping x's bit pattern by one."""
    bits = _as(x, "i")
    one = np.array(1, bits.dtype)
    step = tnp.where((y > x) == (x > 0), bits + one, bits - one)
    tiny = tnp.where(y > 0, tnp.ones_like(bits), _as(-tnp.zeros_like(x), "i") + one)
    out = bitcast_convert_type(tnp.where(x == 0, tiny, step), x.dtype)
    return tnp.where(tnp.isnan(x) | tnp.isnan(y), x + y, tnp.where(x == y, y, out))


def _reduce_precision(x, exponent_bits, mantissa_bits):
    """x rounded (to nearest even) to a float with the given exponent and mantissa widths,
    overflowing to infinity and flushing below the smallest normal to zero, as XLA."""
    info = ml_dtypes.finfo(x.dtype)                 # numpy's finfo lacks bfloat16
    nmant, nexp = info.nmant, _bits(x) - 1 - info.nmant
    u = _as(x, "u")
    U = u.dtype.type
    if mantissa_bits < nmant:
        drop = nmant - mantissa_bits
        last = tnp.bitwise_and(tnp.right_shift(u, U(drop)), U(1))
        u = u + (U((1 << (drop - 1)) - 1) + last)
        u = tnp.bitwise_and(u, U(~((1 << drop) - 1) & ((1 << _bits(x)) - 1)))
    if exponent_bits < nexp:
        bias, new_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        e = tnp.bitwise_and(tnp.right_shift(u, U(nmant)), U((1 << nexp) - 1))
        sign = tnp.bitwise_and(u, U(1 << (_bits(x) - 1)))
        inf = tnp.bitwise_or(sign, U(((1 << nexp) - 1) << nmant))
        big, small = e > U(bias + new_bias), e <= U(bias - new_bias)
        u = tnp.where(big, inf, tnp.where(small, sign, u))
    out = bitcast_convert_type(u, x.dtype)
    return tnp.where(tnp.isnan(x), x, out)


def _sign(x):
    """-1, 0 or 1; a float zero keeps its sign (-0.0 -> -0.0), as XLA."""
    return tnp.where(x == 0, x, tnp.sign(x)) if dtype_kind(x.dtype) == "f" else tnp.sign(x)


def _logistic(x):
    return tnp.reciprocal(1 + tnp.exp(-x))


# name: (function, arity, accepted kinds)
_OPS = {
    "add": (tnp.add, 2, NUM), "sub": (tnp.subtract, 2, NUM),
    "div": (_div, 2, NUM), "rem": (_rem, 2, NUM),
    "max": (tnp.maximum, 2, ANY), "min": (tnp.minimum, 2, ANY),
    "atan2": (tnp.arctan2, 2, FLOAT), "nextafter": (_nextafter, 2, FLOAT),
    "neg": (tnp.negative, 1, NUM), "sign": (_sign, 1, NUM), "abs": (tnp.abs, 1, SIGNED),
    "floor": (tnp.floor, 1, FLOAT), "ceil": (tnp.ceil, 1, FLOAT),
    "is_finite": (tnp.isfinite, 1, FLOAT), "exp": (tnp.exp, 1, FLOAT),
    "exp2": (tnp.exp2, 1, FLOAT), "log": (tnp.log, 1, FLOAT), "log1p": (tnp.log1p, 1, FLOAT),
    "expm1": (tnp.expm1, 1, FLOAT), "tanh": (tnp.tanh, 1, FLOAT),
    "logistic": (_logistic, 1, FLOAT), "sin": (tnp.sin, 1, FLOAT), "cos": (tnp.cos, 1, FLOAT),
    "tan": (tnp.tan, 1, FLOAT), "asin": (tnp.arcsin, 1, FLOAT),
    "acos": (tnp.arccos, 1, FLOAT), "atan": (tnp.arctan, 1, FLOAT),
    "sinh": (tnp.sinh, 1, FLOAT), "cosh": (tnp.cosh, 1, FLOAT),
    "asinh": (tnp.arcsinh, 1, FLOAT), "acosh": (tnp.arccosh, 1, FLOAT),
    "atanh": (tnp.arctanh, 1, FLOAT), "sqrt": (tnp.sqrt, 1, FLOAT),
    "rsqrt": (lambda x: tnp.reciprocal(tnp.sqrt(x)), 1, FLOAT), "cbrt": (tnp.cbrt, 1, FLOAT),
    "square": (tnp.square, 1, NUM), "reciprocal": (tnp.reciprocal, 1, FLOAT),
    "erf": (tnp.erf, 1, FLOAT),
    "bitwise_and": (tnp.bitwise_and, 2, INTB), "bitwise_or": (tnp.bitwise_or, 2, INTB),
    "bitwise_xor": (tnp.bitwise_xor, 2, INTB), "bitwise_not": (tnp.bitwise_not, 1, INTB),
    "shift_left": (lambda x, s: _shift(x, s, tnp.left_shift, "u"), 2, INT),
    "shift_right_logical": (lambda x, s: _shift(x, s, tnp.right_shift, "u"), 2, INT),
    "shift_right_arithmetic": (lambda x, s: _shift(x, s, tnp.right_shift, "i"), 2, INT),
    "population_count": (_popcount, 1, INT), "clz": (_clz, 1, INT), "mulhi": (_mulhi, 2, INT),
    "eq": (tnp.equal, 2, ANY), "ne": (tnp.not_equal, 2, ANY), "lt": (tnp.less, 2, ANY),
    "le": (tnp.less_equal, 2, ANY), "gt": (tnp.greater, 2, ANY),
    "ge": (tnp.greater_equal, 2, ANY),
}


class AccuracyMode(enum.Enum):
    """jax.lax.AccuracyMode: accepted by the transcendental ops; tracer's CPU kernels have
    one implementation of each function, so every mode gives the same result."""
    HIGHEST = 1
    DEFAULT = 2


_ACCURACY_OPS = {"exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos",
                 "tan", "sqrt", "rsqrt", "cbrt"}


def _make(name, fn, arity, kinds):
    def op(*args, accuracy=None):
        if len(args) != arity:
            raise TypeError(f"lax.{name} takes {arity} operand(s), got {len(args)}")
        if accuracy is not None and (name not in _ACCURACY_OPS
                                     or not isinstance(accuracy, AccuracyMode)):
            raise TypeError(f"lax.{name}: accuracy must be None or a lax.AccuracyMode (taken "
                            f"by {', '.join(sorted(_ACCURACY_OPS))}), got {accuracy!r}")
        return fn(*operands(name, args, kinds))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"jax.lax.{name}: operands of one dtype ({_KIND_NAMES[kinds]}), no promotion."
    return op


globals().update({name: _make(name, *spec) for name, spec in _OPS.items()})


def mul(x, y, *, out_dtype=None):
    """jax.lax.mul: x * y, computed in out_dtype when given (the operands converted first,
    so int8 operands multiply without wrapping into an int32 out_dtype)."""
    x, y = operands("mul", [x, y], NUM)
    if out_dtype is not None:
        x, y = (tnp.astype(v, np.dtype(out_dtype)) for v in (x, y))
    return tnp.multiply(x, y)


def round(x, rounding_method=0):                 # noqa: A001  (jax.lax name)
    """jax.lax.round: half-way cases away from zero (0, default) or to even (1)."""
    (x,) = operands("round", [x], FLOAT)
    return _round(x, rounding_method)


def pow(x, y):                                    # noqa: A001  (jax.lax name)
    """jax.lax.pow: x ** y for floating x and y of x's dtype or any integer dtype."""
    (x,) = operands("pow", [x], FLOAT)
    y = tnp.asarray(y)
    if dtype_kind(y.dtype) in INT:
        return tnp.power(x, tnp.astype(y, x.dtype))
    return tnp.power(*operands("pow", [x, y], FLOAT))


def integer_pow(x, y):
    """jax.lax.integer_pow: x ** y for a Python int y, by repeated multiplication."""
    (x,) = operands("integer_pow", [x], NUM)
    return _integer_pow(x, y)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """jax.lax.reduce_precision: operand rounded to a narrower float format; its derivative
    is taken as 1 (straight through)."""
    (x,) = operands("reduce_precision", [operand], FLOAT)
    e, m = int(exponent_bits), int(mantissa_bits)
    if core.current_trace() is None:
        return _reduce_precision(x, e, m)
    # differentiated as the identity (straight through the rounding, whose bit operations
    # would give 0); JAX also rounds the tangent, a rule that is not linear, so it has no
    # transpose to give forward mode here
    rounded = custom_vjp(lambda v: _reduce_precision(v, e, m))
    rounded.defvjp(lambda v: (_reduce_precision(v, e, m), ()), lambda _, g: (g,))
    return rounded(x)


def optimization_barrier(operand):
    """jax.lax.optimization_barrier: operand (a pytree) as new arrays; no pass here moves
    work across it to begin with."""
    leaves, tree = flatten(operand)
    return unflatten(tree, [tnp.copy(tnp.asarray(v)) for v in leaves])


def convert_element_type(operand, new_dtype):
    """jax.lax.convert_element_type: floats to integers truncate toward zero; a Python int
    too big for int64 converts to a float type (as JAX's)."""
    new_dtype = np.dtype(new_dtype)
    if type(operand) is int and new_dtype.kind == "f":
        operand = float(operand)
    return tnp.astype(tnp.asarray(operand), new_dtype)


def select_n(which, *cases):
    """jax.lax.select_n: cases[which] elementwise; which is bool (two cases) or int32."""
    if not cases:
        raise ValueError("lax.select_n: needs at least one case")
    cases = operands("select_n", cases)
    which = tnp.asarray(which)
    kind = dtype_kind(which.dtype)
    if kind not in "biu" or (kind == "b" and len(cases) > 2):
        raise DTypeError(f"lax.select_n: which must be bool (at most two cases) or an "
                         f"integer, got {which.dtype} with {len(cases)} cases")
    if which.ndim and any(c.shape != which.shape for c in cases):
        raise LaxShapeError(f"lax.select_n: which {which.shape} must be a scalar or have "
                            f"the cases' shape {cases[0].shape}")
    out = cases[-1] if len(cases) > 1 else tnp.copy(cases[0])     # never the case itself
    for i in range(len(cases) - 2, -1, -1):
        out = tnp.where(which == i if kind != "b" else ~which, cases[i], out)
    return out


def select(pred, on_true, on_false):
    """jax.lax.select: on_true where pred, else on_false (pred is bool)."""
    if dtype_kind(tnp.asarray(pred).dtype) != "b":
        raise DTypeError(f"lax.select: pred must be bool, got {tnp.asarray(pred).dtype}")
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):                            # noqa: A002  (jax.lax signature)
    """jax.lax.clamp: x limited to [min, max]; min and max are scalars or x's shape."""
    lo, x, hi = operands("clamp", [min, x, max])
    return tnp.minimum(tnp.maximum(x, lo), hi)


_COMPLEX = {"real": "takes a complex array", "imag": "takes a complex array",
            "conj": "returns a complex array", "complex": "returns a complex array"}
globals().update({name: complex_only(f"lax.{name}", doc) for name, doc in _COMPLEX.items()})

__all__ = sorted(_OPS) + sorted(_COMPLEX) + [
    "mul", "AccuracyMode", "RoundingMethod", "pow", "round", "integer_pow", "reduce_precision",
    "optimization_barrier", "convert_element_type", "select_n", "select", "clamp"]
