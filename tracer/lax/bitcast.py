"""`bitcast_convert_type` (jax.lax's) and NumPy's `x.view(dtype)`: an array's bits read
as another dtype.

Why a kernel: the exponent and mantissa of a float are integer fields, and reading them
with integer ops is what lets `tracer.random` compute log and log1p from + - * / alone
(bit-identical on every backend) without a ladder of comparisons. The kernel `bitcast`
is elementwise (equal item sizes: shape unchanged), so it fuses on the llvm backend and
vmaps by the shared rule; a different item size adds or removes a trailing axis, as in
JAX, by splitting or joining unsigned words with shifts around it. Its output carries no
gradient (JAX's is zero, float to float included). Bool converts only to bool, as in JAX.
On the llvm backend float16/bfloat16 live in float32 registers, so a signaling NaN of
those comes back quiet (its payload otherwise kept); float32/float64 keep every bit.
"""
import numpy as np

import registry
from ir import ShapedArray
from ir.errors import DTypeError, ShapeError
from ir.types import check_dtype
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.numpy._base import value

_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
             8: np.dtype(np.uint64)}


def _check_bool(op, old, new):
    if (old == bool) != (new == bool):
        raise DTypeError(f"{op}: cannot reinterpret {old} as {new}: bool converts only to "
                         f"bool (its bits are not an integer's); use x.astype({new}) "
                         f"(or x != 0 for bools)")


def _rule(x, *, dtype):
    new = check_dtype(dtype, "bitcast")
    _check_bool("bitcast", x.dtype, new)
    if new.itemsize != x.dtype.itemsize:
        raise DTypeError(f"bitcast: the kernel needs equal item sizes, got {x.dtype} -> "
                         f"{new}; tracer.lax.bitcast_convert_type splits or joins words")
    return ShapedArray(x.shape, new)


registry.declare_kernel("bitcast", shape=_rule, family="elementwise", differentiable=False)


def _bitcast(x, dtype):
    return x if x.dtype == dtype else run_kernel("bitcast", [x], {"dtype": dtype})


def bitcast_convert_type(operand, new_dtype):
    """operand's bits as `new_dtype` (jax.lax's): the same shape for equal item sizes; for
    a smaller new item size a trailing axis of old // new words (low-order first, as
    NumPy's view on a little-endian host); for a larger one the trailing axis, of
    new // old words, goes."""
    x = tnp.asarray(value(operand, "bitcast_convert_type"))
    old, new = x.dtype, check_dtype(new_dtype, "bitcast_convert_type")
    _check_bool("bitcast_convert_type", old, new)
    if old.itemsize == new.itemsize:
        return run_kernel("bitcast", [x], {"dtype": new})
    small, wide = sorted((old.itemsize, new.itemsize))
    ratio, shifts = wide // small, [8 * small * i for i in range(wide // small)]
    u_small, u_wide = _UNSIGNED[small], _UNSIGNED[wide]
    if old.itemsize > new.itemsize:
        words = _bitcast(x, u_wide)
        parts = [tnp.astype(tnp.right_shift(words, np.array(s, u_wide)), u_small)
                 for s in shifts]
        return _bitcast(tnp.stack(parts, axis=-1), new)
    if x.shape[-1:] != (ratio,):
        raise ShapeError(f"bitcast_convert_type: {old} -> {new} joins {ratio} words of "
                         f"{old} into one, so the operand's last axis must have size "
                         f"{ratio}; got shape {x.shape} (reshape it to (..., {ratio}))")
    words = tnp.astype(_bitcast(x, u_small), u_wide)
    out = words[..., 0]
    for i, s in enumerate(shifts[1:], 1):
        out = tnp.bitwise_or(out, tnp.left_shift(words[..., i], np.array(s, u_wide)))
    return _bitcast(out, new)


def view(x, dtype):
    """NumPy's x.view(dtype) for a traced x: its bits as `dtype`, the last axis resized
    by the ratio of item sizes (a 0-d array keeps its item size)."""
    x = tnp.asarray(value(x, "view"))
    new = check_dtype(dtype, "view")
    old = x.dtype
    if old.itemsize == new.itemsize:
        return bitcast_convert_type(x, new)
    n = x.shape[-1] if x.shape else None
    if n is None or n * old.itemsize % new.itemsize:
        raise ShapeError(f"view: {old} -> {new} changes the item size, so the last axis "
                         f"of shape {x.shape} must hold a multiple of {new.itemsize} bytes "
                         f"(an array of rank >= 1); reshape it first")
    if old.itemsize > new.itemsize:
        return tnp.reshape(bitcast_convert_type(x, new),
                           x.shape[:-1] + (n * old.itemsize // new.itemsize,))
    ratio = new.itemsize // old.itemsize
    return bitcast_convert_type(tnp.reshape(x, x.shape[:-1] + (n // ratio, ratio)), new)
