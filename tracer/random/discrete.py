"""JAX's discrete samplers: poisson (Knuth's product of uniforms below lam = 10, Hormann's
transformed rejection above), binomial (inversion, or Hormann's BTRS), each as JAX's loop
over all elements at once, geometric and choice.
"""
import math

import numpy as np

import tracer.numpy as tnp
from ir.errors import ArgumentError, DTypeError, ShapeError
from tracer import lax
from tracer.numpy._base import dtype_of, is_weak, normalize_axis, shape as shape_of, value
from tracer.random import exact
from tracer.random.continuous import gumbel, params
from tracer.random.core import (_float_dtype, _shape, permutation, randint, split,
                                uniform)


def _int_dtype(dtype, op):
    dt = np.dtype(np.int32 if dtype is None else dtype)
    if dt.kind not in "iu":
        raise DTypeError(f"{op}: dtype must be an integer dtype, got {dt}")
    return dt


def _draw_dtype(p, op):
    """The dtype a probability p is drawn in: its own float dtype, or float32 for a
    Python scalar or an integer array (JAX's weak types without x64)."""
    p = value(p, op)
    return dtype_of(p) if dtype_of(p).kind == "f" and not is_weak(p) else np.dtype(np.float32)


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
    shape, pdt, (p,) = params("geometric", shape, _draw_dtype(p, "geometric"), p)
    u = uniform(key, shape, pdt)
    u = tnp.where(u == np.array(0, pdt), np.array(1, pdt), u)
    return tnp.astype(tnp.floor(exact.log(u) / exact.log1p(-p)) + np.array(1, pdt), dt)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Draws from range(a) (an int) or from a's slices along `axis`: uniform indices,
    the first of a permutation (replace=False), inverse-CDF search of p's cumulative sum,
    or Gumbel top-k (p without replacement), as JAX."""
    if not isinstance(shape, (tuple, list)):
        raise ArgumentError(f"choice: shape must be a sequence (a tuple of ints), got {shape!r}")
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
        pdt = _draw_dtype(p, "choice")
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


_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: a table up to 9, the series in k + 1
    beyond (JAX evaluates the series at k = 9 there, a slightly looser bound)."""
    dt = dtype_of(k)
    kp1 = tnp.maximum(k, np.array(9, dt)) + np.array(1, dt)
    kp1sq = kp1 * kp1
    approx = (np.array(1 / 12, dt) - (np.array(1 / 360, dt) - np.array(1 / 1260, dt) / kp1sq)
              / kp1sq) / kp1
    index = tnp.astype(tnp.clip(k, 0, 9), np.int32)
    return tnp.where(k <= np.array(9, dt), tnp.take(_STIRLING_TAIL.astype(dt), index), approx)


def _binomial_inversion(key, count, q, shape):
    """Geometric waiting times summed until they pass count (for count q <= 10)."""
    dt = dtype_of(q)
    log1mq = exact.log1p(-q)

    def body(state):
        k, total, key = state
        sub, key = split(key)
        k = tnp.where(total <= count, k + np.array(1, dt), k)
        geom = tnp.ceil(exact.log(uniform(sub, shape, dt)) / log1mq)
        return k, total + geom, key
    zeros = tnp.zeros(shape, dt)
    init = (zeros, zeros, key)
    return lax.while_loop(lambda s: tnp.any(s[1] <= count), body, init)[0] - np.array(1, dt)


def _btrs(key, count, q, shape):
    """Hormann's BTRS transformed rejection (for count q > 10)."""
    dt = dtype_of(q)

    def c(v):
        return np.array(v, dt)
    stddev = tnp.sqrt(count * q * (c(1) - q))
    b = c(1.15) + c(2.53) * stddev
    a = c(-0.0873) + c(0.0248) * b + c(0.01) * q
    mid = count * q + c(0.5)
    v_r = c(0.92) - c(4.2) / b
    r = q / (c(1) - q)
    alpha = (c(2.83) + c(5.1) / b) * stddev
    m = tnp.floor((count + c(1)) * q)
    fixed = (m + c(0.5)) * exact.log((m + c(1)) / (r * (count - m + c(1)))) + \
        _stirling_tail(m) + _stirling_tail(count - m)

    def body(state):
        k_out, accepted, key = state
        key, k0, k1 = split(key, 3)
        u = uniform(k0, shape, dt) - c(0.5)
        v = uniform(k1, shape, dt)
        us = c(0.5) - tnp.abs(u)
        k = tnp.floor((c(2) * a / us + b) * u + mid)
        reject = (k < c(0)) | (k > count)
        log_v = exact.log(v * alpha / (a / (us * us) + b))
        ub = fixed + (count + c(1)) * exact.log((count - m + c(1)) / (count - k + c(1))) + \
            (k + c(0.5)) * exact.log(r * (count - k + c(1)) / (k + c(1))) - \
            _stirling_tail(k) - _stirling_tail(count - k)
        accept = ((us >= c(0.07)) & (v <= v_r)) | (~reject & (log_v <= ub))
        return tnp.where(accept, k, k_out), accepted | accept, key

    init = (tnp.full(shape, -1, dt), tnp.zeros(shape, bool), key)
    return lax.while_loop(lambda s: tnp.any(~s[1]), body, init)[0]


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats, JAX's: inversion where n min(p, 1 - p) <= 10,
    BTRS beyond; NaN for a negative or NaN n or an invalid p, inf for an infinite n.
    Drawn in p's float dtype (float32 for a Python or integer p), as JAX; `dtype` is only
    the result's."""
    dt = _float_dtype(np.float32 if dtype is None else dtype, "binomial")
    shape, _, (n, p) = params("binomial", shape, _draw_dtype(p, "binomial"), n, p)
    return tnp.astype(_binomial(key, n, p, shape), dt)


def _binomial(key, n, p, shape):
    dt = dtype_of(p)
    n, p = tnp.broadcast_to(n, shape), tnp.broadcast_to(p, shape)
    low = p < np.array(0.5, dt)
    q = tnp.where(low, p, np.array(1, dt) - p)
    bad_n, inf_n = tnp.isnan(n) | (n < 0), tnp.isinf(n)
    bad_q = tnp.isnan(q) | (q < 0)
    q = tnp.where(bad_q, np.array(0.01, dt), q)
    inversion = bad_n | (n * q <= np.array(10, dt))
    n = tnp.floor(n)
    out = tnp.where(inversion,
                    _binomial_inversion(key, tnp.where(inversion, n, np.array(0, dt)), q, shape),
                    _btrs(key, tnp.where(inversion, np.array(1e4, dt), n),
                          tnp.where(inversion, np.array(0.5, dt), q), shape))
    invalid = bad_q | bad_n
    out = tnp.where(invalid, np.array(np.nan, dt), out)
    out = tnp.where(inf_n & ~invalid, np.array(np.inf, dt), out)
    return tnp.where(low | bad_n | bad_q | inf_n, out, n - out)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts (outcomes on p's last axis) as floats, JAX's: a scan over
    the outcomes drawing each count as a binomial of the trials left, with the outcome's
    share of the probability left."""
    p = tnp.asarray(value(p, "multinomial"))
    shape = shape_of(p) if shape is None else _shape(shape, "multinomial")
    dt = np.dtype(np.float32 if dtype is None else dtype)
    work = np.result_type(dtype_of(p), np.float32) if dtype_of(p).kind == "f" else dt
    n = tnp.broadcast_to(tnp.astype(value(n, "multinomial"), work), shape[:-1])
    p = tnp.moveaxis(tnp.broadcast_to(tnp.astype(p, work), shape), -1, 0)
    left = tnp.flip(tnp.cumsum(tnp.flip(p, 0), 0), 0)
    ratios = tnp.clip(p / tnp.where(left == 0, np.array(1, work), left), 0, 1)

    def draw(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio, dtype=work)
        return remainder - count, count
    _, counts = lax.scan(draw, n, (ratios, split(key, shape[-1])), unroll=unroll)
    return tnp.astype(tnp.moveaxis(counts, 0, -1), dt)
