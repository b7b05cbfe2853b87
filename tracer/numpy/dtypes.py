"""Dtype functions: NumPy's, with `result_type` following this package's promotion (NEP 50,
Python scalars and weakly typed traced values taking part as Python scalars)."""
import numpy as np

from tracer.core import Tracer
from tracer.numpy._base import result_dtype

dtype, promote_types, can_cast = np.dtype, np.promote_types, np.can_cast
finfo, iinfo, issubdtype = np.finfo, np.iinfo, np.issubdtype


def result_type(*arrays_and_dtypes):
    """The dtype an operation on these operands gives; dtypes and dtype names count as
    strongly typed operands of that dtype."""
    operands = [x if isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float))
                else np.empty(0, np.dtype(x)) for x in arrays_and_dtypes]
    return result_dtype("result_type", *operands)
