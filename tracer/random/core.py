"""tracer.random's PRNG (JAX's counter-based threefry-2x32, 20 rounds) as tracer.numpy ops,
and its basic samplers.

Why ops and not a kernel: a sample is a pure function of (key, element index), written
with uint32 add / xor / shifts, so every sampler is an ordinary traced graph. It jits,
vmaps over keys, runs inside scan/fori_loop bodies, differentiates as a constant, and the
llvm backend fuses the whole hash and the transform to floats into one vectorized loop.

Keys are uint32 arrays of shape (2,). Key derivation and bit layout are JAX's (threefry,
`jax_threefry_partitionable`, its default): element i of a sample is hashed from the
counter pair (0, i), 32-bit samples are the xor of the two output words, 64-bit ones
their concatenation. So `PRNGKey`, `split`, `fold_in`, `uniform`, `bernoulli`, `randint`
(32-bit dtypes) and `permutation` give JAX's exact values; `normal` (sqrt(2) * erfinv of
a uniform, with XLA's erfinv polynomials) and `categorical` (Gumbel-max) agree with JAX
to rounding.
A seed's key is (0, seed mod 2**32) whatever its integer type, as JAX's default (x64
disabled) gives. Every sampler is
made of ops that all backends compute alike (integer ops, bit casts, IEEE + - * / sqrt:
normal's log1p and categorical's log are written with them), so it gives the same bits
eagerly, under jit and on every backend.
"""
import math
import warnings

import ml_dtypes
import numpy as np

import tracer.numpy as tnp
from ir import dtype_kind
from ir.errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from tracer import exact_math
from tracer.config import check_prng_impl, legacy_prng_key, random_seed_offset
from tracer.core import Tracer
from tracer.numpy._base import (broadcast_shapes, dtype_of, is_weak, normalize_axis,
                                shape as shape_of, value)

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)
_KEY_HELP = "make keys with tracer.random.PRNGKey(seed) or split(key); vmap over key arrays"


# ---- keys ------------------------------------------------------------------------------
def PRNGKey(seed, *, impl=None):
    """The key of an integer seed: (0, seed mod 2**32), as JAX with x64 disabled (its
    default) for every integer type; Python ints must fit in int64, as in JAX."""
    check_prng_impl(impl, None, "PRNGKey")
    return _key_of_seed(seed, "PRNGKey")


def key(seed, *, impl=None, dtype=None):
    """`PRNGKey(seed)`: keys here are JAX's raw uint32 keys (threefry2x32 only)."""
    check_prng_impl(impl, dtype, "key")
    return _key_of_seed(seed, "key")


def _key_of_seed(seed, op):
    """The key of `seed` plus jax_random_seed_offset (tracer.config), as JAX's."""
    offset = random_seed_offset.value
    if isinstance(seed, Tracer):
        return _traced_seed(seed + offset if offset else seed, op)
    if isinstance(seed, int) and not isinstance(seed, bool):
        if not -2 ** 63 <= seed < 2 ** 63:
            raise OverflowError(f"{op}: seed {seed} does not fit in int64; reduce it "
                                f"(only its low 32 bits are used)")
        return np.array([0, (seed + offset) % 2 ** 32], U32)
    array = np.asarray(seed)
    if array.ndim != 0:
        raise ArgumentError(f"{op} accepts a scalar seed, but was given an array of "
                            f"shape {array.shape}; split a key, or vmap over seeds")
    if array.dtype.kind not in "iu":
        raise ArgumentError(f"{op}: PRNG key seed must be an integer; got {seed!r}")
    return np.array([0, (int(array) + offset) % 2 ** 32], U32)


def key_dtype(impl=None):
    """The dtype of the keys `key(seed, impl=impl)` makes: uint32, as keys here are raw."""
    check_prng_impl(impl, None, "key_dtype")
    return U32


def key_impl(keys):
    """The name of the keys' PRNG implementation: "threefry2x32", the only one here."""
    _raw_keys(keys, "key_impl")
    return "threefry2x32"


def key_data(keys):
    """The uint32 words of keys (..., 2): keys here are already raw, so a copy of them."""
    return _raw_keys(keys, "key_data")


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Keys from uint32 words of shape (..., 2), as JAX's raw keys: checked, copied."""
    check_prng_impl(impl, dtype, "wrap_key_data")
    return _raw_keys(key_bits_array, "wrap_key_data")


def clone(key):
    """A copy of the key (JAX's clone only matters to its key-reuse checker)."""
    return _raw_keys(key, "clone")


def _raw_keys(keys, op):
    keys = value(keys, op)
    if dtype_of(keys) != U32 or shape_of(keys)[-1:] != (2,):
        raise ShapeError(f"{op}: keys are uint32 arrays of shape (..., 2), got "
                         f"{dtype_of(keys)}{list(shape_of(keys))} ({_KEY_HELP})")
    return tnp.copy(keys)                   # a new array: never the caller's own


def _traced_seed(seed, op):
    if seed.shape != () or dtype_kind(seed.dtype) not in "iu":
        raise ArgumentError(f"{op}: seed must be an integer scalar, got a traced "
                            f"{seed.dtype}{list(seed.shape)}")
    return tnp.stack([tnp.zeros((), U32), tnp.astype(seed, U32)])


def _words(key, op):
    """The two uint32 words of a key, or a clear error for anything that is not one."""
    key = value(key, op)
    shp, dt = shape_of(key), dtype_of(key)
    if dt != U32:
        raise DTypeError(f"{op}: JAX encountered invalid PRNG key data: expected "
                         f"key_data.dtype = uint32; got dtype={dt}: a key is a uint32 array "
                         f"of shape (2,) ({_KEY_HELP})")
    if shp != (2,):
        raise ShapeError(f"{op}: a key is a uint32 array of shape (2,), got shape {shp} "
                         f"({_KEY_HELP})")
    if legacy_prng_key.active:
        _legacy_key()
    return key[0], key[1]


def _legacy_key():
    """jax_legacy_prng_key 'warn' or 'error' (tracer.config): JAX's words for a raw key,
    which every key is here."""
    msg = ("Legacy uint32 key array passed as key to jax.random function. Please create keys "
           "using jax.random.key(). If use of a raw key array was intended, set "
           "jax_legacy_prng_key=\"allow\" (tracer's keys are all raw uint32 arrays)")
    if legacy_prng_key.value == "error":
        raise ArgumentValueError(msg)
    if legacy_prng_key.value == "warn":
        warnings.warn(msg, UserWarning, stacklevel=4)


def threefry(k1, k2, count):
    """Threefry-2x32 (20 rounds) of the counter pairs (0, count) under key (k1, k2)
    (key words and counters broadcast: one key per element works too)."""
    ks = (k1, k2, tnp.bitwise_xor(tnp.bitwise_xor(k1, k2), _PARITY))
    x0 = tnp.broadcast_to(ks[0], broadcast_shapes("threefry", shape_of(k1), shape_of(count)))
    x1 = tnp.add(count, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = tnp.add(x0, x1)
            x1 = tnp.bitwise_xor(x0, tnp.bitwise_or(tnp.left_shift(x1, r),
                                                    tnp.right_shift(x1, 32 - r)))
        x0 = tnp.add(x0, ks[(i + 1) % 3])
        x1 = tnp.add(x1, tnp.add(ks[(i + 2) % 3], np.uint32(i + 1)))
    return x0, x1


def _counters(shape, op):
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise ShapeError(f"{op}: shape {shape} has {size} elements; at most 2**32 - 1 "
                         f"are numbered by one key (split it)")
    return tnp.reshape(tnp.arange(size, dtype=U32), shape)


def _hash(key, shape, op):
    """The two output words for every element of `shape`."""
    k1, k2 = _words(key, op)
    return threefry(k1, k2, _counters(shape, op))


def split(key, num=2):
    """`num` new keys (an int or a shape), shape (*num, 2)."""
    shape = _shape((num,) if isinstance(num, (int, np.integer)) else num, "split")
    return tnp.stack(_hash(key, shape, "split"), axis=-1)


def fold_in(key, data):
    """A new key from `key` and a 32-bit integer `data`."""
    k1, k2 = _words(key, "fold_in")
    data = value(data, "fold_in")
    if shape_of(data) != () or dtype_kind(dtype_of(data)) not in "iu":
        raise ArgumentError(f"fold_in: data must be an integer scalar, got "
                            f"{dtype_of(data)}{list(shape_of(data))} (vmap for batches)")
    if not isinstance(data, Tracer):
        if not 0 <= int(data) < 2 ** 32:
            raise ArgumentError(f"fold_in: data {int(data)} is not a uint32 (0 <= data < 2**32)")
        data = np.uint32(data)
    return tnp.stack(threefry(k1, k2, tnp.astype(data, U32)))


# ---- argument checks -------------------------------------------------------------------
def _shape(shape, op):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
            for d in shape):
        raise ShapeError(f"{op}: shape must be a tuple of non-negative ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def _check_broadcast(op, shape, *operands):
    """JAX's rule: parameters broadcast to the sample shape, never enlarge it."""
    shapes = [shape_of(x) for x in operands]
    if broadcast_shapes(op, shape, *shapes) != shape:
        raise ShapeError(f"{op}: parameter shapes {shapes} do not broadcast to the sample "
                         f"shape {shape}; give a shape they broadcast to")


def _float_dtype(dtype, op):
    dt = np.dtype(dtype)
    if dtype_kind(dt) != "f":
        raise DTypeError(f"{op}: needs a float dtype (float16, bfloat16, float32, float64), "
                         f"got {dt}")
    return dt


# ---- samplers --------------------------------------------------------------------------
def bits(key, shape=(), dtype=None):
    """Uniform unsigned words (jax.random.bits): uint32 by default; uint64 concatenates
    an element's two output words, uint8/uint16 keep the low bits of their xor."""
    shape = _shape(shape, "bits")
    dt = np.dtype(np.uint32 if dtype is None else dtype)
    if dt.kind != "u":
        raise ArgumentValueError(f"bits: dtype argument to `bits` must be an unsigned int "
                                 f"dtype (uint8, uint16, uint32, uint64), got {dt}")
    w1, w2 = _hash(key, shape, "bits")
    if dt.itemsize == 8:
        return tnp.bitwise_or(tnp.left_shift(tnp.astype(w1, dt), np.uint64(32)),
                              tnp.astype(w2, dt))
    return tnp.astype(tnp.bitwise_xor(w1, w2), dt)


def _unit(key, shape, dt, op, scale=1):
    return unit_of_words(*_hash(key, shape, op), dt, scale)


def unit_of_words(w1, w2, dt, scale=1):
    """Uniform floats in [0, scale) of dtype dt (scale a power of 2) from hash words,
    JAX's: the top mantissa bits of a sample (of the low 16 bits of the word for float16,
    the low 8 for bfloat16), scaled exactly."""
    if dt == np.float64:
        hi = tnp.astype(w1, dt) * (scale * 2.0 ** -32)
        return hi + tnp.astype(tnp.right_shift(w2, 12), dt) * (scale * 2.0 ** -52)
    nmant = ml_dtypes.finfo(dt).nmant
    nbits = 8 if nmant < 8 else 8 * dt.itemsize
    word = tnp.bitwise_xor(w1, w2)
    if nbits < 32:
        word = tnp.bitwise_and(word, np.uint32(2 ** nbits - 1))
    mant = tnp.astype(tnp.right_shift(word, nbits - nmant), np.float32)
    return tnp.astype(mant * np.float32(scale * 2.0 ** -nmant), dt)


def uniform(key, shape=(), dtype=np.float32, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval)."""
    shape, dt = _shape(shape, "uniform"), _float_dtype(dtype, "uniform")
    lo, hi = (tnp.astype(value(v, "uniform"), dt) for v in (minval, maxval))
    _check_broadcast("uniform", shape, lo, hi)
    f = _unit(key, shape, dt, "uniform")
    if all(isinstance(v, (int, float)) for v in (minval, maxval)) and (minval, maxval) == (0, 1):
        return f
    return tnp.maximum(lo, _fma(f, tnp.subtract(hi, lo), lo))


def _fma(a, b, c):
    """a * b + c as XLA's CPU backend computes it (JAX's values): float32's rounded once,
    as a fused multiply-add (computed in float64, where the product is exact); float16's
    and bfloat16's rounded after each op; float64's rounded twice, as NumPy and the llvm
    backend do (JAX's may differ in the last bit)."""
    if dtype_of(a) != np.float32:
        return a * b + c
    a, b, c = (tnp.astype(v, np.float64) for v in (a, b, c))
    return tnp.astype(a * b + c, np.float32)


def normal(key, shape=(), dtype=np.float32):
    """Standard normal floats: sqrt(2) * erfinv(u), u uniform in (-1, 1) (JAX's method)."""
    shape, dt = _shape(shape, "normal"), _float_dtype(dtype, "normal")
    return normal_of_words(*_hash(key, shape, "normal"), dt)


def normal_of_words(w1, w2, dt):
    """normal's draws from hash words."""
    lo = float(np.nextafter(np.array(-1.0, dt), np.array(0.0, dt)))
    # JAX's uniform(minval=lo, maxval=1): maxval - minval rounds to 2, so u = 2 f + lo
    # with an exact product (and never below lo: JAX's clamp is a no-op)
    u = tnp.add(unit_of_words(w1, w2, dt, scale=2), lo)
    e = exact_math.erfinv(tnp.astype(u, np.float64 if dt == np.float64 else np.float32))
    return tnp.multiply(tnp.astype(e, dt), math.sqrt(2))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans, True with probability p (uniform < p, in p's float dtype; float32 for a
    weakly typed p, a Python scalar, as JAX without x64). mode="high", JAX's, resolves
    small p finely: u2 2**-nmant < p - u1, two uniforms."""
    if mode not in ("low", "high"):
        raise ArgumentValueError(f"bernoulli: mode must be 'low' or 'high', got {mode!r}")
    p = value(p, "bernoulli")
    dt = dtype_of(p) if dtype_kind(dtype_of(p)) == "f" and not is_weak(p) \
        else np.dtype(np.float32)
    shape = shape_of(p) if shape is None else _shape(shape, "bernoulli")
    _check_broadcast("bernoulli", shape, p)
    p = tnp.astype(p, dt)
    if mode == "high":
        u1, u2 = uniform(key, (2,) + shape, dt)
        return tnp.less(u2 * np.array(2.0 ** -ml_dtypes.finfo(dt).nmant, dt), p - u1)
    return tnp.less(uniform(key, shape, dt), p)


def randint(key, shape, minval, maxval, dtype=np.int32):
    """Integers in [minval, maxval), JAX's: two samples of the dtype's width (32 bits
    for narrower dtypes) combined modulo the span."""
    shape, dt = _shape(shape, "randint"), np.dtype(dtype)
    if dt.kind not in "iu":
        raise DTypeError(f"randint: dtype must be an integer dtype (int8 ... int64, uint8 ... "
                         f"uint64; int32 by default), got {dt}")
    lo, hi = value(minval, "randint"), value(maxval, "randint")
    for v in (lo, hi):
        if dtype_kind(dtype_of(v)) not in "iu":
            raise DTypeError(f"randint: minval and maxval must be integers, got {dtype_of(v)}")
    _check_broadcast("randint", shape, lo, hi)
    if not isinstance(lo, Tracer) and not isinstance(hi, Tracer) and np.any(
            np.asarray(hi) <= np.asarray(lo)):
        raise ArgumentError(f"randint: needs minval < maxval, got minval={minval!r}, "
                            f"maxval={maxval!r}")
    info, word = np.iinfo(dt), np.dtype(np.uint64 if dt.itemsize == 8 else np.uint32)
    lo = tnp.astype(tnp.clip(lo, info.min, info.max), dt)
    hi_clipped = tnp.astype(tnp.clip(hi, info.min, info.max), dt)
    k1, k2 = split(key)
    high, low = bits(k1, shape, word), bits(k2, shape, word)
    span = tnp.astype(tnp.subtract(hi_clipped, lo), word)
    span = tnp.where(tnp.less_equal(hi_clipped, lo), word.type(1), span)
    # maxval one past the dtype's max: the span is one more than the clipped bounds say
    span = tnp.where(tnp.logical_and(tnp.greater(hi, info.max), tnp.greater(hi_clipped, lo)),
                     span + word.type(1), span)
    full = tnp.equal(span, 0)              # the whole word range: x % 0 is x, as in XLA
    divisor = tnp.where(full, word.type(1), span)

    def rem(x):
        return tnp.where(full, x, tnp.remainder(x, divisor))
    mult = rem(word.type(2 ** (4 * word.itemsize)))
    offset = rem(rem(high) * rem(mult * mult) + rem(low))
    return tnp.add(lo, tnp.astype(offset, dt))


def permutation(key, x, axis=0, independent=False):
    """A random permutation of range(x) (x an int) or of x's slices along `axis` (or of
    each 1-D slice along it on its own, independent=True): JAX's shuffle, stable sorts
    by fresh 32-bit samples (one round up to 1625 elements)."""
    if not isinstance(x, Tracer) and np.ndim(x) == 0:
        if isinstance(x, bool) or np.asarray(x).dtype.kind not in "iu":
            raise ArgumentError(f"permutation: x must be an integer or at least "
                                f"1-dimensional, got {x!r}")
        if int(x) < 0:
            raise ArgumentError(f"permutation: x must be >= 0, got {x}")
        x = tnp.arange(int(x))
    x = value(x, "permutation")
    if shape_of(x) == ():
        raise ShapeError("permutation: x must be an int or an array of rank >= 1")
    axis = normalize_axis("permutation", axis, len(shape_of(x)))
    # the slices' order as JAX shuffles it: the index vector, or x itself if independent
    order, along = (x, axis) if independent else (tnp.arange(shape_of(x)[axis]), 0)
    rounds = math.ceil(3 * math.log(max(1, math.prod(shape_of(order)))) /
                       math.log(2 ** 32 - 1))
    for _ in range(rounds):
        key, sub = split(key)
        sort = tnp.argsort(bits(sub, shape_of(order)), axis=along, stable=True)
        order = tnp.take_along_axis(order, sort, axis=along)
    if independent:
        return order if rounds else tnp.copy(x)     # no round (one element): never x itself
    return tnp.take(x, order, axis=axis)


def shuffle(key, x, axis=0):
    """Deprecated (as in JAX): use permutation(key, x, axis)."""
    warnings.warn("tracer.random.shuffle is deprecated; use permutation", DeprecationWarning,
                  stacklevel=2)
    return permutation(key, x, axis)
