"""Value tests and comparisons of whole arrays: isnan isinf isfinite isposinf isneginf
signbit nan_to_num real imag conj conjugate select isclose allclose array_equal.

Integers and bools are never NaN or infinite (the tests give constant arrays); complex
numbers are not supported, so real/conj are the value itself and imag is zeros.
allclose and array_equal give a Python bool eagerly (as NumPy) and a traced 0-d bool
under tracing (a traced value cannot become a Python bool).
"""
import numpy as np
from ml_dtypes import finfo      # NumPy's finfo, and bfloat16's

from ir.errors import DTypeError, ShapeError
from ir.types import dtype_kind
from tracer.core import Tracer
from tracer.numpy._base import (INT8, convert, dtype_of, named, no_out, result_dtype,
                                run_kernel, shape, value)
from tracer.numpy.bitwise import logical_and, logical_not, logical_or
from tracer.numpy.creation import full
from tracer.numpy.elementwise import abs, equal, less, less_equal, not_equal, where
from tracer.numpy.reductions import sum

BOOL = np.dtype(bool)


def _constant(x, v):
    return full(shape(x), v, BOOL)


def _float_test(name, test, otherwise):
    @named(name, f"Elementwise {name}, as numpy.{name}.")
    def op(x, out=None):
        no_out(name, out)
        x = value(x, name)
        return test(x) if dtype_kind(dtype_of(x)) == "f" else _constant(x, otherwise)
    return op


isnan = _float_test("isnan", lambda x: not_equal(x, x), False)
isinf = _float_test("isinf", lambda x: equal(abs(x), np.inf), False)
isfinite = _float_test("isfinite", lambda x: less(abs(x), np.inf), True)
isposinf = _float_test("isposinf", lambda x: equal(x, np.inf), False)
isneginf = _float_test("isneginf", lambda x: equal(x, -np.inf), False)


def signbit(x):
    x = value(x, "signbit")
    kind = dtype_kind(dtype_of(x))
    if kind == "f":
        return run_kernel("signbit", [convert(x, dtype_of(x))])
    return less(x, 0) if kind == "i" else _constant(x, False)    # unsigned, bool: never


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, inf -> posinf (default: the largest finite value), -inf -> neginf."""
    x = value(x, "nan_to_num")
    dt = dtype_of(x)
    if dtype_kind(dt) != "f":
        return x if isinstance(x, Tracer) else np.array(x, dtype=dt)
    info = finfo(dt)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = convert(x, dt)
    fill = [np.array(v, dt) for v in (nan, big, small)]
    return where(x != x, fill[0], where(x == np.inf, fill[1], where(x == -np.inf, fill[2], x)))


def real(val):
    val = value(val, "real")
    return val if isinstance(val, Tracer) else np.array(val, dtype=dtype_of(val))


def imag(val):
    val = value(val, "imag")
    return full(shape(val), 0, dtype_of(val))


def conj(x):
    x = value(x, "conj")
    return real(convert(x, INT8, "conj") if dtype_kind(dtype_of(x)) == "b" else x)  # as NumPy


conjugate = conj


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default."""
    if not condlist:
        raise ShapeError("select: the condition list is empty; pass at least one condition")
    if len(condlist) != len(choicelist):
        raise ShapeError(f"select: condlist has {len(condlist)} entries but choicelist has "
                         f"{len(choicelist)}; they must be the same length")
    conds = [value(c, "select") for c in condlist]
    bad = [str(dtype_of(c)) for c in conds if dtype_of(c) != BOOL]
    if bad:
        raise DTypeError(f"select: conditions must be bool arrays, got {bad}")
    out = default
    for c, choice in reversed(list(zip(conds, choicelist))):
        out = where(c, choice, out)
    return out


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol |b| (b finite), or a == b; NaNs equal if equal_nan."""
    x, y = value(a, "isclose"), value(b, "isclose")
    y = convert(y, result_dtype("isclose", y, 1.0), "isclose")
    close = logical_and(less_equal(abs(x - y), atol + rtol * abs(y)),
                        less(abs(y), np.inf))
    out = logical_or(close, equal(x, y))
    if equal_nan:
        out = logical_or(out, logical_and(not_equal(x, x), not_equal(y, y)))
    return out


def _all(test):
    """all(test): a Python bool eagerly, a traced 0-d bool under tracing."""
    out = equal(sum(logical_not(test)), 0)
    return out if isinstance(out, Tracer) else bool(out)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Same shape and equal elements (NaNs equal if equal_nan)."""
    x, y = value(a1, "array_equal"), value(a2, "array_equal")
    if shape(x) != shape(y):
        return False
    eq = equal(x, y)
    if equal_nan:
        eq = logical_or(eq, logical_and(not_equal(x, x), not_equal(y, y)))
    return _all(eq)
