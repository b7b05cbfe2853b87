"""Argument handling shared by tracer.scipy: JAX's promote_args_inexact (one inexact dtype
for all arguments, Python scalars weak as under NEP 50, integers and bools to float64)
and the equal shapes tracer.lax's binary special functions want."""
import numpy as np

from tracer import numpy as tnp

_SCALARS = (bool, int, float)


def promote_inexact(*args):
    """args as arrays of their common inexact dtype (float32 stays float32)."""
    xs = [a if type(a) in _SCALARS else tnp.asarray(a) for a in args]
    dt = np.dtype(tnp.result_type(*xs, 1.0))
    if not np.issubdtype(dt, np.floating):
        raise TypeError(f"tracer.scipy: dtype {dt} is not supported (real floats only)")
    return [tnp.astype(tnp.asarray(x), dt) for x in xs]


def promote_broadcast(*args):
    """promote_inexact, then broadcast to one shape (tracer.lax's binary ops want it)."""
    return tnp.broadcast_arrays(*promote_inexact(*args))


def axes_of(ndim, axis):
    """axis (None, an int or a tuple) as a sorted tuple of non-negative dims."""
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(sorted(int(a) % max(ndim, 1) for a in axis))


def concrete_int(value, what):
    """A Python int from a concrete value (JAX's concrete_or_error)."""
    try:
        return int(np.asarray(value))
    except Exception as e:
        raise TypeError(f"{what} must be a concrete integer, not a traced value") from e
