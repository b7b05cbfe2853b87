"""Reductions with NumPy's axis conventions (None, negative, tuples, keepdims) and result
dtypes (integer sums and products accumulate in int64, unsigned ones in uint64; mean of
integers is float64; statistics of float16/bfloat16 are computed in float32, as JAX's)."""
import numpy as np

from ir import check_dtype
from ir.errors import ArgumentValueError, ShapeError
from ir.types import BFLOAT16, dtype_kind
from tracer.core import run_kernel
from tracer.numpy._base import (FLOAT16, FLOAT32, FLOAT64, convert, dtype_of, no_out,
                                normalize_axes, normalize_axis, shape, value)
from tracer.numpy.elementwise import (add, divide, maximum, minimum, multiply, not_equal,
                                      where as select)

INT64, UINT64 = np.dtype(np.int64), np.dtype(np.uint64)


def accumulator(dt):
    """NumPy's default sum/prod/cumsum dtype: int64 for bools and ints, uint64 for
    unsigned ints, the dtype itself otherwise."""
    kind = dtype_kind(dt)
    return UINT64 if kind == "u" else INT64 if kind in "bi" else dt


def computation(dt):
    """The dtype a statistic of dtype dt is computed in: float32 for float16/bfloat16,
    whose sums and element counts overflow at 65,504 (bfloat16: lose integers past 256)
    before the division brings them back in range; dt otherwise."""
    return FLOAT32 if dt in (FLOAT16, BFLOAT16) else dt


def _keepdims(out, in_shape, axes):
    from tracer.numpy.shape_ops import reshape
    return reshape(out, tuple(1 if i in axes else d for i, d in enumerate(in_shape)))


def check_where(name, where):
    """`where` as a value, or None; a mask that is not bool is an error (NumPy refuses to
    cast it, JAX raises ValueError), since 0/1 integers would silently mean something else."""
    if where is None:
        return None
    where = value(where, name)
    if dtype_of(where) != np.bool_:
        raise ArgumentValueError(f"{name}: where must be None or a boolean array, got dtype "
                                 f"{dtype_of(where)}; pass a bool mask (e.g. x != 0)")
    return where


def _reduce(kernel, name, x, axis, keepdims, dtype=None, accumulate=None, where=None,
            initial=None):
    """`accumulate` maps the input dtype to the default result dtype (None: unchanged);
    `where` (a bool mask broadcast against x) replaces the elements left out by the
    reduction's identity, or by `initial` for max/min, which have none; `initial` (a
    scalar) joins the result as one more element (so an empty max/min gives it), as in
    NumPy."""
    x = value(x, name)
    where = check_where(name, where)
    if initial is not None and shape(value(initial, name)) != ():
        raise ArgumentValueError(f"{name}: initial value must be a scalar. Got array of "
                                 f"shape {shape(value(initial, name))}")
    axes = normalize_axes(name, axis, len(shape(x)))
    dt = np.dtype(dtype) if dtype is not None else dtype_of(x)
    if dtype is None and accumulate is not None:
        dt = accumulate(dt)
    x = convert(x, dt, name)
    if where is not None:
        fill = _IDENTITY.get(kernel, initial)
        if fill is None:
            raise ArgumentValueError(f"{name}: where= needs initial= (a {name} has no identity "
                                     f"to put in place of the elements it leaves out)")
        x = select(where, x, convert(fill, dt, name))
    kept = tuple(d for i, d in enumerate(shape(x)) if i not in axes)
    if initial is not None and 0 in [shape(x)[i] for i in axes]:
        from tracer.numpy.shape_ops import broadcast_to
        out = broadcast_to(convert(initial, dt, name), kept)
    else:
        out = run_kernel(kernel, [x], {"axes": axes})
        if initial is not None:
            out = convert(_COMBINE[kernel](out, initial), dt, name)
    return _keepdims(out, shape(x), axes) if keepdims else out


_IDENTITY = {"reduce_sum": 0, "reduce_prod": 1}
_COMBINE = {"reduce_sum": add, "reduce_prod": multiply, "reduce_max": maximum,
            "reduce_min": minimum}


def numeric(dt):
    """The default result dtype of JAX's sum/prod with promote_integers=False: bools count
    as int64, every other dtype stays."""
    return INT64 if dt == np.bool_ else dt


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """promote_integers (JAX's): False keeps a narrow integer input's dtype."""
    no_out("sum", out)
    return _reduce("reduce_sum", "sum", a, axis, keepdims, dtype,
                   accumulator if promote_integers else numeric, where, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """promote_integers (JAX's): False keeps a narrow integer input's dtype."""
    no_out("prod", out)
    return _reduce("reduce_prod", "prod", a, axis, keepdims, dtype,
                   accumulator if promote_integers else numeric, where, initial)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    no_out("max", out)
    return _reduce("reduce_max", "max", a, axis, keepdims, where=where, initial=initial)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    no_out("min", out)
    return _reduce("reduce_min", "min", a, axis, keepdims, where=where, initial=initial)


amax, amin = max, min


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """As numpy.mean: sum in `dtype` (float64 for integer a, float32 for half floats),
    divide by the count (of the `where` mask's true elements), and cast the quotient back
    to `dtype` (NumPy truncates integers the same way)."""
    from tracer.numpy.shape_ops import broadcast_to
    no_out("mean", out)
    x = value(a, "mean")
    where = check_where("mean", where)
    axes = normalize_axes("mean", axis, len(shape(x)))
    dt = check_dtype(dtype, "mean") if dtype is not None else (
        dtype_of(x) if dtype_kind(dtype_of(x)) == "f" else FLOAT64)
    total = sum(x, axis=axes, dtype=computation(dt), keepdims=keepdims, where=where)
    if where is None:
        count = float(np.prod([shape(x)[a] for a in axes], dtype=np.int64))
    else:
        count = sum(broadcast_to(where, shape(x)), axis=axes, dtype=computation(dt),
                    keepdims=keepdims)
    return convert(divide(total, count), dt, "mean")


def _arg(kernel, name, x, axis, keepdims):
    from tracer.numpy.shape_ops import reshape
    x = value(x, name)
    if axis is None:
        flat = reshape(x, (-1,))
        if shape(flat)[0] == 0:
            raise ShapeError(f"{name}: attempt to get {name} of an empty sequence")
        out = run_kernel(kernel, [flat], {"axis": 0})
        return reshape(out, (1,) * len(shape(x))) if keepdims else out
    ax = normalize_axis(name, axis, len(shape(x)))
    out = run_kernel(kernel, [x], {"axis": ax})
    return _keepdims(out, shape(x), (ax,)) if keepdims else out


def argmax(a, axis=None, out=None, *, keepdims=False):
    no_out("argmax", out)
    return _arg("argmax", "argmax", a, axis, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    no_out("argmin", out)
    return _arg("argmin", "argmin", a, axis, keepdims)


def _scan(kernel, name, x, axis, dtype, nan_fill=None):
    """cumsum/cumprod: axis=None scans the flattened array; integer and bool inputs
    accumulate in int64 unless `dtype` says otherwise (as numpy.cumsum); NaN become
    `nan_fill` first when it is given. A bool `dtype` scans `x != 0` in int64 and casts
    back, so [-1, 1] is [True, True] (as NumPy's logical-or scan and JAX)."""
    from tracer.numpy.shape_ops import ravel
    x = value(x, name)
    if axis is None:
        x, axis = ravel(x), 0
    elif len(shape(x)) == 0:
        raise ShapeError(f"{name}: axis {axis} is out of bounds for a 0-d array")
    ax = normalize_axis(name, axis, len(shape(x)))
    if nan_fill is not None and dtype_kind(dtype_of(x)) == "f":
        x = select(not_equal(x, x), convert(nan_fill, dtype_of(x)), x)
    dt = check_dtype(dtype, name) if dtype is not None else accumulator(dtype_of(x))
    if dt == np.bool_:
        x = convert(not_equal(x, False), INT64, name)
        return convert(run_kernel(kernel, [x], {"axis": ax}), dt, name)
    return run_kernel(kernel, [convert(x, dt, name)], {"axis": ax})


def cumsum(a, axis=None, dtype=None, out=None):
    no_out("cumsum", out)
    return _scan("cumsum", "cumsum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    no_out("cumprod", out)
    return _scan("cumprod", "cumprod", a, axis, dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum with NaN counted as 0."""
    no_out("nancumsum", out)
    return _scan("cumsum", "nancumsum", a, axis, dtype, nan_fill=0)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod with NaN counted as 1."""
    no_out("nancumprod", out)
    return _scan("cumprod", "nancumprod", a, axis, dtype, nan_fill=1)


def _cumulative(kernel, name, x, axis, dtype, include_initial, identity):
    """The array API's cumulative_sum/prod: axis may be omitted only for 1-D input, and
    include_initial puts the identity first (the result is one longer along axis)."""
    from tracer.numpy.shape_ops import broadcast_to, concatenate
    x = value(x, name)
    nd = len(shape(x))
    if nd == 0:
        raise ShapeError(f"{name}: The input must be non-scalar to take a "
                         f"{name.replace('_', ' ')}, however a scalar value or scalar "
                         f"array was given")
    if axis is None and nd > 1:
        raise ShapeError(f"{name}: The input array has rank {nd}, however axis was not set "
                         f"to an explicit value. The axis argument is only optional for "
                         f"one-dimensional arrays")
    ax = normalize_axis(name, 0 if axis is None else axis, nd)
    out = _scan(kernel, name, x, ax, dtype)
    if not include_initial:
        return out
    first = shape(x)[:ax] + (1,) + shape(x)[ax + 1:]
    return concatenate([broadcast_to(convert(identity, dtype_of(out)), first), out], axis=ax)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    no_out("cumulative_sum", out)
    return _cumulative("cumsum", "cumulative_sum", x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    no_out("cumulative_prod", out)
    return _cumulative("cumprod", "cumulative_prod", x, axis, dtype, include_initial, 1)


def _logical(kernel, name, a, axis, keepdims, where):
    """all/any: a bool min/max, whose empty reductions are True/False (their identities,
    which also replace the elements `where` leaves out)."""
    from tracer.numpy.creation import full
    x = convert(value(a, name), np.bool_, name)
    where = check_where(name, where)
    if where is not None:
        x = select(where, x, kernel == "reduce_min")
    axes = normalize_axes(name, axis, len(shape(x)))
    if 0 in [shape(x)[i] for i in axes]:
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape(x)))
        return full(out_shape if keepdims else tuple(
            d for i, d in enumerate(shape(x)) if i not in axes), kernel == "reduce_min", bool)
    return _reduce(kernel, name, x, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    no_out("all", out)
    return _logical("reduce_min", "all", a, axis, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    no_out("any", out)
    return _logical("reduce_max", "any", a, axis, keepdims, where)


def count_nonzero(a, axis=None, *, keepdims=False):
    from tracer.numpy.elementwise import not_equal
    return sum(not_equal(value(a, "count_nonzero"), 0), axis=axis, dtype=INT64,
               keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    no_out("ptp", out)
    from tracer.numpy.elementwise import subtract
    a = value(a, "ptp")
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))
