"""jax.nn's activations and normalizers, composed from tracer.numpy ops (no kernels of
their own, so their gradients, batching and LLVM lowering come for free). Python float
factors go through tnp.multiply: NumPy's own `*` on an eager bfloat16 array and a Python
float gives float32 (ml_dtypes), tnp's keeps bfloat16, as JAX."""
import numpy as np

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


# ---- the rest of jax.nn's activations, with JAX's definitions (and gradients at ties) ----

def identity(x):
    return tnp.asarray(x)


def relu6(x):
    """min(max(x, 0), 6); its gradient is 0 at 0 and 6, as JAX's custom jvp; NaN passes."""
    x = tnp.asarray(x)
    return tnp.where(tnp.less_equal(x, 0), 0, tnp.where(tnp.greater_equal(x, 6), 6, x))


def leaky_relu(x, negative_slope=0.01):
    x = tnp.asarray(x)
    return tnp.where(tnp.greater_equal(x, 0), x, tnp.multiply(negative_slope, x))


def elu(x, alpha=1.0):
    """x if x > 0 else alpha (e^x - 1); expm1 sees 0 on the positive side, so a large x
    gives no inf (nor a NaN gradient)."""
    x = tnp.asarray(x)
    pos = tnp.greater(x, 0)
    return tnp.where(pos, x, tnp.multiply(alpha, tnp.expm1(tnp.where(pos, 0, x))))


def celu(x, alpha=1.0):
    x = tnp.asarray(x)
    return tnp.maximum(x, 0) + tnp.multiply(alpha, tnp.expm1(
        tnp.divide(tnp.minimum(x, 0), alpha)))


def selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return tnp.multiply(scale, elu(x, alpha))


def softplus(x):
    return tnp.logaddexp(tnp.asarray(x), 0)


def log_sigmoid(x):
    return -softplus(-tnp.asarray(x))


def silu(x):
    x = tnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def mish(x):
    x = tnp.asarray(x)
    return x * tnp.tanh(softplus(x))


def hard_tanh(x):
    x = tnp.asarray(x)
    return tnp.where(tnp.greater(x, 1), 1, tnp.where(tnp.less(x, -1), -1, x))


def hard_sigmoid(x):
    return relu6(tnp.asarray(x) + 3) / 6


def hard_silu(x):
    x = tnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def soft_sign(x):
    x = tnp.asarray(x)
    return x / (tnp.abs(x) + 1)


def squareplus(x, b=4):
    x = tnp.asarray(x)
    return (x + tnp.sqrt(x * x + b)) / 2


def sparse_plus(x):
    x = tnp.asarray(x)
    return tnp.where(tnp.less_equal(x, -1), 0,
                     tnp.where(tnp.greater_equal(x, 1), x, (x + 1) ** 2 / 4))


def sparse_sigmoid(x):
    return tnp.multiply(0.5, tnp.clip(tnp.asarray(x) + 1, 0, 2))


def log1mexp(x):
    """log(1 - e^-x) for x > 0, by the form accurate on each side of log 2."""
    x = tnp.asarray(x)
    return tnp.where(tnp.less(x, float(np.log(2))), tnp.log(-tnp.expm1(-x)),
                     tnp.log1p(-tnp.exp(-x)))


def glu(x, axis=-1):
    """The first half of `axis` gated by the sigmoid of the second."""
    a, b = tnp.split(tnp.asarray(x), 2, axis=axis)
    return a * sigmoid(b)


def tanh(x):
    return tnp.tanh(x)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along axis, stably (the log of the count subtracted)."""
    x = tnp.asarray(x)
    if where is not None:
        x = tnp.where(where, x, -np.inf)
        n = tnp.sum(tnp.broadcast_to(where, x.shape), axis=axis, keepdims=keepdims)
    else:
        n = x.size if axis is None else int(np.prod([x.shape[a] for a in np.atleast_1d(axis)]))
    return logsumexp(x, axis=axis, keepdims=keepdims) - tnp.log(tnp.astype(n, x.dtype))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """(x - mean) / sqrt(variance + epsilon), the moments along axis unless given."""
    x = tnp.asarray(x)
    if mean is None:
        mean = tnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        variance = tnp.mean(tnp.square(x), axis=axis, keepdims=True,
                            where=where) - tnp.square(mean)
    return (x - mean) / tnp.sqrt(variance + epsilon)
