"""The `numpy` backend: one NumPy implementation per built-in kernel.

Each impl is `impl(*inputs, **attrs)` on NumPy arrays and returns exactly the shape and
dtype the kernel's shape rule promises (the ops have already broadcast and promoted).
float16/bfloat16 elementwise kernels are NumPy's / ml_dtypes' own ufuncs (computed in
float32, rounded once); sums, products and matmul of them accumulate in float32 and
round once at the end, as NumPy's float16 sum and JAX do, and scans (sequential) in
float64 (ml_dtypes' bfloat16 matmul returns float32, and its reductions would round at
every step). float -> int conversion saturates, as JAX's does (`convert`).
"""
import math

import numpy as np

from ir.errors import OutOfBoundsError
from ir.types import BFLOAT16, dtype_kind
from registry import register_kernel

UNARY = {"neg": np.negative, "exp": np.exp, "log": np.log, "log1p": np.log1p,
         "expm1": np.expm1, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
         "abs": np.abs, "sign": np.sign}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
          "pow": np.power, "max": np.maximum, "min": np.minimum, "gt": np.greater,
          "ge": np.greater_equal, "lt": np.less, "le": np.less_equal, "eq": np.equal,
          "ne": np.not_equal}
_erf = np.frompyfunc(math.erf, 1, 1)
HALF = (np.dtype(np.float16), BFLOAT16)
FLOAT32, FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def _widened(fn, wide=FLOAT32):
    """fn on float16/bfloat16 operands computed in float32 (or `wide`), a float result
    rounded back through float32, as the llvm kernels round. float32 holds them exactly,
    so orders and argmax/argsort are the same (NumPy's argsort of bfloat16 does not sort
    NaN last but leaves such arrays unsorted, and its float16 maximum of 0.0 and -0.0
    picks the other zero than its float32 one and the llvm kernel do)."""
    def impl(x, *ys, **attrs):
        dt = getattr(x, "dtype", None)      # a graph literal may be a Python scalar
        if dt not in HALF:
            return fn(x, *ys, **attrs)
        out = np.asarray(fn(np.asarray(x, wide), *[np.asarray(y, wide) for y in ys], **attrs))
        return np.asarray(out, FLOAT32).astype(dt) if out.dtype == wide else out
    return impl


def _matmul(a, b, *, transpose_a=False, transpose_b=False):
    """np.matmul, reading an operand transposed (its last two axes swapped) when the llvm
    rewrites (lowering/llvm/rewrites.py) fold a transpose into the node: a loop body they
    rewrote still runs here when its loop is a Python step of a compiled program."""
    return np.matmul(np.swapaxes(a, -1, -2) if transpose_a else a,
                     np.swapaxes(b, -1, -2) if transpose_b else b)


def erf(x):
    """NumPy has no erf; math.erf per element is exact to the last ulp (and slow)."""
    return _erf(x).astype(x.dtype) if np.ndim(x) else x.dtype.type(math.erf(x))


def div(x, y):
    """True division of floats; floor division (`//`) of integers, where NumPy's x // 0 == 0
    and INT_MIN // -1 == INT_MIN are results, not warnings (the llvm kernel agrees)."""
    if dtype_kind(x.dtype) == "f":
        return np.divide(x, y)
    with np.errstate(divide="ignore", over="ignore"):
        return np.floor_divide(x, y)


def convert(x, *, dtype):
    """astype, except that float -> int truncates and saturates as JAX on CPU does: NaN
    gives 0, values beyond the integer range its minimum or maximum. (NumPy's answer there
    depends on the CPU, on contiguity and on the loop taken; the llvm kernel gives this.)"""
    x, dtype = np.asarray(x), np.dtype(dtype)
    if dtype_kind(x.dtype) != "f" or dtype.kind not in "iu":
        return x.astype(dtype)
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        out = np.asarray(x.astype(dtype))
    out[x >= np.float64(info.max + 1)] = info.max     # the bounds are powers of 2: exact
    out[x < np.float64(info.min)] = info.min
    out[x != x] = 0
    return out


def _quiet(fn, *xs):
    """fn without NumPy's invalid-value warnings (fmod(x, 0) is NaN, as in the llvm kernel)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return fn(*xs)


REDUCE = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min,
          "reduce_prod": np.prod}


def _reduction(fn):
    def impl(x, *, axes):
        x = np.asarray(x)       # a graph literal may be a Python scalar
        return fn(x, axis=axes) if fn in (np.max, np.min) else fn(x, axis=axes, dtype=x.dtype)
    return impl


def _arg_reduction(fn):
    return lambda x, *, axis: fn(x, axis=axis).astype(np.int64)


def slice_(x, *, start, limit, step):
    return x[tuple(slice(s, e, k) for s, e, k in zip(start, limit, step))]


def pad(x, *, lo, hi, interior):
    shape = tuple(l + h + d + max(d - 1, 0) * i for d, l, h, i in zip(x.shape, lo, hi, interior))
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(l, l + d + max(d - 1, 0) * i, i + 1)
              for d, l, i in zip(x.shape, lo, interior))] = x
    return out


def check_bounds(kernel, idx, axis, size):
    """Indices must be in [0, size): ops count negative ones in bounds from the end before
    the kernel runs, and leave the others as the user wrote them for this message."""
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise OutOfBoundsError(f"{kernel}: index {bad.flat[0]} is out of bounds for axis "
                               f"{axis} of size {size}")


def take(x, idx, *, axis):
    check_bounds("take", idx, axis, x.shape[axis])
    return x[(slice(None),) * axis + (idx,)]    # np.take would copy a strided x whole


def scatter_add(upd, idx, *, axis, size):
    check_bounds("scatter_add", idx, axis, size)
    shape = upd.shape[:axis] + (size,) + upd.shape[axis + idx.ndim:]
    out = np.zeros(shape, upd.dtype)
    np.add.at(out, (slice(None),) * axis + (idx,), upd)
    return out


def scatter(x, upd, idx, *, how):
    """x with each update combined into its row of x in index order; "set" keeps the
    last write of a repeated index."""
    check_bounds("scatter", idx, 0, x.shape[0])
    out = np.array(x)
    if how != "set":
        BINARY[how].at(out, idx, upd)
        return out
    flat = idx.reshape(-1)
    last = flat.size - 1 - np.unique(flat[::-1], return_index=True)[1]  # each row's last write
    out[flat[last]] = upd.reshape(flat.shape + x.shape[1:])[last]
    return out


IMPLS = {
    **{k: f for k, f in UNARY.items()},
    **{k: _widened(f) if k in ("max", "min") else f for k, f in BINARY.items()},
    **{k: _widened(_reduction(f)) for k, f in REDUCE.items()},
    "erf": erf,
    "div": div,
    "argmax": _widened(_arg_reduction(np.argmax)),
    "argmin": _widened(_arg_reduction(np.argmin)),
    "select": np.where,
    "convert": convert,
    "broadcast_to": lambda x, *, shape: np.broadcast_to(x, shape),
    "reshape": lambda x, *, shape: np.reshape(x, shape),
    "transpose": lambda x, *, perm: np.transpose(x, perm),
    "slice": slice_,
    "rev": lambda x, *, axes: np.flip(x, axes),
    "pad": pad,
    "concatenate": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "take": take,
    "scatter_add": scatter_add,
    "scatter": scatter,
    "matmul": _widened(_matmul),
    "atan": np.arctan, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
    "signbit": np.signbit, "not": np.invert, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "shl": np.left_shift, "shr": np.right_shift,
    "fmod": lambda x, y: _quiet(np.fmod, x, y),
    "stop_gradient": lambda x: np.array(x),
    "checkpoint_name": lambda x, *, name: np.array(x),
    "bitcast": lambda x, *, dtype: np.array(x).view(dtype),
}

for _name, _impl in IMPLS.items():
    register_kernel(_name, "numpy", _impl)

# ---- scans and sorting (argsort is stable; NaN sorts last, as in NumPy) ----------------
SCANS = {     # sequential: float16/bfloat16 in float64 (float32 stalls past 2**24 steps)
    "cumsum": _widened(lambda x, *, axis: np.cumsum(x, axis=axis, dtype=x.dtype), FLOAT64),
    "cumprod": _widened(lambda x, *, axis: np.cumprod(x, axis=axis, dtype=x.dtype), FLOAT64),
    "argsort": _widened(lambda x, *, axis: np.argsort(x, axis=axis, kind="stable")
                       .astype(np.int64)),
}
for _name, _impl in SCANS.items():
    register_kernel(_name, "numpy", _impl)
