"""The elementwise kernels: one row each, as JAX's lax.py declares a primitive in a line.

A row gives the operand count, the dtype kinds the kernel takes ("" any), its output dtype
(None: the operands') and its gradient `grad_fn(dy, inputs, outputs, attrs)`, written
with traceable ops; a row with no gradient is declared not differentiable (its outputs
carry no gradient). Every row's kernel is in the "elementwise" family, so vmap batches it
with the family's shared rule and the llvm backend fuses it.

Because broadcasting is explicit in the graph, elementwise gradients never un-broadcast.
Kinks follow JAX: abs'(0)=1, max/min split ties evenly, sqrt'(0)=inf, floor and its kin
are flat, and where() routes the cotangent to the branch taken (see `_select`).
"""
import math
from typing import Callable, NamedTuple

import numpy as np

from ir.errors import DTypeError, KernelError, ShapeError
from ir.types import ShapedArray, check_dtype, dtype_kind
from registry import declare_kernel
from registry.shape_rules import BOOL, operands_only, same
from tracer import numpy as tnp
from tracer.core import run_kernel


class Elementwise(NamedTuple):
    """An elementwise kernel: `arity` operands of one shape and dtype, whose dtype kind
    is in `kinds` ("" takes any dtype); the output has dtype `out` (None: the operands');
    `gradient` None: not differentiable."""
    name: str
    arity: int
    kinds: str
    out: np.dtype
    gradient: Callable


def _share(a, b):
    """a's share of max(a, b)'s cotangent, balanced as in JAX: 1 where a > b, 1/2 on
    ties, else 0 (min(a, b) gives b the same share)."""
    one, half, zero = (np.array(v, a.dtype) for v in (1.0, 0.5, 0.0))
    return tnp.where(a > b, one, tnp.where(a == b, half, zero))


def _pow(dy, inputs, out, attrs):
    """y x^(y-1) and log(x) x^y, each 0 where it would be 0 * inf at x == 0; only x == 0
    is guarded, so at y == 0 elsewhere d/dy of y x^(y-1) is x^-1 (jax's), not 0."""
    x, y = inputs
    zero_x = x == 0
    both = tnp.logical_and(zero_x, y == 0)
    dx = tnp.where(both, 0, y * tnp.where(both, 1, x) ** (y - 1))
    return dy * dx, dy * tnp.log(tnp.where(zero_x, 1, x)) * out


def _none(dy, inputs, out, attrs):
    """Integer or bool outputs (bitwise kernels, signbit) are never differentiated."""
    return (None,) * len(inputs)


FLOATS, INTS, INTS_OR_BOOL = "f", "iu", "iub"
_G = {   # name: (arity, kinds, out dtype, gradient)
    "neg": (1, "", None, lambda dy, i, o, a: (-dy,)),
    "exp": (1, FLOATS, None, lambda dy, i, o, a: (dy * o,)),
    "log": (1, FLOATS, None, lambda dy, i, o, a: (dy / i[0],)),
    "log1p": (1, FLOATS, None, lambda dy, i, o, a: (dy / (1 + i[0]),)),
    "expm1": (1, FLOATS, None, lambda dy, i, o, a: (dy * (o + 1),)),
    "sqrt": (1, FLOATS, None, lambda dy, i, o, a: (dy / (2 * o),)),
    "sin": (1, FLOATS, None, lambda dy, i, o, a: (dy * tnp.cos(i[0]),)),
    "cos": (1, FLOATS, None, lambda dy, i, o, a: (-dy * tnp.sin(i[0]),)),
    "tanh": (1, FLOATS, None, lambda dy, i, o, a: (dy * (1 - o * o),)),
    "erf": (1, FLOATS, None, lambda dy, i, o, a: (
        dy * (2 / math.sqrt(math.pi)) * tnp.exp(-i[0] * i[0]),)),
    "abs": (1, "", None, lambda dy, i, o, a: (tnp.where(i[0] >= 0, dy, -dy),)),
    "sign": (1, "", None, None),
    **{k: (1, FLOATS, None, None) for k in ("floor", "ceil", "trunc", "rint")},
    "signbit": (1, FLOATS, BOOL, _none),
    "not": (1, INTS_OR_BOOL, None, _none),
    "atan": (1, FLOATS, None, lambda dy, i, o, a: (dy / (1 + i[0] * i[0]),)),
    "add": (2, "", None, lambda dy, i, o, a: (dy, dy)),
    "sub": (2, "", None, lambda dy, i, o, a: (dy, -dy)),
    "mul": (2, "", None, lambda dy, i, o, a: (dy * i[1], dy * i[0])),
    "div": (2, "", None, lambda dy, i, o, a: (dy / i[1], -dy * o / i[1])),
    "pow": (2, "", None, _pow),
    "max": (2, "", None, lambda dy, i, o, a: (dy * _share(i[0], i[1]),
                                              dy * _share(i[1], i[0]))),
    "min": (2, "", None, lambda dy, i, o, a: (dy * _share(i[1], i[0]),
                                              dy * _share(i[0], i[1]))),
    # fmod(x, y) = x - trunc(x / y) * y, where (x - fmod) / y is that integer (rint: exact)
    "fmod": (2, FLOATS, None, lambda dy, i, o, a: (
        dy, -dy * run_kernel("rint", [(i[0] - o) / i[1]]))),
    **{k: (2, INTS_OR_BOOL, None, _none) for k in ("and", "or", "xor")},
    **{k: (2, INTS, None, _none) for k in ("shl", "shr")},
    **{k: (2, "", BOOL, None) for k in ("gt", "ge", "lt", "le", "eq", "ne")},
}
ELEMENTWISE = tuple(Elementwise(name, *row) for name, row in _G.items())


def shape_rule(row):
    """The shape rule of a row."""
    name, arity, kinds, out = row.name, row.arity, row.kinds, row.out
    what = {FLOATS: "float", INTS: "integer", INTS_OR_BOOL: "integer or bool"}.get(kinds)
    needs = f"a {what} operand" if arity == 1 and kinds == FLOATS else f"{what} operands"

    @operands_only
    def rule(*operands):
        if len(operands) != arity:
            raise KernelError(f"{name}: takes {arity} operand(s), got {len(operands)}")
        a = same(name, *operands)
        if kinds and dtype_kind(a.dtype) not in kinds:
            raise DTypeError(f"{name}: needs {needs}, got {a.dtype}")
        return ShapedArray(a.shape, out or a.dtype)
    return rule


@operands_only
def _select_rule(c, x, y):
    if c.dtype != BOOL:
        raise DTypeError(f"select: condition must be bool, got {c.dtype}")
    if c.shape != x.shape:
        raise ShapeError(f"select: condition shape {c.shape} differs from {x.shape}")
    a = same("select", x, y)
    return ShapedArray(a.shape, a.dtype)


def _select(dy, inputs, out, attrs):
    """Route the cotangent to the branch that was taken; the other branch gets exact
    zeros. Zeros alone cannot stop a NaN: the chain rule multiplies them by the untaken
    branch's local derivatives (sqrt'(x < 0) is nan, (inf * x)' is inf, and 0 * inf is
    nan). autodiff.backward therefore also gives each branch's cotangent a zero mask
    (~cond for on_true, cond for on_false) and re-zeroes gradients under it through the
    elementwise kernels that follow, so where(x > 0, sqrt(x), 0) has gradient 0 at x < 0
    (JAX: nan) and where(x > 0, x, inf * x) has gradient 1 at x > 0. See autodiff's
    docstring for the exact guarantee."""
    c, _, _ = inputs
    return None, tnp.where(c, dy, 0), tnp.where(c, 0, dy)


for _row in ELEMENTWISE:
    declare_kernel(_row.name, shape=shape_rule(_row), family="elementwise",
                   gradient=_row.gradient, differentiable=_row.gradient is not None)
declare_kernel("select", shape=_select_rule, family="elementwise", gradient=_select)


def _convert_rule(x, *, dtype):
    return ShapedArray(x.shape, check_dtype(dtype, "convert"))


def _convert(dy, inputs, out, attrs):
    """A float input gets the cotangent in its own dtype; an int or bool one none."""
    x, = inputs
    return (tnp.astype(dy, x.dtype) if dtype_kind(x.dtype) == "f" else None,)


declare_kernel("convert", shape=_convert_rule, family="elementwise", gradient=_convert)
