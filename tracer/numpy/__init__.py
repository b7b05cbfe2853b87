"""NumPy-like ops (conventionally imported as `tnp`), usable eagerly and under tracing.

Eagerly they return NumPy arrays; on traced values they emit graph nodes. Semantics follow
NumPy 2: broadcasting, NEP 50 promotion, reduction axes, result dtypes.
"""
import numpy as _np

from tracer.numpy.creation import (arange, array, asarray, astype, full, full_like, ones,
                                   ones_like, zeros, zeros_like)
from tracer.numpy.elementwise import (abs, absolute, add, clip, cos, divide, equal, erf, exp,
                                      expm1, greater, greater_equal, less, less_equal, log,
                                      log1p, maximum, minimum, multiply, negative, not_equal,
                                      power, sign, sin, sqrt, square, subtract, tanh,
                                      true_divide, where)
from tracer.numpy.linalg import dot, matmul, outer
from tracer.numpy.reductions import amax, amin, argmax, argmin, max, mean, min, prod, sum
from tracer.numpy.shape_ops import (broadcast_to, concatenate, expand_dims, ravel, reshape,
                                    squeeze, stack, swapaxes, transpose)
from tracer.numpy.indexing import getitem, take

float32, float64, int32, int64, bool_ = (_np.float32, _np.float64, _np.int32, _np.int64,
                                         _np.bool_)
pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan
ndarray = _np.ndarray
