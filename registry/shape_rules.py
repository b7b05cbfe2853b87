"""`infer_avals`, which applies a kernel's shape rule, and the checks shape rules share.

Kernels are strict: elementwise kernels take operands of one shape and one dtype
(broadcasting and promotion are explicit nodes inserted by the ops), so each rule is a few
lines calling the checks here. Errors name the kernel and the offending shapes/dtypes.
The built-in kernels' rules are declared with the rest of their facts in tracer.kernels.

Sizes are computed exactly, in Python ints (int64 products wrap: a reshape to
(2**62 + 1, 4) would pass as 4 elements), and every result must be an array NumPy could
allocate, which is also what keeps the llvm backend's i64 offsets and strides exact.
"""
import math
import operator
import sys

import numpy as np

from ir import graph as _graph
from ir.errors import DTypeError, KernelError, ShapeError, TracerError
from ir.types import ShapedArray, check_dtype
from ir.types import dtype_kind
from registry.tables import get_shape_rule

BOOL = np.dtype(bool)
INDEX = np.dtype(np.int64)
MAX_BYTES = sys.maxsize     # NumPy's bound (npy_intp) on the bytes one array spans


def apply_shape_rule(kernel, avals, attrs):
    """Apply kernel's shape rule. Returns (tuple of ShapedArray, whether the rule
    returned a tuple, i.e. the kernel has a tuple of outputs). A rule marked `operands_only`
    is applied once per tuple of avals (without attrs): tracing applies rules to every
    node, and an elementwise chain's nodes repeat a few (~5 us of ~20 a node)."""
    rule = get_shape_rule(kernel)
    known = None if attrs else getattr(rule, "known", None)
    if known is not None:
        key = tuple(avals)
        found = known.get(key)
        if found is not None:
            return found
    try:
        out = rule(*avals, **attrs)
    except TracerError:
        raise
    except Exception as e:
        raise KernelError(f"shape rule of {kernel!r} failed on inputs "
                          f"({', '.join(map(str, avals))}) with attrs {attrs}: "
                          f"{type(e).__name__}: {e}") from e
    multi = isinstance(out, (tuple, list))
    outs = tuple([_checked(kernel, avals, raw, out) for raw in (out if multi else (out,))])
    if known is not None:
        if len(known) >= KNOWN:
            known.clear()
        known[key] = outs, multi
    return outs, multi


KNOWN = 1024    # avals tuples an operands_only rule remembers (then it starts afresh)


def operands_only(rule):
    """Mark shape rule `rule` as a function of its operands' avals alone (no attrs, no
    state): apply_shape_rule then remembers its checked results (`rule.known`)."""
    rule.known = {}
    return rule


def _checked(kernel, avals, raw, out):
    """The strong aval of one output `raw` of kernel's rule (which returned `out`), checked.
    A ShapedArray (what every built-in rule returns) already has a tuple of ints."""
    if type(raw) is ShapedArray:
        o = raw.strip_weak()
    else:
        try:
            o = ShapedArray(raw.shape, raw.dtype)
        except (AttributeError, TypeError, ValueError):
            raise KernelError(f"shape rule of {kernel!r} must return objects with .shape (a "
                              f"tuple of ints) and .dtype, or a tuple of them; got {out!r}") \
                from None
    check_dtype(o.dtype, f"shape rule of {kernel!r}")
    if tuple(raw.shape) != o.shape and not _all_ints(raw.shape) or min(o.shape, default=0) < 0:
        raise KernelError(f"shape rule of {kernel!r} returned a negative "
                          f"dimension or a non-int: {tuple(raw.shape)}")
    _check_addressable(kernel, avals, o)
    return o


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


def same(kernel, *avals):
    """The common aval of operands that must have one shape and one dtype."""
    a = avals[0]
    for b in avals[1:]:
        if b.shape != a.shape:
            raise ShapeError(f"{kernel}: operand shapes {[x.shape for x in avals]} differ "
                             f"(kernels do not broadcast; use broadcast_to first)")
        if b.dtype != a.dtype:
            raise DTypeError(f"{kernel}: operand dtypes {[str(x.dtype) for x in avals]} "
                             f"differ (convert first)")
    return a


def check_axes(kernel, ndim, axes):
    if len(set(axes)) != len(axes) or any(not 0 <= a < ndim for a in axes):
        raise ShapeError(f"{kernel}: axes {axes} invalid for rank {ndim} "
                         f"(kernels take sorted, non-negative, distinct axes)")


def int_attrs(kernel, name, values):
    """An int-tuple attr as Python ints (NumPy ints would wrap in the arithmetic)."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ShapeError(f"{kernel}: {name} {tuple(values)} must be ints") from None


def check_shape(kernel, shape):
    """A target-shape attr as Python ints, each non-negative."""
    if not _all_ints(shape) or any(d < 0 for d in shape):
        raise ShapeError(f"{kernel}: invalid target shape {tuple(shape)} (a negative "
                         f"dimension or a non-int)")
    return tuple(map(operator.index, shape))


def check_index(kernel, idx):
    if dtype_kind(idx.dtype) not in "iu":
        raise DTypeError(f"{kernel}: indices must be integers, got {idx.dtype}")
