"""JAX's discrete samplers: poisson (Knuth's product of uniforms below lam = 10, Hormann's
transformed rejection above, both as JAX's loops), geometric and choice.
"""
import math

import numpy as np

import tracer.numpy as tnp
from ir.errors import ArgumentError, DTypeError, ShapeError
from tracer import lax
from tracer.numpy._base import dtype_of, is_weak, normalize_axis, shape as shape_of, value
from tracer.random import exact
from tracer.random.continuous import gumbel, params
from tracer.random.core import _shape, permutation, randint, split, uniform


def _int_dtype(dtype, op):
    dt = np.dtype(np.int32 if dtype is None else dtype)
    if dt.kind not in "iu":
        raise DTypeError(f"{op}: dtype must be an integer dtype, got {dt}")
    return dt


def _poisson_knuth(key, lam, shape):
    """Counts of uniforms whose running product stays above exp(-lam), all at once."""
    def body(state):
        i, k, key, log_prod = state
        key, sub = split(key)
        k = tnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, key, log_prod + exact.log(uniform(sub, shape))

    def cond(state):
        return tnp.any(state[3] > -lam)
    zeros = tnp.zeros(shape, np.float32)
    return lax.while_loop(cond, body, (np.int32(0), zeros, key, zeros))[1] - 1


def _poisson_rejection(key, lam, shape):
    """Hormann's PTRS: a proposal k per round, kept where it passes."""
    log_lam = exact.log(lam)
    b = np.float32(0.931) + np.float32(2.53) * tnp.sqrt(lam)
    a = np.float32(-0.059) + np.float32(0.02483) * b
    inv_alpha = np.float32(1.1239) + np.float32(1.1328) / (b - np.float32(3.4))
    v_r = np.float32(0.9277) - np.float32(3.6224) / (b - np.float32(2))

    def body(state):
        k_out, accepted, key = state
        key, k0, k1 = split(key, 3)
        u = uniform(k0, shape) - np.float32(0.5)
        v = uniform(k1, shape)
        us = np.float32(0.5) - tnp.abs(u)
        k = tnp.floor((np.float32(2) * a / us + b) * u + lam + np.float32(0.43))
        s = exact.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - exact.lgamma(tnp.maximum(k, np.float32(0)) + np.float32(1))
        accept = ((us >= np.float32(0.07)) & (v <= v_r)) | (
            ~((k < 0) | ((us < np.float32(0.013)) & (v > us))) & (s <= t))
        return tnp.where(accept, k, k_out), accepted | accept, key

    init = (tnp.full(shape, -1, np.float32), tnp.zeros(shape, bool), key)
    return lax.while_loop(lambda s: tnp.any(~s[1]), body, init)[0]


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts (int32 by default), JAX's two algorithms split at lam = 10."""
    dt = _int_dtype(dtype, "poisson")
    shape, _, (lam,) = params("poisson", shape, np.float32, lam)
    lam = tnp.broadcast_to(lam, shape)
    small = (lam < np.float32(10)) | tnp.isnan(lam)
    knuth = _poisson_knuth(key, tnp.where(small, lam, np.float32(0)), shape)
    rejection = _poisson_rejection(key, tnp.where(small, np.float32(1e5), lam), shape)
    out = tnp.where(small, knuth, rejection)
    return tnp.astype(tnp.where(lam == np.float32(0), np.float32(0), out), dt)


def geometric(key, p, shape=None, dtype=None):
    """Trials up to the first success (>= 1): floor(log u / log1p(-p)) + 1."""
    dt = _int_dtype(dtype, "geometric")
    p = value(p, "geometric")
    pdt = dtype_of(p) if dtype_of(p).kind == "f" and not is_weak(p) else np.float32
    shape, pdt, (p,) = params("geometric", shape, pdt, p)
    u = uniform(key, shape, pdt)
    u = tnp.where(u == np.array(0, pdt), np.array(1, pdt), u)
    return tnp.astype(tnp.floor(exact.log(u) / exact.log1p(-p)) + np.array(1, pdt), dt)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Draws from range(a) (an int) or from a's slices along `axis`: uniform indices,
    the first of a permutation (replace=False), inverse-CDF search of p's cumulative sum,
    or Gumbel top-k (p without replacement), as JAX."""
    if not isinstance(shape, (tuple, list)):
        raise ShapeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = _shape(tuple(shape), "choice")
    scalar = isinstance(a, (int, np.integer)) and not isinstance(a, bool)
    arr = None if scalar else value(a, "choice")
    if not scalar and shape_of(arr) == ():
        raise ShapeError("choice: a must be an int or an array of rank >= 1")
    if not scalar:
        axis = normalize_axis("choice", axis, len(shape_of(arr)))
    n = int(a) if scalar else shape_of(arr)[axis]
    draws = math.prod(shape)
    out_shape = shape if scalar else shape_of(arr)[:axis] + shape + shape_of(arr)[axis + 1:]
    if draws == 0:
        return tnp.zeros(out_shape, np.int32 if scalar else dtype_of(arr))
    if n <= 0:
        raise ArgumentError(f"choice: a must be greater than 0 unless no samples are taken, "
                            f"got {n}")
    if not replace and draws > n:
        raise ArgumentError(f"choice: cannot take {draws} samples from a population of "
                            f"{n} with replace=False")
    if p is None and replace:
        index = randint(key, shape, 0, n)
    elif p is None:
        index = permutation(key, n)[:draws]
    else:
        p = value(p, "choice")
        if shape_of(p) != (n,):
            raise ShapeError(f"choice: p must be None or of shape ({n},) (a's length along "
                             f"axis), got {shape_of(p)}")
        pdt = dtype_of(p) if dtype_of(p).kind == "f" and not is_weak(p) else np.float32
        p = tnp.astype(p, pdt)
        if replace:
            cum = tnp.cumsum(p)
            r = cum[-1] * (np.array(1, pdt) - uniform(key, shape, pdt))
            index = tnp.searchsorted(cum, r)
        else:
            g = gumbel(key, (n,), pdt, mode) + exact.log(p)
            index = tnp.argsort(-g, stable=True)[:draws]
    index = tnp.reshape(index, shape)
    return index if scalar else tnp.take(arr, index, axis=axis)
