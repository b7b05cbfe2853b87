"""Elementwise ops: one table row per NumPy function, plus where and clip."""
import numpy as np

from ir.errors import ArgumentValueError, DTypeError
from ir.types import dtype_kind
from tracer.core import Tracer
from tracer.numpy._base import (FLOAT64, INT8, RANK_PROMOTION, broadcast, broadcast_shapes,
                                check_rank_promotion, convert, dtype_of,
                                elementwise, float_dtype, fresh, innermost_trace, is_weak, named,
                                no_out, result_dtype, run_kernel, shape, value)



def _float_dtype(op, x):
    """NumPy's float result type for a transcendental of x."""
    return float_dtype(dtype_of(x))


def _unary(kernel, name, kinds):
    """A unary op. kinds: 'f' float-only (ints promote), 'n' numeric (no bool), 'a' any."""
    @named(name, f"Elementwise {name}, as numpy.{name}.")
    def op(x):
        x = value(x, name)
        if kinds == "f":
            return elementwise(kernel, name, [x], _float_dtype(name, x))
        if kinds == "n" and dtype_kind(dtype_of(x)) == "b":
            raise DTypeError(f"{name}: not supported for bool; use logical ops or cast "
                             f"with astype(int) first")
        return elementwise(kernel, name, [x])
    return op


negative = _unary("neg", "negative", "n")
exp = _unary("exp", "exp", "f")
log = _unary("log", "log", "f")
log1p = _unary("log1p", "log1p", "f")
expm1 = _unary("expm1", "expm1", "f")
sqrt = _unary("sqrt", "sqrt", "f")
sin = _unary("sin", "sin", "f")
cos = _unary("cos", "cos", "f")
tanh = _unary("tanh", "tanh", "f")
erf = _unary("erf", "erf", "f")
abs = _unary("abs", "abs", "a")
absolute = abs
sign = _unary("sign", "sign", "n")


def _binary(kernel, name, no_bool=False):
    @named(name, f"Elementwise {name} with NumPy broadcasting and promotion.")
    def op(x, y):
        if no_bool and dtype_kind(result_dtype(name, value(x, name), value(y, name))) == "b":
            raise DTypeError(f"{name}: not supported for bool operands; cast with "
                             f"astype(int) first")
        return elementwise(kernel, name, [x, y])
    return op


add = _binary("add", "add")
subtract = _binary("sub", "subtract", no_bool=True)
multiply = _binary("mul", "multiply")
_pow = _binary("pow", "power")


def power(x, y):
    """x ** y. A small non-negative integer Python exponent becomes multiplications
    (like JAX's integer_pow): cheaper, exact, and a simpler gradient."""
    x, y = value(x, "power"), value(y, "power")
    if dtype_kind(result_dtype("power", x, y)) == "b":      # as NumPy: in int8
        x, y = convert(x, INT8, "power"), convert(y, INT8, "power")
    if is_weak(y) and not isinstance(y, Tracer) and y in (1, 2, 3, 4):
        base = convert(x, result_dtype("power", x, y), "power")
        out = base
        for _ in range(int(y) - 1):
            out = multiply(out, base)
        return fresh(out, x)
    return _pow(x, y)


maximum = _binary("max", "maximum")
minimum = _binary("min", "minimum")


def _compare(kernel, name):
    def op(x, y):
        x, y = value(x, name), value(y, name)
        dt = result_dtype(name, x, y)
        shp = broadcast_shapes(name, shape(x), shape(y))
        if RANK_PROMOTION.active:
            check_rank_promotion(name, (shape(x), shape(y)))
        trace = innermost_trace([x, y])
        return run_kernel(kernel, [broadcast(convert(v, dt, name), shp, trace) for v in (x, y)])
    return named(name, f"Elementwise {name}, as numpy.{name}: a bool array.")(op)


greater = _compare("gt", "greater")
greater_equal = _compare("ge", "greater_equal")
less = _compare("lt", "less")
less_equal = _compare("le", "less_equal")
equal = _compare("eq", "equal")
not_equal = _compare("ne", "not_equal")


def divide(x, y):
    """True division: integer operands give float64, as in NumPy."""
    x, y = value(x, "divide"), value(y, "divide")
    dt = result_dtype("divide", x, y)
    return elementwise("div", "divide", [x, y], dt if dtype_kind(dt) == "f" else FLOAT64)


true_divide = divide


def where(condition, x, y):
    """Select x where condition is true, else y (condition is cast to bool)."""
    c, x, y = (value(v, "where") for v in (condition, x, y))
    dt = result_dtype("where", x, y)
    shp = broadcast_shapes("where", shape(c), shape(x), shape(y))
    if RANK_PROMOTION.active:
        check_rank_promotion("where", (shape(c), shape(x), shape(y)))
    trace = innermost_trace([c, x, y])
    c = broadcast(convert(c, np.bool_, "where"), shp, trace)
    return run_kernel("select", [c] + [broadcast(convert(v, dt, "where"), shp, trace)
                                       for v in (x, y)])


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """minimum(maximum(a, min), max); either bound (or both, as in NumPy 2) may be None.
    `min`/`max` are NumPy 2.1's and JAX's names, `a_min`/`a_max` the older ones."""
    no_out("clip", out)
    bounds = []
    for old, new, name in ((a_min, min, "min"), (a_max, max, "max")):
        if old is not None and new is not None:
            raise ArgumentValueError(f"clip: pass {name}= or a_{name}=, not both")
        bounds.append(new if old is None else old)
    x = value(a, "clip")
    if bounds[0] is not None:
        x = maximum(x, bounds[0])
    return x if bounds[1] is None else minimum(x, bounds[1])


def square(x):
    return multiply(x, x)
