"""tracer.random: JAX's counter-based PRNG (threefry-2x32, 20 rounds) as tracer.numpy ops.

Why ops and not a kernel: a sample is a pure function of (key, element index), written
with uint32 add / xor / shifts, so every sampler is an ordinary traced graph. It jits,
vmaps over keys, runs inside scan/fori_loop bodies, differentiates as a constant, and the
llvm backend fuses the whole hash and the transform to floats into one vectorized loop.

Keys are uint32 arrays of shape (2,). Key derivation and bit layout are JAX's (threefry,
`jax_threefry_partitionable`, its default): element i of a sample is hashed from the
counter pair (0, i), 32-bit samples are the xor of the two output words, 64-bit ones
their concatenation. So `PRNGKey`, `split`, `fold_in`, `uniform`, `bernoulli`, `randint`
and `permutation` give JAX's exact values; `normal` (sqrt(2) * erfinv of a uniform, with
XLA's erfinv polynomials) and `categorical` (Gumbel-max) agree with JAX to rounding.
64-bit seeds are split into two words as JAX does with x64 enabled. Every sampler but
`categorical` (tnp.log) is made of ops that all backends round alike (integer ops, IEEE
+ - * / sqrt; normal's log1p is written with them), so it gives the same bits eagerly,
under jit and on every backend.
"""
import math

import ml_dtypes
import numpy as np

import tracer.numpy as tnp
from ir import dtype_kind
from ir.errors import ArgumentError, DTypeError, ShapeError
from tracer.core import Tracer
from tracer.numpy._base import (broadcast_shapes, dtype_of, normalize_axis, shape as shape_of,
                                value)

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)
_KEY_HELP = "make keys with tracer.random.PRNGKey(seed) or split(key); vmap over key arrays"


# ---- keys ------------------------------------------------------------------------------
def PRNGKey(seed):
    """The key of an integer seed: its bits as (high word, low word), as JAX with x64
    enabled (Python ints are 64-bit; a 32-bit integer's high word is 0)."""
    if isinstance(seed, Tracer):
        return _traced_seed(seed)
    if isinstance(seed, (bool, np.bool_)) or not (
            isinstance(seed, (int, np.integer)) or isinstance(seed, np.ndarray) and
            seed.shape == () and seed.dtype.kind in "iu"):
        raise ArgumentError(f"PRNGKey: seed must be an integer scalar, got {seed!r}")
    width = 32 if isinstance(seed, (np.integer, np.ndarray)) and seed.dtype.itemsize <= 4 \
        else 64
    if not -2 ** 63 <= int(seed) < 2 ** 64:
        raise ArgumentError(f"PRNGKey: seed {seed} does not fit in 64 bits")
    seed = int(seed) % 2 ** width
    return np.array([seed >> 32, seed & 0xFFFFFFFF], U32)


key = PRNGKey


def _traced_seed(seed):
    if seed.shape != () or dtype_kind(seed.dtype) not in "iu":
        raise ArgumentError(f"PRNGKey: seed must be an integer scalar, got a traced "
                            f"{seed.dtype}{list(seed.shape)}")
    high = tnp.right_shift(seed, 32) if seed.dtype.itemsize == 8 else tnp.zeros((), U32)
    return tnp.stack([tnp.astype(high, U32), tnp.astype(seed, U32)])


def _words(key, op):
    """The two uint32 words of a key, or a clear error for anything that is not one."""
    key = value(key, op)
    shp, dt = shape_of(key), dtype_of(key)
    if dt != U32:
        raise DTypeError(f"{op}: a key is a uint32 array of shape (2,), got dtype {dt} "
                         f"({_KEY_HELP})")
    if shp != (2,):
        raise ShapeError(f"{op}: a key is a uint32 array of shape (2,), got shape {shp} "
                         f"({_KEY_HELP})")
    return key[0], key[1]


def _threefry(k1, k2, count):
    """Threefry-2x32 (20 rounds) of the counter pairs (0, count) under key (k1, k2)."""
    ks = (k1, k2, tnp.bitwise_xor(tnp.bitwise_xor(k1, k2), _PARITY))
    x0 = tnp.broadcast_to(ks[0], shape_of(count))
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
    return _threefry(k1, k2, _counters(shape, op))


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
    return tnp.stack(_threefry(k1, k2, tnp.astype(data, U32)))


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
def bits(key, shape=()):
    """Uniform uint32 words (jax.random.bits)."""
    shape = _shape(shape, "bits")
    return tnp.bitwise_xor(*_hash(key, shape, "bits"))


def _unit(key, shape, dt, op, scale=1):
    """Uniform floats in [0, scale) of dtype dt (scale a power of 2), JAX's: the top
    mantissa bits of a sample (of the low 16 bits of the word for float16, the low 8 for
    bfloat16), scaled exactly."""
    w1, w2 = _hash(key, shape, op)
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
    """a * b + c rounded once, as XLA's fused multiply-add gives (JAX's values): narrower
    floats are computed in float64, where the product is exact. float64's is rounded
    twice, as NumPy and the llvm backend do (JAX's may differ in the last bit)."""
    dt = dtype_of(a)
    if dt == np.float64:
        return a * b + c
    a, b, c = (tnp.astype(v, np.float64) for v in (a, b, c))
    return tnp.astype(a * b + c, dt)


def normal(key, shape=(), dtype=np.float32):
    """Standard normal floats: sqrt(2) * erfinv(u), u uniform in (-1, 1) (JAX's method)."""
    shape, dt = _shape(shape, "normal"), _float_dtype(dtype, "normal")
    lo = float(np.nextafter(np.array(-1.0, dt), np.array(0.0, dt)))
    # JAX's uniform(minval=lo, maxval=1): maxval - minval rounds to 2, so u = 2 f + lo
    # with an exact product (and never below lo: JAX's clamp is a no-op)
    u = tnp.add(_unit(key, shape, dt, "normal", scale=2), lo)
    e = _erfinv(tnp.astype(u, np.float64 if dt == np.float64 else np.float32))
    return tnp.multiply(tnp.astype(e, dt), math.sqrt(2))


def bernoulli(key, p=0.5, shape=None):
    """Booleans, True with probability p (uniform < p, in p's float dtype)."""
    p = value(p, "bernoulli")
    dt = dtype_of(p) if dtype_kind(dtype_of(p)) == "f" and not isinstance(p, float) \
        else np.dtype(np.float32)
    shape = shape_of(p) if shape is None else _shape(shape, "bernoulli")
    _check_broadcast("bernoulli", shape, p)
    return tnp.less(uniform(key, shape, dt), tnp.astype(p, dt))


def randint(key, shape, minval, maxval, dtype=np.int32):
    """Integers in [minval, maxval), JAX's: two 32-bit samples combined modulo the span."""
    shape, dt = _shape(shape, "randint"), np.dtype(dtype)
    if dt not in (np.dtype(np.int32), np.dtype(np.uint32)):
        raise DTypeError(f"randint: dtype must be int32 or uint32, got {dt} "
                         f"(draw int32 and cast)")
    lo, hi = value(minval, "randint"), value(maxval, "randint")
    for v in (lo, hi):
        if dtype_kind(dtype_of(v)) not in "iu":
            raise DTypeError(f"randint: minval and maxval must be integers, got {dtype_of(v)}")
    _check_broadcast("randint", shape, lo, hi)
    if not isinstance(lo, Tracer) and not isinstance(hi, Tracer) and np.any(
            np.asarray(hi) <= np.asarray(lo)):
        raise ArgumentError(f"randint: needs minval < maxval, got minval={minval!r}, "
                            f"maxval={maxval!r}")
    info = np.iinfo(dt)
    lo = tnp.astype(tnp.clip(lo, info.min, info.max), dt)
    hi_clipped = tnp.astype(tnp.clip(hi, info.min, info.max), dt)
    k1, k2 = split(key)
    high, low = bits(k1, shape), bits(k2, shape)
    span = tnp.astype(tnp.subtract(hi_clipped, lo), U32)
    span = tnp.where(tnp.less_equal(hi_clipped, lo), np.uint32(1), span)
    # maxval one past the dtype's max: the span is one more than the clipped bounds say
    span = tnp.where(tnp.logical_and(tnp.greater(hi, info.max), tnp.greater(hi_clipped, lo)),
                     span + np.uint32(1), span)
    full = tnp.equal(span, 0)              # the whole 2**32 range: x % 0 is x, as in XLA
    divisor = tnp.where(full, np.uint32(1), span)

    def rem(x):
        return tnp.where(full, x, tnp.remainder(x, divisor))
    mult = rem(np.uint32(2 ** 16))
    offset = rem(rem(high) * rem(mult * mult) + rem(low))
    return tnp.add(lo, tnp.astype(offset, dt))


def categorical(key, logits, axis=-1, shape=None):
    """Indices drawn with probabilities softmax(logits, axis) (the Gumbel-max trick)."""
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
    full = lead + shape[len(lead):][:axis] + shape_of(logits)[axis:axis + 1] + \
        shape[len(lead) + axis:]
    u = uniform(key, full, dt, float(ml_dtypes.finfo(dt).tiny), 1.0)
    gumbel = -tnp.log(-tnp.log(u))
    logits = tnp.reshape(logits, (1,) * len(lead) + shape_of(logits))
    return tnp.argmax(gumbel + logits, axis=len(lead) + axis)


def permutation(key, x, axis=0):
    """A random permutation of range(x) (x an int) or of x's slices along `axis`: JAX's
    shuffle, stable sorts by fresh 32-bit samples (one round up to 1625 elements)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            raise ArgumentError(f"permutation: x must be >= 0, got {x}")
        x = tnp.arange(int(x))
    x = value(x, "permutation")
    if shape_of(x) == ():
        raise ShapeError("permutation: x must be an int or an array of rank >= 1")
    axis = normalize_axis("permutation", axis, len(shape_of(x)))
    n = shape_of(x)[axis]
    index = tnp.arange(n)
    rounds = math.ceil(3 * math.log(max(1, n)) / math.log(2 ** 32 - 1))
    for _ in range(rounds):
        key, sub = split(key)
        index = tnp.take(index, tnp.argsort(bits(sub, (n,)), stable=True))
    return tnp.take(x, index, axis=axis)


# ---- erfinv (XLA's: Giles, "Approximating the erfinv function") -------------------------
_ERFINV32 = ((5.0, 2.5, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                         0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                         1.50140941)),
             (None, 3.0, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                          0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                          2.83297682)))
_ERFINV64 = ((6.25, 3.125, (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)),
    (16.0, 3.25, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (None, 5.0, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)))


def _erfinv(x):
    """erfinv of x in (-1, 1), as XLA: w = -log(1 - x^2) picks a range, whose polynomial
    is in w (the first range) or sqrt(w) (the others), shifted. Each range's polynomial is
    evaluated and the right one selected: XLA's values (it selects the coefficients of one
    Horner chain instead; about as fast here)."""
    dt = dtype_of(x)
    w = -_log1p(-(x * x))
    root, out = tnp.sqrt(w), None
    for j, (bound, shift, coefficients) in reversed(list(enumerate(_ERFINV64 if dt == np.float64
                                                                  else _ERFINV32))):
        p = _horner((w if j == 0 else root) - np.array(shift, dt), coefficients[::-1], dt)
        out = p if out is None else tnp.where(tnp.less(w, np.array(bound, dt)), p, out)
    return out * x


# ---- log1p (musl's, fdlibm's method) in + - * / only ----------------------------------
# Each backend's log1p rounds its own way (the llvm math library's is not libm's), but
# every backend rounds + - * / as IEEE does: so this one gives the same bits everywhere.
# (ln2's hi and lo parts, and the coefficients of R in log(1 + f) = f - f*f/2 +
# s*(f*f/2 + R(s*s)), s = f / (2 + f))
_LOG1P32 = (6.9313812256e-01, 9.0580006145e-06,
            (0.66666662693, 0.40000972152, 0.28498786688, 0.24279078841))
_LOG1P64 = (6.93147180369123816490e-01, 1.90821492927058770002e-10,
            (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
             2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
             1.479819860511658591e-01))


def _log1p(z):
    """log1p(z) for z in (-1, 0] with 1 + z >= 2**-31 (2**-63 in float64). 1 + z is
    m 2**k with m in [sqrt(1/2), sqrt(2)): k and m come from comparisons and exact
    scalings by powers of 2 of 1 + z rounded (no bit casts), and f = m - 1 is exact: z
    itself for k = 0, 2z + 1 for k = -1 (z in [-1/2, -0.29]), and for k < -1, z < -1/2,
    so 1 + z is not rounded and m - 1 is exact (Sterbenz)."""
    dt = dtype_of(z)
    ln2_hi, ln2_lo, lg = _LOG1P64 if dt == np.float64 else _LOG1P32

    def c(v):
        return np.array(v, dt)
    m, k = c(1) + z, tnp.zeros_like(z)
    steps = [(2.0 ** -e, e) for e in ((32,) if dt == np.float64 else ()) + (16, 8, 4, 2, 1)]
    for below, e in steps + [(math.sqrt(0.5), 1)]:
        small = tnp.less(m, c(below))
        m, k = tnp.where(small, m * c(2.0 ** e), m), tnp.where(small, k - c(e), k)
    f = tnp.where(tnp.equal(k, c(0)), z, tnp.where(tnp.equal(k, c(-1)), z * c(2) + c(1),
                                                   m - c(1)))
    s = f / (c(2) + f)
    s2 = s * s
    s4 = s2 * s2
    r = s2 * _horner(s4, lg[0::2], dt) + s4 * _horner(s4, lg[1::2], dt)
    half_f2 = c(0.5) * f * f
    return s * (half_f2 + r) + k * c(ln2_lo) - half_f2 + f + k * c(ln2_hi)


def _horner(x, coefficients, dt):
    """coefficients[0] + x * (coefficients[1] + x * (...))."""
    p = np.array(coefficients[-1], dt)
    for co in coefficients[-2::-1]:
        p = np.array(co, dt) + p * x
    return p
