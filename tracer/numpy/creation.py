"""Array creation and dtype conversion. Inside a trace, filled arrays are a
`broadcast_to` of a literal (not a baked-in constant array)."""
import numpy as np

from ir import check_dtype
from tracer.core import Tracer, as_array, run_kernel
from tracer.numpy._base import convert, current_trace, dtype_of, shape, value
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
    out = np.arange(start, stop, step) if stop is not None else np.arange(start)
    if out.dtype.kind == "f" and dtype is None:
        dtype = np.float64
    return out.astype(check_dtype(dtype or np.int64, "arange"))


def asarray(x, dtype=None):
    if isinstance(x, Tracer):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) for e in x):
        from tracer.numpy.shape_ops import stack
        out = stack(x)
        return out if dtype is None else astype(out, dtype)
    arr = np.asarray(x, dtype=dtype)
    return as_array(arr, "asarray")


array = asarray


def astype(x, dtype):
    x = value(x, "astype")
    dt = check_dtype(dtype, "astype")
    if isinstance(x, (bool, int, float)):
        return np.asarray(x, dt)
    return convert(x, dt, "astype")
