"""Neural-network functions as in jax.nn / flax.linen, composed from tracer.numpy ops (no
kernels of their own, so their gradients and LLVM lowering come for free); the pools are
tracer.lax.reduce_window over the spatial dims."""
import numpy as np

from ir.errors import ShapeError
from tracer import lax
from tracer import numpy as tnp


def relu(x):
    """max(x, 0) with relu'(0) = 0 as in jax.nn.relu (maximum would split the tie 1/2);
    NaN passes through."""
    return tnp.where(tnp.less_equal(x, 0), 0, x)


def sigmoid(x):
    return 1 / (1 + tnp.exp(-tnp.asarray(x)))


def _shifted(x, axis):
    """x - max(x) along axis (a non-finite max replaced by 0), the max held constant as
    in jax: the shift cancels exactly, and differentiating it anyway would add a
    rounding residue times sum(dy) to the largest entry's gradient."""
    m = tnp.max(x, axis=axis, keepdims=True)
    m = lax.stop_gradient(tnp.where(tnp.less(tnp.abs(m), np.inf), m, 0))
    return x - m, m


def softmax(x, axis=-1):
    e = tnp.exp(_shifted(tnp.asarray(x), axis)[0])
    return e / tnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    s = _shifted(tnp.asarray(x), axis)[0]
    return s - tnp.log(tnp.sum(tnp.exp(s), axis=axis, keepdims=True))


def logsumexp(x, axis=None, keepdims=False):
    x = tnp.asarray(x)
    s, m = _shifted(x, axis)
    out = tnp.log(tnp.sum(tnp.exp(s), axis=axis, keepdims=True)) + m
    return out if keepdims else tnp.squeeze(out, tuple(range(x.ndim)) if axis is None else axis)


def gelu(x, approximate=True):
    """Python float factors go through tnp.multiply: NumPy's own `*` on an eager bfloat16
    array and a Python float gives float32 (ml_dtypes), tnp's keeps bfloat16, as JAX."""
    x, mul = tnp.asarray(x), tnp.multiply
    if approximate:
        inner = mul(float(np.sqrt(2 / np.pi)), x + mul(0.044715, x * x * x))
        return mul(mul(0.5, x), 1 + tnp.tanh(inner))
    return mul(mul(0.5, x), 1 + tnp.erf(mul(x, float(1 / np.sqrt(2)))))


def one_hot(x, num_classes, dtype=np.float32, axis=-1):
    """jax.nn.one_hot: 1 where x equals the class index (out-of-range and NaN rows are 0)."""
    x = tnp.asarray(x)
    hot = tnp.equal(tnp.expand_dims(x, axis), _classes(num_classes, x.ndim + 1, axis))
    return tnp.astype(hot, dtype)


def _classes(n, ndim, axis):
    shape = [1] * ndim
    shape[axis] = int(n)
    return np.arange(int(n)).reshape(shape)


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
