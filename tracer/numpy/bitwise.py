"""Bitwise and logical ops: bitwise_and/or/xor, invert/bitwise_not, left/right_shift,
logical_and/or/xor/not, on the and/or/xor/not/shl/shr kernels.

Bitwise ops take integers and bools (bool & bool is bool), shifts integers only; the
logical ops cast their operands to bool first, as NumPy's do. A shift by a negative count
or by the bit width or more gives 0 (-1 for a negative value shifted right), as NumPy.
"""
import numpy as np

from ir.errors import DTypeError
from ir.types import dtype_kind
from tracer.numpy._base import convert, dtype_of, elementwise, named, result_dtype, value

BOOL = np.dtype(bool)


def _bitwise(kernel, name, kinds="iub"):
    @named(name, f"Elementwise {name}, as numpy.{name}.")
    def op(x1, x2):
        x, y = value(x1, name), value(x2, name)
        dt = result_dtype(name, x, y)
        if dtype_kind(dt) not in kinds:
            what = "integer" if kinds == "iu" else "integer or bool"
            raise DTypeError(f"{name}: needs {what} operands, got {dt} (NumPy raises too; "
                             f"for bools use logical_* or astype(int))")
        return elementwise(kernel, name, [x, y], dt)
    return op


bitwise_and = _bitwise("and", "bitwise_and")
bitwise_or = _bitwise("or", "bitwise_or")
bitwise_xor = _bitwise("xor", "bitwise_xor")
left_shift = _bitwise("shl", "left_shift", "iu")
right_shift = _bitwise("shr", "right_shift", "iu")


def invert(x):
    """~x: bitwise not of integers, logical not of bools."""
    x = value(x, "invert")
    if dtype_kind(dtype_of(x)) not in "iub":
        raise DTypeError(f"invert: needs integer or bool operands, got {dtype_of(x)}")
    return elementwise("not", "invert", [x])


bitwise_not = invert


def _as_bool(x, name):
    return convert(value(x, name), BOOL, name)


def _logical(kernel, name):
    @named(name, f"Elementwise {name}, as numpy.{name} (operands are cast to bool).")
    def op(x1, x2):
        return elementwise(kernel, name, [_as_bool(x1, name), _as_bool(x2, name)], BOOL)
    return op


logical_and = _logical("and", "logical_and")
logical_or = _logical("or", "logical_or")
logical_xor = _logical("xor", "logical_xor")


def logical_not(x):
    return elementwise("not", "logical_not", [_as_bool(x, "logical_not")], BOOL)
