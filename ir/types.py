"""Static types of graph values: shape + dtype (+ weak type for Python scalars).

Only the dtypes below are supported end to end (every backend, every kernel); anything else
is rejected at the boundary with a DTypeError that says what to cast to. bfloat16 comes
from ml_dtypes, whose dtype has kind 'V': ask `dtype_kind`, never `dtype.kind`.
"""
import math

import ml_dtypes
import numpy as np

from ir.errors import DTypeError, IntegerOverflowError

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_SHORT = {np.dtype(d): short for d, short in (
    ("bool", "bool"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"), ("int64", "i64"),
    ("uint8", "u8"), ("uint16", "u16"), ("uint32", "u32"), ("uint64", "u64"),
    ("float16", "f16"), (BFLOAT16, "bf16"), ("float32", "f32"), ("float64", "f64"))}
SUPPORTED_DTYPES = tuple(_SHORT)


def check_dtype(dtype, where="this op"):
    """Return `dtype` as a supported np.dtype or raise DTypeError naming `where`."""
    if isinstance(dtype, np.dtype) and dtype in _SHORT:
        return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{where}: {dtype!r} is not a dtype") from None
    if dt not in _SHORT:
        raise DTypeError(
            f"{where}: dtype {dt} is not supported; supported dtypes are "
            f"{', '.join(str(d) for d in SUPPORTED_DTYPES)}. Cast first, e.g. "
            f"x.astype(np.float32).")
    return dt


def short_dtype(dtype):
    return _SHORT.get(dtype, str(dtype))


def dtype_kind(dtype):
    """NumPy's kind letter ('b', 'i', 'u', 'f', ...), with 'f' for bfloat16 (kind 'V')."""
    return "f" if dtype == BFLOAT16 else dtype.kind


def saturated(value, dtype):
    """The float `value` in `dtype`; for an integer dtype clamped to its range, so an
    infinite reduction init (max's -inf) becomes the dtype's extreme."""
    if dtype_kind(dtype) in "iu":
        info = np.iinfo(dtype)
        value = min(max(value, info.min), info.max)
    return np.asarray(value).astype(dtype)


class ShapedArray:
    """The abstract value of an array: what the tracer knows without data.

    `weak_type` marks values that came from Python scalars; they take the dtype of the
    other operand in binary ops (NEP 50), as in NumPy 2 and JAX.
    """
    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(map(int, shape))
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = None       # computed on first use: most avals are never hashed

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def strip_weak(self):
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.shape, self.dtype, self.weak_type))
        return self._hash

    def __repr__(self):
        return f"{short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"


def weak_dtype(x):
    """The dtype a Python scalar stands for: bool, int64 or float64 (whatever its size)."""
    return _BOOL if isinstance(x, bool) else _INT64 if isinstance(x, int) else _FLOAT64


_BOOL, _INT64, _FLOAT64 = np.dtype(bool), np.dtype(np.int64), np.dtype(np.float64)


def scalar_array(x, where="this op"):
    """A Python scalar as a 0-d array of its weak dtype; DTypeError if it does not fit."""
    try:
        return np.asarray(x, weak_dtype(x))
    except OverflowError:
        raise IntegerOverflowError(f"{where}: Python int {x} does not fit in int64; pass a "
                                   f"float or a smaller int") from None


def aval_of(value):
    """ShapedArray of a concrete value (ndarray, NumPy scalar or Python scalar)."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        return ShapedArray((), weak_dtype(value), weak_type=True)
    arr = np.asarray(value)
    return ShapedArray(arr.shape, arr.dtype)
