"""jax.nn.initializers: functions building `init(key, shape, dtype=float32)` from
tracer.random's samplers, with JAX's scalings (so a model's starting weights have JAX's
distributions; with tracer.random's bit-identical base samplers, JAX's values)."""
import math

import numpy as np

from ir.errors import ArgumentValueError
from tracer import numpy as tnp
from tracer import random

__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]


def _dtype(dtype):
    return np.dtype(np.float32 if dtype is None else dtype)


def zeros(key, shape, dtype=None):
    return tnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None):
    return tnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype):
        return tnp.full(shape, value, _dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Values uniform in [0, scale)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.uniform(key, shape, dt) * tnp.asarray(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.normal(key, shape, dt) * tnp.asarray(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """The standard normal truncated to (lower, upper), times stddev (no correction)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dt) * tnp.asarray(stddev, dt)
    return init


def _size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _fans(shape, in_axis, out_axis, batch_axis):
    """(fan in, fan out): the axes not named form a convolution's receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ArgumentValueError(f"Can't compute input and output sizes of a "
                                 f"{len(shape)}-dimensional weights tensor with default "
                                 f"in_axis. Must be at least 2D or specify in_axis explicitly.")
    n_in, n_out = _size(shape, in_axis), _size(shape, out_axis)
    field = math.prod(shape) / n_in / n_out / _size(shape, batch_axis)
    return n_in * field, n_out * field


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples of variance scale / n, n the fan `mode` names ("fan_in", "fan_out",
    "fan_avg", "fan_geo_avg"), from "truncated_normal" (cut at 2 standard deviations),
    "normal" or "uniform"."""
    denominators = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
                    "fan_avg": lambda i, o: (i + o) / 2, "fan_geo_avg": lambda i, o: (i * o) ** 0.5}
    if mode not in denominators:
        raise ArgumentValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ArgumentValueError(f"invalid distribution for variance scaling initializer: "
                                 f"{distribution}")

    def init(key, shape, dtype=dtype):
        shape, dt = tuple(int(s) for s in shape), _dtype(dtype)
        variance = tnp.asarray(scale / denominators[mode](*_fans(shape, in_axis, out_axis,
                                                                   batch_axis)), dt)
        if distribution == "truncated_normal":    # the stddev of N(0, 1) cut to (-2, 2)
            stddev = tnp.sqrt(variance) / tnp.asarray(.87962566103423978, dt)
            return random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * tnp.sqrt(variance)
        return random.uniform(key, shape, dt, -1) * tnp.sqrt(3 * variance)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Matrices with orthonormal rows or columns (whichever are fewer) along
    column_axis and the product of the other axes."""
    def init(key, shape, dtype=dtype):
        shape, dt = tuple(int(s) for s in shape), _dtype(dtype)
        if len(shape) < 2:
            raise ArgumentValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return tnp.zeros(shape, dt)
        n_cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // n_cols, (), dt, n_cols)
        q = tnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return tnp.asarray(scale, dt) * tnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A convolution kernel (3, 4 or 5 dims) zero but at its spatial centre, which holds
    an orthogonal matrix (input channels <= output channels)."""
    def init(key, shape, dtype=dtype):
        shape, dt = tuple(int(s) for s in shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ArgumentValueError("Delta orthogonal initializer requires a 3D, 4D or 5D "
                                     "shape.")
        if shape[-1] < shape[-2]:
            raise ArgumentValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        centre = tuple((s - 1) // 2 for s in shape[:-2])
        onehot = np.zeros(shape[:-2], dt)
        onehot[centre] = 1
        return tnp.asarray(onehot)[..., None, None] * ortho
    return init
