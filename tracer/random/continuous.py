"""JAX's continuous distributions that are transforms of uniform or normal draws (JAX's
transforms, so the statistics are JAX's), with exact.py's math so every backend gives
the same bits. Parameters broadcast to the sample shape and are cast to `dtype`; their
gradients are the reparameterised ones JAX gives.
"""
import math

import ml_dtypes
import numpy as np

import tracer.numpy as tnp
from ir import dtype_kind
from ir.errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from tracer import lax
from tracer.lax import stop_gradient
from tracer.numpy._base import broadcast_shapes, dtype_of, shape as shape_of, value
from tracer.random import exact
from tracer.random.core import (_check_broadcast, _float_dtype, _shape, bits, normal, split,
                                uniform)


def params(op, shape, dtype, *values):
    """(sample shape, dtype, parameters cast to it): a shape of None is the parameters'
    broadcast shape, and a given one must hold them (JAX's rule)."""
    dt = _float_dtype(np.float32 if dtype is None else dtype, op)
    values = [tnp.astype(value(v, op), dt) for v in values]
    if shape is None:
        shape = broadcast_shapes(op, *(shape_of(v) for v in values))
    shape = _shape(shape, op)
    _check_broadcast(op, shape, *values)
    return shape, dt, values


def _open_uniform(key, shape, dt, minval):
    return uniform(key, shape, dt, minval, 1.0)


def sum_last(x):
    """The sum over the last axis, left to right (one order on every backend)."""
    total = x[..., 0]
    for i in range(1, shape_of(x)[-1]):
        total = total + x[..., i]
    return total


def exponential(key, shape=(), dtype=None):
    """Exponential(1) draws: -log1p(-u)."""
    shape, dt, _ = params("exponential", shape, dtype)
    return -exact.log1p(-uniform(key, shape, dt))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) draws: sign(u) log1p(-|u|), u uniform in (-1, 1)."""
    shape, dt, _ = params("laplace", shape, dtype)
    u = uniform(key, shape, dt, -1.0 + float(ml_dtypes.finfo(dt).epsneg), 1.0)
    return tnp.sign(u) * exact.log1p(-tnp.abs(u))


def logistic(key, shape=(), dtype=None):
    """Logistic(0, 1) draws: log(u) - log1p(-u)."""
    shape, dt, _ = params("logistic", shape, dtype)
    u = _open_uniform(key, shape, dt, float(ml_dtypes.finfo(dt).tiny))
    return exact.log(u) - exact.log1p(-u)


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy draws: tan(pi (u - 1/2))."""
    shape, dt, _ = params("cauchy", shape, dtype)
    u = _open_uniform(key, shape, dt, float(ml_dtypes.finfo(dt).eps))
    return exact.tanpi(u - np.array(0.5, dt))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel draws, JAX's modes: -log(-log(u)) (None, "low"); "high" refines u
    below 1/2 by a second uniform and takes -log(-log1p(-u)); "highest" (float32; "high"
    for the others) builds u from 64 random bits with as many significant bits as
    float32 holds at every scale."""
    if mode not in (None, "low", "high", "highest"):
        raise ArgumentValueError(f"gumbel: mode must be None, 'low', 'high' or 'highest', "
                                 f"got {mode!r}")
    shape, dt, _ = params("gumbel", shape, dtype)
    info = ml_dtypes.finfo(dt)
    if mode in (None, "low"):
        return -exact.log(-exact.log(_open_uniform(key, shape, dt, float(info.tiny))))
    if mode == "highest" and dt == np.float32:
        words = bits(key, (2,) + shape)
        flip = words[0] < np.uint32(2 ** 31)
        neg = tnp.bitwise_not(words)     # 1 - u in 64-bit fixed point, for u >= 1/2
        neg = tnp.stack([neg[0] + tnp.astype(neg[1] == np.uint32(2 ** 32 - 1), np.uint32),
                         neg[1] + np.uint32(1)])
        x = _unit_of_64_bits(tnp.where(flip, words, neg))
        return tnp.where(flip, -exact.log(-exact.log1p(-x)), -exact.log(-exact.log(x)))
    high, low = uniform(key, (2,) + shape, dt)
    x = tnp.where(high >= np.array(0.5, dt), high,
                  high + np.array(2.0 ** -info.nmant, dt) * low + np.array(info.tiny, dt))
    return -exact.log(-exact.log1p(-x))


def _unit_of_64_bits(words):
    """The float32 in (0, 1) nearest below the 64-bit fraction (hi, lo) (JAX's
    _safe_int_to_float: the leading one found by clz; every shift kept under 32)."""
    hi, lo = words[0], words[1]
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    u32 = np.uint32
    top = tnp.left_shift(hi, tnp.minimum(hiclz, u32(31)))
    rest = tnp.where(hiclz == u32(32), tnp.left_shift(lo, tnp.minimum(loclz, u32(31))),
                     tnp.where(hiclz == u32(0), u32(0),
                               tnp.right_shift(lo, u32(32) - tnp.maximum(hiclz, u32(1)))))
    mantissa = tnp.bitwise_and(tnp.right_shift(tnp.bitwise_or(top, rest), u32(8)),
                               u32(2 ** 23 - 1))
    exponent = tnp.left_shift(u32(126) - tnp.where(hiclz == u32(32), u32(32) + loclz, hiclz),
                              u32(23))
    exponent = tnp.bitwise_and(exponent, u32(2 ** 30 - 2 ** 22))
    return lax.bitcast_convert_type(tnp.bitwise_or(exponent, mantissa), np.float32)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities softmax(logits, axis) (the Gumbel-max trick; the
    top-k of one perturbation of logits for replace=False), as JAX."""
    logits = value(logits, "categorical")
    dt = dtype_of(logits)
    if dtype_kind(dt) != "f":
        raise DTypeError(f"categorical: logits must be floats, got {dt}")
    ndim = len(shape_of(logits))
    if not -ndim <= axis < ndim:
        raise ShapeError(f"categorical: axis {axis} is out of bounds for logits of shape "
                         f"{shape_of(logits)}")
    axis %= ndim
    batch = shape_of(logits)[:axis] + shape_of(logits)[axis + 1:]
    shape = batch if shape is None else _shape(shape, "categorical")
    if broadcast_shapes("categorical", shape, batch) != shape:
        raise ShapeError(f"categorical: shape {shape} is not broadcast-compatible with the "
                         f"batch shape {batch} of logits {shape_of(logits)}")
    lead = shape[:len(shape) - len(batch)]
    if not replace:
        return _categorical_without_replacement(key, logits, axis, shape, lead, mode)
    full = lead + shape[len(lead):][:axis] + shape_of(logits)[axis:axis + 1] + \
        shape[len(lead) + axis:]
    logits = tnp.reshape(logits, (1,) * len(lead) + shape_of(logits))
    return tnp.argmax(gumbel(key, full, dt, mode) + logits, axis=len(lead) + axis)


def _categorical_without_replacement(key, logits, axis, shape, lead, mode):
    """The top prod(lead) categories of one Gumbel perturbation of logits, leading."""
    k, n = math.prod(lead), shape_of(logits)[axis]
    if k > n:
        raise ArgumentValueError(f"categorical: Number of samples without replacement ({k}) "
                                 f"cannot exceed number of categories ({n}) (logits "
                                 f"{shape_of(logits)}, shape {shape})")
    perturbed = tnp.moveaxis(gumbel(key, shape_of(logits), dtype_of(logits), mode) + logits,
                             axis, -1)
    _, index = lax.top_k(perturbed, k)
    return tnp.reshape(tnp.moveaxis(index, -1, 0), shape)


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) draws: exp(e / b), e exponential."""
    shape, dt, (b,) = params("pareto", shape, dtype, b)
    return exact.exp(exponential(key, shape, dt) / b)


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) draws: scale sqrt(-2 log u)."""
    shape, dt, (scale,) = params("rayleigh", shape, dtype, scale)
    u = uniform(key, shape, dt)
    return scale * tnp.sqrt(exact.log(u) * np.array(-2, dt))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull draws: scale (-log1p(-u)) ** (1 / concentration)."""
    shape, dt, (scale, conc) = params("weibull_min", shape, dtype, scale, concentration)
    u = uniform(key, shape, dt)
    return exact.power(-exact.log1p(-u), 1 / conc) * scale


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma z), z standard normal."""
    shape, dt, (sigma,) = params("lognormal", shape, dtype, sigma)
    return exact.exp(normal(key, shape, dt) * sigma)


def maxwell(key, shape=(), dtype=None):
    """Maxwell draws: the norm of three standard normals."""
    shape, dt, _ = params("maxwell", shape, dtype)
    z = normal(key, shape + (3,), dt)
    return tnp.sqrt(sum_last(z * z))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """A random sign times a Maxwell draw, scaled and shifted (shape + the parameters'
    broadcast shape, as JAX)."""
    _, dt, (loc, scale) = params("double_sided_maxwell", None, dtype, loc, scale)
    shape = _shape(shape, "double_sided_maxwell") + broadcast_shapes(
        "double_sided_maxwell", shape_of(loc), shape_of(scale))
    k1, k2 = split(key)
    return rademacher(k2, shape, dt) * maxwell(k1, shape, dt) * scale + loc


def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with probability 1/2 each (int32 by default): 2 bernoulli(0.5) - 1."""
    shape = _shape(shape, "rademacher")
    return tnp.astype(tnp.astype(uniform(key, shape) < 0.5, np.int32) * 2 - 1,
                      np.int32 if dtype is None else dtype)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) draws by inverting the CDF at one uniform (JAX's)."""
    shape, dt, (left, mode, right) = params("triangular", shape, dtype, left, mode, right)
    left, mode, right = (tnp.broadcast_to(v, shape) for v in (left, mode, right))
    u = uniform(key, shape, dt)
    width = right - left
    low = left + tnp.sqrt(u * width * (mode - left))
    high = right - tnp.sqrt((np.array(1, dt) - u) * width * (right - mode))
    return tnp.where(u < (mode - left) / width, low, high)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, scale 1) draws by Michael, Schucany and Haas' transform of
    a normal and a uniform draw (JAX's)."""
    shape, dt, (mean,) = params("wald", shape, dtype, mean)
    k1, k2 = split(key)
    mean = tnp.broadcast_to(mean, shape)
    v, z = normal(k1, shape, dt), uniform(k2, shape, dt)
    y, mean_sq = v * v, mean * mean
    root = tnp.sqrt(np.array(4, dt) * mean * y + mean_sq * (y * y))
    x = mean + mean_sq * y / np.array(2, dt) - mean / np.array(2, dt) * root
    return tnp.where(z <= mean / (mean + x), x, mean_sq / x)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal draws conditioned on (lower, upper): sqrt(2) erfinv(u), u uniform between
    the bounds' erf images, clipped into the open interval."""
    shape, dt, (lower, upper) = params("truncated_normal", shape, dtype, lower, upper)
    sqrt2 = np.array(math.sqrt(2), dt)
    a, b = exact.erf(lower / sqrt2), exact.erf(upper / sqrt2)
    out = sqrt2 * exact.erfinv(uniform(key, shape, dt, a, b))
    lo, hi = (stop_gradient(v) for v in (lower, upper))
    return tnp.clip(out, exact.next_float(lo, 1), exact.next_float(hi, -1))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """mean + factor @ z, factor a square root of cov (cholesky, or eigh/svd scaled)."""
    if method not in ("cholesky", "eigh", "svd"):
        raise ArgumentError(f"multivariate_normal: method must be 'cholesky', 'eigh' or "
                            f"'svd', got {method!r}")
    dt = _float_dtype(np.float32 if dtype is None else dtype, "multivariate_normal")
    mean, cov = (tnp.astype(value(v, "multivariate_normal"), dt) for v in (mean, cov))
    ms, cs = shape_of(mean), shape_of(cov)
    if len(ms) < 1 or len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ShapeError(f"multivariate_normal: needs mean (..., n) and cov (..., n, n), "
                         f"got mean {ms} and cov {cs}")
    batch = broadcast_shapes("multivariate_normal", ms[:-1], cs[:-2])
    shape = batch if shape is None else _shape(shape, "multivariate_normal")
    if broadcast_shapes("multivariate_normal", shape, batch) != shape:
        raise ShapeError(f"multivariate_normal: parameter batch shape {batch} does not "
                         f"broadcast to the sample shape {shape}")
    if method == "cholesky":
        factor = tnp.linalg.cholesky(cov)
    else:
        w, v = tnp.linalg.eigh(cov) if method == "eigh" else tnp.linalg.svd(cov)[1::-1]
        factor = v * tnp.sqrt(w)[..., None, :]
    z = normal(key, shape + ms[-1:], dt)
    return mean + sum_last(factor * z[..., None, :])


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """A Haar-random (n, m) matrix with orthonormal columns (rows if n < m): the Q of
    the QR of a normal matrix, columns signed by R's diagonal."""
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
            raise ArgumentError(f"orthogonal: {name} must be a non-negative int, got {v!r}")
    shape, dt, _ = params("orthogonal", shape, dtype)
    z = normal(key, shape + (max(n, m), min(n, m)), dt)
    q, r = tnp.linalg.qr(z)
    x = q * tnp.sign(tnp.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    return tnp.swapaxes(x, -1, -2) if n < m else x
