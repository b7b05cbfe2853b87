"""Array creation and dtype conversion. Inside a trace, filled arrays are a
`broadcast_to` of a literal (not a baked-in constant array)."""
import numpy as np

from ir import check_dtype
from ir.errors import ArgumentError, TracerError
from tracer.core import Tracer, as_array, run_kernel
from tracer.numpy._base import convert, current_trace, dtype_of, has_tracer, shape, value
from tracer.numpy.shape_ops import _shape_arg


def full(shape_, fill_value, dtype=None):
    shp = _shape_arg("full", shape_)
    if isinstance(fill_value, Tracer):
        from tracer.numpy.shape_ops import broadcast_to
        return broadcast_to(convert(fill_value, dtype or fill_value.dtype, "full"), shp)
    dt = check_dtype(dtype if dtype is not None else np.asarray(fill_value).dtype, "full")
    trace = current_trace()
    if trace is None:
        return np.full(shp, fill_value, dt)
    lit = np.asarray(fill_value, dt)
    return trace.emit("broadcast_to", [lit], {"shape": shp}) if shp else trace.emit(
        "convert", [lit], {"dtype": dt})


def zeros(shape_, dtype=np.float64):
    return full(shape_, 0, dtype)


def ones(shape_, dtype=np.float64):
    return full(shape_, 1, dtype)


def _like(x, fill, dtype):
    x = value(x, "full_like")
    return full(shape(x), fill, dtype if dtype is not None else dtype_of(x))


def zeros_like(x, dtype=None):
    return _like(x, 0, dtype)


def ones_like(x, dtype=None):
    return _like(x, 1, dtype)


def full_like(x, fill_value, dtype=None):
    return _like(x, fill_value, dtype)


def arange(start, stop=None, step=1, dtype=None):
    """Concrete only (sizes must be static): a NumPy array, a constant when traced."""
    if dtype is not None:
        check_dtype(dtype, "arange")
    try:
        out = np.arange(start, stop, step, dtype=dtype)
    except TracerError:
        raise
    except (TypeError, ValueError, ZeroDivisionError) as e:
        raise ArgumentError(f"arange({start!r}, {stop!r}, {step!r}): {e}") from None
    return as_array(out, "arange")


def _traced(x):
    return isinstance(x, Tracer) or isinstance(x, (list, tuple)) and has_tracer(x)


def asarray(x, dtype=None):
    """Like numpy.asarray; a (nested) list of traced values is stacked."""
    dt = None if dtype is None else check_dtype(dtype, "asarray")
    if _traced(x):
        x = value(x, "asarray")
        if dt is None and x.aval.weak_type:   # numpy.asarray(2.0) is a strong float64
            dt = x.dtype
        return x if dt is None else run_kernel("convert", [x], {"dtype": dt})
    return as_array(np.asarray(x, dtype=dt), "asarray")


array = asarray


def astype(x, dtype):
    """x cast to dtype; a concrete x of an unsupported dtype may be cast to a supported one."""
    dt = check_dtype(dtype, "astype")
    if _traced(x):
        return convert(value(x, "astype"), dt, "astype")
    try:
        return np.asarray(x).astype(dt)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"astype: cannot cast {type(x).__name__} to {dt}: {e}") from None
