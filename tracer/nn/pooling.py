"""flax.linen's pools: tracer.lax.reduce_window over the dims between batch and features."""
import numpy as np

from ir.errors import ShapeError
from tracer import lax
from tracer import numpy as tnp


def _pool(x, init, computation, window_shape, strides, padding):
    """flax.linen.pooling.pool: a window over the dims between batch and features
    (x is (batch..., *spatial, features); a missing batch dim is allowed, as in flax)."""
    x = tnp.asarray(x)
    window_shape = tuple(window_shape)
    strides = tuple(strides) if strides is not None else (1,) * len(window_shape)
    nb = x.ndim - len(window_shape) - 1
    if nb < 0 or len(strides) != len(window_shape):
        raise ShapeError(f"pool: window_shape {window_shape} and strides {strides} need an "
                         f"input (batch..., *spatial, features) with {len(window_shape)} "
                         f"spatial dims, got shape {x.shape}")
    if not isinstance(padding, str):
        padding = ((0, 0),) * nb + tuple(tuple(p) for p in padding) + ((0, 0),)
    return lax.reduce_window(x, init, computation, (1,) * nb + window_shape + (1,),
                             (1,) * nb + strides + (1,), padding)


def max_pool(x, window_shape, strides=None, padding="VALID"):
    return _pool(x, -np.inf, lax.max, window_shape, strides, padding)


def avg_pool(x, window_shape, strides=None, padding="VALID"):
    """flax.linen.avg_pool: the window sum over its full size (padding counts as zeros)."""
    return _pool(x, 0.0, lax.add, window_shape, strides, padding) / float(np.prod(window_shape))
