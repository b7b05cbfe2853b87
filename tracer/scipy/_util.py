"""Argument handling shared by tracer.scipy: JAX's promote_args_inexact (one inexact dtype
for all arguments, Python scalars weak as under NEP 50, integers and bools to float64),
the equal shapes tracer.lax's binary special functions want, and bfloat16 computed in
float32 (NumPy's own operators, which eager arrays and the default loc/scale constants
meet, turn bfloat16 and a Python float into float32; the result is rounded back once)."""
import functools

import ml_dtypes
import numpy as np

from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.tree_util import tree_map

_SCALARS = (bool, int, float)


def promote_inexact(*args):
    """args as arrays of their common inexact dtype (float32 stays float32)."""
    xs = [a if type(a) in _SCALARS else tnp.asarray(a) for a in args]
    dt = np.dtype(tnp.result_type(*xs, 1.0))
    if dtype_kind(dt) != "f":                        # bfloat16 included
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


_BF16 = np.dtype(ml_dtypes.bfloat16)


def _is_bf16(a):
    return getattr(a, "dtype", None) == _BF16


def bfloat16_via_float32(fn):
    """fn, computing in float32 when an argument is bfloat16 and the arguments promote to
    bfloat16; float32 results are rounded back to bfloat16."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        values = list(args) + list(kwargs.values())
        if not any(_is_bf16(a) for a in values):
            return fn(*args, **kwargs)
        arrays = [a for a in values if _is_bf16(a) or (
            hasattr(a, "dtype") and np.issubdtype(np.dtype(a.dtype), np.number))]
        if np.dtype(tnp.result_type(*arrays, 1.0)) != _BF16:         # e.g. with float32
            return fn(*args, **kwargs)

        def up(a):
            return tnp.astype(a, np.float32) if _is_bf16(a) else a
        out = fn(*map(up, args), **{k: up(v) for k, v in kwargs.items()})
        return tree_map(lambda o: tnp.astype(o, _BF16) if getattr(o, "dtype", None) ==
                        np.float32 else o, out)
    return wrapped


def mirrored_tails(cdf, logcdf):
    """(sf, logsf) of a distribution symmetric about loc: the cdf and logcdf at the
    point mirrored about loc (exact in the upper tail, where 1 - cdf would cancel)."""
    def sf(x, loc=0, scale=1):
        x, loc, scale = promote_inexact(x, loc, scale)
        return cdf(-x, -loc, scale)

    def logsf(x, loc=0, scale=1):
        x, loc, scale = promote_inexact(x, loc, scale)
        return logcdf(-x, -loc, scale)
    return sf, logsf
