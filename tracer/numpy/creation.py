"""Array creation and dtype conversion. Inside a trace, filled arrays are a
`broadcast_to` of a literal (not a baked-in constant array).

NumPy's `order=`, `device=`, `subok=` and `like=` are accepted and checked as NumPy checks
them (`_placed`); they change no value: results are new C-ordered arrays on this host's one
CPU device, and like= (NEP 35's dispatch) gives this package's array either way."""
import numpy as np

from ir import SUPPORTED_DTYPES, ShapedArray, check_dtype, scalar_array
from ir.errors import ArgumentError, ArgumentValueError, TracerError
from registry import infer_avals
from tracer.core import Tracer, as_array, run_kernel
from tracer.numpy._base import (convert, current_trace, dtype_of, has_tracer, jax_array,
                                result_dtype, value)
from tracer.numpy import _base
from tracer.numpy.shape_ops import _shape_arg


ORDERS = ("C", "F")
LIKE_ORDERS = ("K", "A", "C", "F")


def _placed(op, order="C", device=None, orders=ORDERS):
    """NumPy's order= (one of `orders`) and device= (None, "cpu", or a CPU device as
    jax.devices()[0]), else a ValueError as NumPy's."""
    if order not in orders:
        raise ArgumentValueError(f"{op}: order must be one of {orders}, got {order!r}")
    if device is not None and device != "cpu" and getattr(device, "platform", None) != "cpu":
        raise ArgumentValueError(f"{op}: device must be None or 'cpu' (arrays here live on "
                                 f"the one CPU device), got {device!r}")


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    _placed("full", order, device)
    shp = _shape_arg("full", shape)
    if isinstance(fill_value, Tracer):
        from tracer.numpy.shape_ops import broadcast_to
        return broadcast_to(convert(fill_value, dtype or fill_value.dtype, "full"), shp)
    dt = check_dtype(dtype if dtype is not None else np.asarray(fill_value).dtype, "full")
    trace = current_trace()
    if trace is None:       # the shape rule's size check: ShapeError, not NumPy's ValueError
        infer_avals("broadcast_to", [ShapedArray((), dt)], {"shape": shp})
        return np.full(shp, fill_value, dt)
    lit = np.asarray(fill_value, dt)
    return trace.emit("broadcast_to", [lit], {"shape": shp}) if shp else trace.emit(
        "convert", [lit], {"dtype": dt})


def zeros(shape, dtype=None, order="C", *, device=None, like=None):
    """float64 unless dtype says otherwise (dtype=None too, as NumPy)."""
    _placed("zeros", order, device)
    return full(shape, 0, np.float64 if dtype is None else dtype)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    _placed("ones", order, device)
    return full(shape, 1, np.float64 if dtype is None else dtype)


def _like(op, a, fill, dtype, order, shp, device):
    """`shp` (NumPy's and JAX's shape=) replaces a's shape; a gives the dtype only."""
    _placed(op, order, device, LIKE_ORDERS)
    a = value(a, op)
    return full(_base.shape(a) if shp is None else shp, fill,
                dtype if dtype is not None else dtype_of(a))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("zeros_like", a, 0, dtype, order, shape, device)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("ones_like", a, 1, dtype, order, shape, device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("full_like", a, fill_value, dtype, order, shape, device)


def arange(start, stop=None, step=1, dtype=None, *, device=None, like=None):
    """Concrete only (sizes must be static): a NumPy array, a constant when traced."""
    _placed("arange", device=device)
    if dtype is not None:
        check_dtype(dtype, "arange")
    try:
        out = np.arange(start, stop, step, dtype=dtype)
    except TracerError:
        raise
    except (TypeError, ValueError, ZeroDivisionError) as e:
        raise ArgumentError(f"arange({start!r}, {stop!r}, {step!r}): {e}") from None
    return staged(out, "arange")


def staged(arr, op):
    """`arr`, made by `op` from static arguments: inside a trace a traced value holding it
    (as JAX's jnp.arange and jnp.eye under jit), so that indexing it with a traced index
    (`eye(n)[labels]`) works, which a NumPy array cannot do; else the array."""
    arr = as_array(arr, op)
    trace = current_trace()
    return arr if trace is None or arr.ndim == 0 else Tracer(trace, trace.lift(arr))


def _traced(x):
    return isinstance(x, Tracer) or isinstance(x, (list, tuple)) and has_tracer(x)


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """Like numpy.asarray; a (nested) list of traced values is stacked. `order` and `copy`
    change nothing: values never alias a traced value and have no memory layout."""
    _placed("asarray", order, device, LIKE_ORDERS + (None,))
    x = jax_array(a)
    dt = None if dtype is None else check_dtype(dtype, "asarray")
    if _traced(x):
        x = value(x, "asarray")
        if dt is None and x.aval.weak_type:   # numpy.asarray(2.0) is a strong float64
            dt = x.dtype
        return x if dt is None else run_kernel("convert", [x], {"dtype": dt})
    if type(x) is int and dt is None:       # beyond int64: JAX's OverflowError, not objects
        x = scalar_array(x, "asarray")
    return as_array(np.asarray(x, dtype=dt), "asarray")


def array(a, dtype=None, order="K", *, copy=True, subok=False, ndmin=0, ndmax=0,
          like=None):
    """numpy.array: asarray, a new array eagerly unless copy=False (as NumPy's: a result
    never aliases its input), with at least `ndmin` dimensions (ones in front) and, when
    ndmax is given, at most ndmax."""
    x = asarray(a, dtype, order)
    if copy and isinstance(a, np.ndarray) and np.may_share_memory(x, a):
        x = x.copy()
    nd = len(_base.shape(x))
    if ndmax and nd > ndmax:
        raise ArgumentValueError(f"array: the value has {nd} dimensions, more than "
                                 f"ndmax={ndmax}")
    if ndmin > nd:
        from tracer.numpy.shape_ops import reshape
        x = reshape(x, (1,) * (ndmin - nd) + _base.shape(x))
    return x


def astype(x, dtype, *, copy=True):
    """x cast to dtype by the convert kernel (whose float -> int saturates, as under jit);
    a concrete x of an unsupported dtype may be cast to a supported one. `copy` changes
    nothing: the result is a new value either way."""
    dt = check_dtype(dtype, "astype")
    if _traced(x):
        return convert(value(x, "astype"), dt, "astype")
    if np.asarray(x).dtype in SUPPORTED_DTYPES:
        return run_kernel("convert", [np.asarray(x)], {"dtype": dt})
    try:
        return np.asarray(x).astype(dt)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"astype: cannot cast {type(x).__name__} to {dt}: {e}") from None


# ---- more creation (issue 11) ------------------------------------------------------------
def empty(shape, dtype=float, order="C", *, device=None, like=None):
    """Zeros: an uninitialized array would make results depend on memory contents."""
    _placed("empty", order, device)
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("empty_like", prototype, 0, dtype, order, shape, device)


def copy(a, order="K", subok=False):
    """Traced values are immutable: the copy is the value itself."""
    if _traced(a):
        return value(a, "copy")
    return as_array(np.array(a, copy=True), "copy")


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    _placed("eye", order, device)
    return staged(np.eye(N, M, k, dtype=check_dtype(dtype, "eye")), "eye")


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def _space_dtype(op, dtype, *ends):
    """The dtype of an eager linspace/logspace: this package's promotion, where NumPy's
    would make bfloat16 ends float64."""
    return dtype if dtype is not None else result_dtype(op, *[value(e, op) for e in ends], 0.0)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """numpy.linspace; start and stop may be traced (num is static)."""
    _placed("linspace", device=device)
    if not (_traced(start) or _traced(stop)):
        dtype = _space_dtype("linspace", dtype, start, stop)
        out = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
        return (as_array(out[0], "linspace"), out[1]) if retstep else as_array(out, "linspace")
    from tracer.numpy.elementwise import add, divide, multiply, subtract
    from tracer.numpy.shape_ops import broadcast_to, concatenate, moveaxis, reshape
    from tracer.numpy._base import broadcast_shapes
    if num < 0:
        raise ArgumentError(f"linspace: number of samples, {num}, must be non-negative")
    start, stop = value(start, "linspace"), value(stop, "linspace")
    dt = result_dtype("linspace", start, stop, 0.0)
    shp = broadcast_shapes("linspace", np.shape(start) if not _traced(start) else start.shape,
                           np.shape(stop) if not _traced(stop) else stop.shape)
    start, stop = (broadcast_to(convert(v, dt, "linspace"), shp) for v in (start, stop))
    div = num - 1 if endpoint else num
    step = divide(subtract(stop, start), div) if div > 0 else subtract(stop, start)
    steps = np.arange(num, dtype=dt).reshape((-1,) + (1,) * len(shp))
    y = add(multiply(steps, step), start)
    if endpoint and num > 1:
        y = concatenate([y[:-1], reshape(stop, (1,) + shp)])
    y = moveaxis(y, 0, axis) if shp else y
    y = y if dtype is None else convert(y, check_dtype(dtype, "linspace"), "linspace")
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not (_traced(start) or _traced(stop) or _traced(base)):
        dtype = _space_dtype("logspace", dtype, start, stop, base)
        return as_array(np.logspace(start, stop, num, endpoint, base, dtype, axis), "logspace")
    from tracer.numpy.elementwise import power
    y = power(base, linspace(start, stop, num, endpoint, axis=axis))
    return y if dtype is None else convert(y, check_dtype(dtype, "logspace"), "logspace")


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Traced start/stop (of one sign) go through exp(linspace(log...)); their ends are
    exact, as NumPy makes them."""
    if not (_traced(start) or _traced(stop)):
        return as_array(np.geomspace(start, stop, num, endpoint, dtype, axis), "geomspace")
    from tracer.numpy.elementwise import abs, exp, log, multiply, sign
    from tracer.numpy.shape_ops import broadcast_to, concatenate, moveaxis, reshape
    dt = result_dtype("geomspace", value(start, "geomspace"), value(stop, "geomspace"),
                      np.zeros(()))        # as NumPy: at least float64
    start, stop = convert(value(start, "geomspace"), dt), convert(value(stop, "geomspace"), dt)
    y = multiply(sign(start), exp(linspace(log(abs(start)), log(abs(stop)), num, endpoint)))
    if num > 0:
        shp = y.shape[1:]
        def end(v):
            return reshape(broadcast_to(convert(v, y.dtype), shp), (1,) + shp)
        parts = [end(start), y[1:]]
        if endpoint and num > 1:
            parts = [parts[0], y[1:-1], end(stop)]
        y = concatenate(parts) if num > 1 else parts[0]
        y = moveaxis(y, 0, axis) if shp else y
    return y if dtype is None else convert(y, check_dtype(dtype, "geomspace"), "geomspace")


def ndim(a):
    return len(a.shape) if _traced(a) else np.ndim(a)


def array_shape(a):
    """numpy.shape (exported as tracer.numpy.shape)."""
    return a.shape if _traced(a) else np.shape(a)


def size(a, axis=None):
    shp = array_shape(a)
    return int(np.prod(shp, dtype=np.int64)) if axis is None else shp[axis]
