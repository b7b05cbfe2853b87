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
from tracer.numpy.products import dot, matmul, outer
from tracer.numpy import linalg  # noqa: E402,F401  (issue 12: the numpy.linalg namespace)
from tracer.numpy import fft  # noqa: E402,F401  (numpy.fft's real-valued names)
from tracer.numpy.reductions import amax, amin, argmax, argmin, max, mean, min, prod, sum
from tracer.numpy.shape_ops import (broadcast_to, concatenate, expand_dims, ravel, reshape,
                                    squeeze, stack, swapaxes, transpose)
from tracer.numpy.indexing import getitem, take

# ---- G2 (issue 11): reductions, scans, shapes, assembly, sorting, creation ------------------
from tracer.numpy.reductions import (all, any, count_nonzero, cumprod, cumsum,  # noqa: E402
                                     cumulative_prod, cumulative_sum, nancumprod, nancumsum,
                                     ptp)
from tracer.numpy.covariance import corrcoef, cov  # noqa: E402
from tracer.numpy.statistics import (average, bincount, diff, ediff1d, gradient,  # noqa: E402
                                     nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod,
                                     nanstd, nansum, nanvar, std, trace, var)
from tracer.numpy.quantiles import (median, nanmedian, nanpercentile,  # noqa: E402
                                    nanquantile, percentile, quantile)
from tracer.numpy.shape_ops import (atleast_1d, atleast_2d, atleast_3d,  # noqa: E402
                                    broadcast_arrays, broadcast_shapes, moveaxis, rollaxis)
from tracer.numpy.assembly import (append, array_split, block, column_stack,  # noqa: E402
                                   delete, diag, diagflat, diagonal, dsplit, dstack, flip,
                                   fliplr, flipud, hsplit, hstack, insert, pad, repeat, roll,
                                   rot90, row_stack, split, tile, tril, triu, vsplit, vstack)
from tracer.numpy.grids import (c_, diag_indices, diag_indices_from, indices,  # noqa: E402
                                ix_, meshgrid, r_, tri, tril_indices, tril_indices_from,
                                triu_indices, triu_indices_from)
from tracer.numpy.indexing import take_along_axis  # noqa: E402
from tracer.numpy.sorting import (argpartition, argsort, argwhere, compress,  # noqa: E402
                                  extract, flatnonzero, lexsort, nonzero, partition,
                                  searchsorted, sort, unique, where)
from tracer.numpy.creation import (array_shape as shape, copy, empty,  # noqa: E402
                                   empty_like, eye, geomspace, identity, linspace, logspace,
                                   ndim, size)
newaxis = None
# G1 (issue 11): rounding, bitwise, float functions, predicates, products
from tracer.numpy.rounding import (around, ceil, divmod, fix, floor, floor_divide, fmod, mod,
                                   remainder, rint, round, trunc)
from tracer.numpy.bitwise import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, invert,
                                  left_shift, logical_and, logical_not, logical_or,
                                  logical_xor, right_shift)
from tracer.numpy.mathfuncs import (arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
                                    arctanh, cbrt, copysign, cosh, deg2rad, degrees, exp2,
                                    fabs, float_power, fmax, fmin, heaviside, hypot, log2,
                                    log10, logaddexp, logaddexp2, positive, rad2deg, radians,
                                    reciprocal, sinc, sinh, tan)
from tracer.numpy.products import cross, einsum, inner, kron, tensordot, vdot
from tracer.numpy.predicates import (allclose, array_equal, conj, conjugate, imag, isclose,
                                     isfinite, isinf, isnan, isneginf, isposinf, nan_to_num,
                                     real, select, signbit)

# issue 26: NumPy 2's array-API names (aliases here, composites in array_api.py)
acos, acosh, asin, asinh, atan, atan2, atanh = (arccos, arccosh, arcsin, arcsinh,  # noqa: E402
                                                arctan, arctan2, arctanh)
pow, bitwise_invert = power, invert
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
from tracer.numpy.array_api import (bitwise_count, concat, isdtype,  # noqa: E402
                                    matrix_transpose, matvec, permute_dims, unstack, vecdot,
                                    vecmat)
from tracer.numpy.float_parts import frexp, ldexp, modf, nextafter, spacing  # noqa: E402
from tracer.numpy.number_funcs import angle, i0  # noqa: E402
# vectorize, apply_along_axis, gcd, lcm, put_along_axis and fill_diagonal are built on
# vmap, loops and index updates: tracer/numpy_mapped.py
from tracer.numpy.sets import (digitize, intersect1d, isin, setdiff1d,  # noqa: E402
                               setxor1d, union1d, unique_all, unique_counts, unique_inverse,
                               unique_values)
from tracer.numpy.signal import (bartlett, blackman, convolve, correlate,  # noqa: E402
                                 hamming, hanning, histogram, histogram_bin_edges, interp,
                                 kaiser, trapezoid, unwrap)
from tracer.numpy.polyfuncs import (polyadd, polyder, polyfit, polyint,  # noqa: E402
                                     polymul, polysub, polyval, vander)
from tracer.numpy.index_tricks import (apply_over_axes,  # noqa: E402
                                       array_equiv, ascontiguousarray, asanyarray, choose,
                                       iscomplex, iscomplexobj, isreal,
                                       isrealobj, isscalar, piecewise,
                                       ravel_multi_index, resize, trim_zeros, unravel_index)

from tracer.numpy.dtypes import (can_cast, dtype, finfo, iinfo, issubdtype,  # noqa: E402
                                 promote_types, result_type)

from ml_dtypes import bfloat16 as _bfloat16  # noqa: E402
from tracer.numpy.scalar_types import TYPES as _T  # noqa: E402

bool_, float16, float32, float64 = (_T[_np.bool_], _T[_np.float16], _T[_np.float32],
                                   _T[_np.float64])
int8, int16, int32, int64 = _T[_np.int8], _T[_np.int16], _T[_np.int32], _T[_np.int64]
uint8, uint16, uint32, uint64 = _T[_np.uint8], _T[_np.uint16], _T[_np.uint32], _T[_np.uint64]
bfloat16 = _T[_bfloat16]
int_, uint, intp, uintp = int64, uint64, int64, uint64     # NumPy 2's C-named aliases
half, single, double = float16, float32, float64
# JAX's names of the default scalar types; complex dtypes raise DTypeError when used.
float_, complex_ = float64, _np.complex128
# NumPy's abstract scalar types, for issubdtype(dtype, tnp.floating) and the like.
generic, number, integer, inexact = _np.generic, _np.number, _np.integer, _np.inexact
signedinteger, unsignedinteger = _np.signedinteger, _np.unsignedinteger
floating, complexfloating = _np.floating, _np.complexfloating
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
# index helpers of static values: NumPy's own objects build the same static indices and
# constant grids here (eager results are NumPy arrays), as jax.numpy's do
s_, index_exp, mgrid, ogrid = _np.s_, _np.index_exp, _np.mgrid, _np.ogrid
iterable = _np.iterable
ndarray = _np.ndarray

from tracer.numpy.ufunc_keywords import wrap_ufuncs  # noqa: E402

wrap_ufuncs(globals())      # out/where/casting/order/dtype/subok on NumPy's ufunc names
del wrap_ufuncs

bool = bool_        # jax.numpy.bool (last: this module's code above means Python's)
