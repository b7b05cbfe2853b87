"""Neural-network functions as in jax.nn, composed from tracer.numpy ops (no kernels of
their own, so their gradients and LLVM lowering come for free)."""
import numpy as np

from tracer import numpy as tnp


def relu(x):
    """max(x, 0) with relu'(0) = 0 as in jax.nn.relu (maximum would split the tie 1/2);
    NaN passes through."""
    return tnp.where(tnp.less_equal(x, 0), 0, x)


def sigmoid(x):
    return 1 / (1 + tnp.exp(-tnp.asarray(x)))


def _shifted(x, axis):
    """x - max(x) along axis, with the max of an all -inf slice replaced by 0."""
    m = tnp.max(x, axis=axis, keepdims=True)
    m = tnp.where(tnp.less(tnp.abs(m), np.inf), m, 0)
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
    x = tnp.asarray(x)
    if approximate:
        c = float(np.sqrt(2 / np.pi))
        return 0.5 * x * (1 + tnp.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1 + tnp.erf(x * float(1 / np.sqrt(2))))
