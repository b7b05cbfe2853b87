"""Shape rules of the built-in kernels, and `infer_avals`, which applies any rule.

Kernels are strict: elementwise kernels take operands of one shape and one dtype
(broadcasting and promotion are explicit nodes inserted by the ops), so each rule here is
a few lines. Errors name the kernel and the offending shapes/dtypes.

The simple elementwise kernels are one table, ELEMENTWISE: a row per kernel gives its
operand count, the dtype kinds it takes, its output dtype and whether it is
differentiable, as JAX's lax.py declares a primitive in one line. Its shape rule is
derived here and its family and differentiability in registry.families; the kernel's
backend impls and gradient are registered by their own packages.

Sizes are computed exactly, in Python ints (int64 products wrap: a reshape to
(2**62 + 1, 4) would pass as 4 elements), and every result must be an array NumPy could
allocate, which is also what keeps the llvm backend's i64 offsets and strides exact.
"""
import math
import operator
import sys
from typing import NamedTuple

import numpy as np

from ir import graph as _graph
from ir.errors import DTypeError, KernelError, ShapeError, ShapeMismatchError, TracerError
from ir.types import ShapedArray, check_dtype
from ir.types import dtype_kind
from registry.tables import get_shape_rule, register_shape_rule

BOOL = np.dtype(bool)
INDEX = np.dtype(np.int64)


class Elementwise(NamedTuple):
    """A built-in elementwise kernel: `arity` operands of one shape and dtype, whose dtype
    kind must be in `kinds` ("" takes any dtype); the output has dtype `out` (None: the
    operands'); `differentiable=False`: its outputs carry no gradient."""
    name: str
    arity: int
    kinds: str = ""
    out: np.dtype = None
    differentiable: bool = True


FLOATS, INTS, INTS_OR_BOOL = "f", "iu", "iub"
ELEMENTWISE = (
    Elementwise("neg", 1), Elementwise("exp", 1, FLOATS), Elementwise("log", 1, FLOATS),
    Elementwise("log1p", 1, FLOATS), Elementwise("expm1", 1, FLOATS),
    Elementwise("sqrt", 1, FLOATS), Elementwise("sin", 1, FLOATS),
    Elementwise("cos", 1, FLOATS), Elementwise("tanh", 1, FLOATS),
    Elementwise("erf", 1, FLOATS), Elementwise("abs", 1),
    Elementwise("sign", 1, differentiable=False),
    *(Elementwise(k, 1, FLOATS, differentiable=False)   # flat almost everywhere (as JAX)
      for k in ("floor", "ceil", "trunc", "rint")),
    Elementwise("signbit", 1, FLOATS, BOOL), Elementwise("not", 1, INTS_OR_BOOL),
    Elementwise("atan", 1, FLOATS),
    Elementwise("add", 2), Elementwise("sub", 2), Elementwise("mul", 2),
    Elementwise("div", 2), Elementwise("pow", 2), Elementwise("max", 2),
    Elementwise("min", 2), Elementwise("fmod", 2, FLOATS),
    Elementwise("and", 2, INTS_OR_BOOL), Elementwise("or", 2, INTS_OR_BOOL),
    Elementwise("xor", 2, INTS_OR_BOOL), Elementwise("shl", 2, INTS),
    Elementwise("shr", 2, INTS),
    *(Elementwise(k, 2, out=BOOL, differentiable=False)
      for k in ("gt", "ge", "lt", "le", "eq", "ne")),
)
UNARY = tuple(r.name for r in ELEMENTWISE if r.arity == 1)
BINARY = tuple(r.name for r in ELEMENTWISE if r.arity == 2 and r.out != BOOL)
COMPARE = tuple(r.name for r in ELEMENTWISE if r.arity == 2 and r.out == BOOL)
REDUCE = ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")
ARG_REDUCE = ("argmax", "argmin")
MAX_BYTES = sys.maxsize     # NumPy's bound (npy_intp) on the bytes one array spans


def apply_shape_rule(kernel, avals, attrs):
    """Apply kernel's shape rule. Returns (tuple of ShapedArray, whether the rule
    returned a tuple, i.e. the kernel has a tuple of outputs)."""
    rule = get_shape_rule(kernel)
    try:
        out = rule(*avals, **attrs)
    except TracerError:
        raise
    except Exception as e:
        raise KernelError(f"shape rule of {kernel!r} failed on inputs "
                          f"({', '.join(map(str, avals))}) with attrs {attrs}: "
                          f"{type(e).__name__}: {e}") from e
    multi = isinstance(out, (tuple, list))
    try:
        outs = tuple(ShapedArray(o.shape, o.dtype) for o in (out if multi else (out,)))
    except (AttributeError, TypeError, ValueError):
        raise KernelError(f"shape rule of {kernel!r} must return objects with .shape (a tuple "
                          f"of ints) and .dtype, or a tuple of them; got {out!r}") from None
    for o, raw in zip(outs, out if multi else (out,)):
        check_dtype(o.dtype, f"shape rule of {kernel!r}")
        if tuple(raw.shape) != o.shape and not _all_ints(raw.shape) or any(d < 0 for d in o.shape):
            raise KernelError(f"shape rule of {kernel!r} returned a negative "
                              f"dimension or a non-int: {tuple(raw.shape)}")
        _check_addressable(kernel, avals, o)
    return outs, multi


def _all_ints(dims):
    try:
        return all(operator.index(d) == d for d in dims)
    except TypeError:
        return False


def _check_addressable(kernel, avals, out):
    """Like NumPy, the non-zero dimensions times the item size must fit MAX_BYTES (even
    for an empty result: its other dimensions still become strides and loop bounds)."""
    nbytes = (math.prod(out.shape) or math.prod(d for d in out.shape if d)) * out.dtype.itemsize
    if nbytes > MAX_BYTES:
        raise ShapeError(f"{kernel}: result shape {out.shape} of {out.dtype} is too large for "
                         f"one array (over {MAX_BYTES} bytes); input shapes "
                         f"{', '.join(str(a.shape) for a in avals)}")


def infer_avals(kernel, avals, attrs):
    """Output avals of `kernel` applied to `avals`, always as a tuple."""
    return apply_shape_rule(kernel, avals, attrs)[0]


_graph.default_infer = infer_avals


def _same(kernel, *avals):
    a = avals[0]
    for b in avals[1:]:
        if b.shape != a.shape:
            raise ShapeError(f"{kernel}: operand shapes {[x.shape for x in avals]} differ "
                             f"(kernels do not broadcast; use broadcast_to first)")
        if b.dtype != a.dtype:
            raise DTypeError(f"{kernel}: operand dtypes {[str(x.dtype) for x in avals]} "
                             f"differ (convert first)")
    return a


def _elementwise(row):
    """The shape rule of an ELEMENTWISE row."""
    name, arity, kinds, out = row.name, row.arity, row.kinds, row.out
    what = {FLOATS: "float", INTS: "integer", INTS_OR_BOOL: "integer or bool"}.get(kinds)
    needs = f"a {what} operand" if arity == 1 and kinds == FLOATS else f"{what} operands"

    def rule(*operands):
        if len(operands) != arity:
            raise KernelError(f"{name}: takes {arity} operand(s), got {len(operands)}")
        a = _same(name, *operands)
        if kinds and dtype_kind(a.dtype) not in kinds:
            raise DTypeError(f"{name}: needs {needs}, got {a.dtype}")
        return ShapedArray(a.shape, out or a.dtype)
    return rule


def _check_axes(kernel, ndim, axes):
    if len(set(axes)) != len(axes) or any(not 0 <= a < ndim for a in axes):
        raise ShapeError(f"{kernel}: axes {axes} invalid for rank {ndim} "
                         f"(kernels take sorted, non-negative, distinct axes)")


def _reduce(kernel):
    def rule(x, *, axes):
        _check_axes(kernel, x.ndim, axes)
        if kernel in ("reduce_max", "reduce_min") and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{kernel}: reducing over an empty axis of shape {x.shape} "
                             f"has no identity; pass a non-empty array")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def _arg_reduce(kernel):
    def rule(x, *, axis):
        _check_axes(kernel, x.ndim, (axis,))
        if x.shape[axis] == 0:
            raise ShapeError(f"{kernel}: attempt to get {kernel} of an empty sequence "
                             f"(axis {axis} of shape {x.shape})")
        return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], INDEX)
    return rule


def _select(c, x, y):
    if c.dtype != BOOL:
        raise DTypeError(f"select: condition must be bool, got {c.dtype}")
    if c.shape != x.shape:
        raise ShapeError(f"select: condition shape {c.shape} differs from {x.shape}")
    a = _same("select", x, y)
    return ShapedArray(a.shape, a.dtype)


def _convert(x, *, dtype):
    return ShapedArray(x.shape, check_dtype(dtype, "convert"))


def _ints(kernel, name, values):
    """An int-tuple attr as Python ints (NumPy ints would wrap in the arithmetic)."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ShapeError(f"{kernel}: {name} {tuple(values)} must be ints") from None


def _check_shape(kernel, shape):
    if not _all_ints(shape) or any(d < 0 for d in shape):
        raise ShapeError(f"{kernel}: invalid target shape {tuple(shape)} (a negative "
                         f"dimension or a non-int)")
    return tuple(map(operator.index, shape))


def _broadcast_to(x, *, shape):
    shape = _check_shape("broadcast_to", shape)
    if len(shape) < x.ndim or any(d != 1 and d != s for d, s in
                                  zip(x.shape[::-1], shape[::-1])):
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to {tuple(shape)}")
    return ShapedArray(shape, x.dtype)


def _reshape(x, *, shape):
    shape = _check_shape("reshape", shape)
    if math.prod(shape) != x.size:
        raise ShapeMismatchError(f"reshape: cannot reshape {x.shape} ({x.size} elements) to "
                         f"{tuple(shape)}")
    return ShapedArray(shape, x.dtype)


def _transpose(x, *, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeMismatchError(f"transpose: perm {perm} is not a permutation of {x.ndim} axes")
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype)


def _slice(x, *, start, limit, step):
    if not len(start) == len(limit) == len(step) == x.ndim:
        raise ShapeError(f"slice: start/limit/step need {x.ndim} entries each")
    start, limit, step = (_ints("slice", n, v) for n, v in
                          (("start", start), ("limit", limit), ("step", step)))
    out = []
    for d, s, e, k in zip(x.shape, start, limit, step):
        if not (k > 0 and 0 <= s <= e <= d):
            raise ShapeError(f"slice: bad bounds start={start} limit={limit} step={step} "
                             f"for shape {x.shape}")
        out.append(max(0, -(-(e - s) // k)))
    return ShapedArray(tuple(out), x.dtype)


def _rev(x, *, axes):
    _check_axes("rev", x.ndim, axes)
    return ShapedArray(x.shape, x.dtype)


def _pad(x, *, lo, hi, interior):
    lo, hi, interior = (_ints("pad", n, v) for n, v in
                        (("lo", lo), ("hi", hi), ("interior", interior)))
    if not len(lo) == len(hi) == len(interior) == x.ndim or min(lo + hi + interior, default=0) < 0:
        raise ShapeError(f"pad: need {x.ndim} non-negative lo/hi/interior entries")
    return ShapedArray(tuple(l + h + d + max(d - 1, 0) * i
                             for d, l, h, i in zip(x.shape, lo, hi, interior)), x.dtype)


def _concatenate(*xs, axis):
    if not xs:
        raise ShapeError("concatenate: needs at least one operand")
    r = xs[0]
    for x in xs:
        if x.ndim != r.ndim or (x.shape[:axis] + x.shape[axis + 1:]
                                != r.shape[:axis] + r.shape[axis + 1:]):
            raise ShapeMismatchError(f"concatenate: shapes {[x.shape for x in xs]} differ off "
                                     f"axis {axis}")
        if x.dtype != r.dtype:
            raise DTypeError(f"concatenate: dtypes {[str(x.dtype) for x in xs]} differ")
    _check_axes("concatenate", r.ndim, (axis,))
    size = sum(x.shape[axis] for x in xs)
    return ShapedArray(r.shape[:axis] + (size,) + r.shape[axis + 1:], r.dtype)


def _check_index(kernel, idx):
    if dtype_kind(idx.dtype) not in "iu":
        raise DTypeError(f"{kernel}: indices must be integers, got {idx.dtype}")


def _take(x, idx, *, axis):
    _check_index("take", idx)
    _check_axes("take", x.ndim, (axis,))
    return ShapedArray(x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype)


def _scatter_add(upd, idx, *, axis, size):
    """Inverse of take: out[..., idx[j], ...] += upd[..., j, ...] along `axis`."""
    _check_index("scatter_add", idx)
    (size,) = _ints("scatter_add", "size", (size,))
    if size < 0:
        raise ShapeError(f"scatter_add: size {size} must be non-negative")
    if upd.shape[axis:axis + idx.ndim] != idx.shape:
        raise ShapeError(f"scatter_add: updates {upd.shape} do not match indices "
                         f"{idx.shape} at axis {axis}")
    return ShapedArray(upd.shape[:axis] + (size,) + upd.shape[axis + idx.ndim:], upd.dtype)


def _matmul(a, b):
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} do not match "
                         f"(kernel wants (..., m, k) @ (..., k, n) with equal batch dims)")
    if a.dtype != b.dtype:
        raise DTypeError(f"matmul: dtypes {a.dtype} and {b.dtype} differ")
    return ShapedArray(a.shape[:-1] + b.shape[-1:], a.dtype)


def _along_axis(kernel):
    """cumsum/cumprod keep shape and dtype; argsort gives int64 indices of the same shape."""
    def rule(x, *, axis):
        _check_axes(kernel, x.ndim, (axis,))
        return ShapedArray(x.shape, INDEX if kernel == "argsort" else x.dtype)
    return rule


ALONG_AXIS = ("cumsum", "cumprod", "argsort")


def _register_builtins():
    """Register every built-in rule; returns the built-in kernel names."""
    for row in ELEMENTWISE:
        register_shape_rule(row.name, _elementwise(row))
    for k in REDUCE:
        register_shape_rule(k, _reduce(k))
    for k in ARG_REDUCE:
        register_shape_rule(k, _arg_reduce(k))
    for name, rule in [("select", _select), ("convert", _convert),
                       ("broadcast_to", _broadcast_to), ("reshape", _reshape),
                       ("transpose", _transpose), ("slice", _slice), ("rev", _rev),
                       ("pad", _pad), ("concatenate", _concatenate), ("take", _take),
                       ("scatter_add", _scatter_add), ("matmul", _matmul)]:
        register_shape_rule(name, rule)
    for k in ALONG_AXIS:
        register_shape_rule(k, _along_axis(k))
    return UNARY + BINARY + COMPARE + REDUCE + ARG_REDUCE + ALONG_AXIS + (
        "select", "convert", "broadcast_to", "reshape", "transpose", "slice", "rev", "pad",
        "concatenate", "take", "scatter_add", "matmul")


BUILTIN_KERNELS = _register_builtins()
