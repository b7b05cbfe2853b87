"""Dtype functions: NumPy's, with `result_type` and `promote_types` following this package's
promotion (NEP 50, Python scalars and weakly typed traced values taking part as Python
scalars, bfloat16 as in JAX), and bfloat16 counted as a float (ml_dtypes gives it kind 'V',
which NumPy's own `issubdtype` and `finfo` do not know)."""
import ml_dtypes
import numpy as np

from ir.types import BFLOAT16
from tracer.core import Tracer
from tracer.numpy._base import _promote, result_dtype

dtype, can_cast, iinfo = np.dtype, np.can_cast, np.iinfo
finfo = ml_dtypes.finfo     # NumPy's finfo for NumPy's floats, and bfloat16's too


def result_type(*arrays_and_dtypes):
    """The dtype an operation on these operands gives; dtypes and dtype names count as
    strongly typed operands of that dtype."""
    operands = [x if isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float))
                else np.empty(0, np.dtype(x)) for x in arrays_and_dtypes]
    return result_dtype("result_type", *operands)


def promote_types(type1, type2):
    """The smallest dtype both dtypes cast to safely, as numpy.promote_types (bfloat16 as
    in JAX: with any int bfloat16, with float16 float32)."""
    return _promote("promote_types", ((np.dtype(type1), False), (np.dtype(type2), False)))


def issubdtype(arg1, arg2):
    """numpy.issubdtype, where bfloat16 is a np.floating (as in JAX)."""
    if arg2 in (np.floating, np.inexact, np.number) and arg1 in (ml_dtypes.bfloat16, BFLOAT16):
        return True
    return np.issubdtype(arg1, arg2)
