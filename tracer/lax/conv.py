"""`conv_general_dilated` with JAX semantics, as one `conv` kernel.

The kernel works in one canonical, channels-last layout: lhs (N, *spatial, C), rhs
(*window, C/groups, O), out (N, *spatial, O) — NHWC/HWIO, the layout CNNs use, so their
convolutions need no transposes, and each output pixel's window is a few contiguous
channel runs (im2col rows); the op transposes from other dimension numbers (transposes are
index maps, which the llvm backend fuses). Gradients are convolutions again, as in JAX:
the input gradient convolves dy with the flipped kernel (lhs dilation = the strides), the
kernel gradient convolves lhs with dy (rhs dilation = the strides), so they differentiate
to any order. The NumPy kernel (lowering.numpy_windows) is im2col into one matmul per
feature group (BLAS); the llvm kernel (lowering.llvm.conv) gathers the same rows
straight into the packed matmul's register tiles.
"""
import operator

import numpy as np

from ir import ShapedArray, dtype_kind
from ir.errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from lowering.numpy_windows import dilate, window_out_shape
from registry import declare_kernel
from tracer import numpy as tnp
from tracer.lax.lax_dot import _check_precision
from tracer.core import run_kernel


# ---- arguments: dimension numbers, padding ------------------------------------------------
def _perms(dimension_numbers, ndim):
    """(lhs_perm, rhs_perm, out_perm): each maps canonical axis -> the caller's axis.
    Spatial dims are ordered as in the rhs spec, as in JAX."""
    sp = tuple(range(2, ndim))
    if dimension_numbers is None:       # JAX's default: NCHW, OIHW, NCHW
        return (0,) + sp + (1,), sp + (1, 0), (0,) + sp + (1,)
    if len(dimension_numbers) != 3:
        raise ArgumentError(f"conv_general_dilated: dimension_numbers must be 3 specs (lhs, "
                            f"rhs, out), got {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    if all(isinstance(s, str) for s in (lhs, rhs, out)):
        if not (len(lhs) == len(rhs) == len(out) == ndim) or \
                sorted(lhs) != sorted(out) or {"N", "C"} - set(lhs) or {"O", "I"} - set(rhs) \
                or len(set(lhs)) != ndim or len(set(rhs)) != ndim \
                or set(lhs) - {"N", "C"} != set(rhs) - {"O", "I"}:
            raise ArgumentError(f"conv_general_dilated: dimension_numbers {dimension_numbers!r}"
                                f" do not describe {ndim}-d operands (e.g. ('NHWC', 'HWIO', "
                                f"'NHWC'))")
        order = [c for c in rhs if c not in "OI"]

        def perm(spec, first, last):
            return tuple(spec.index(c) for c in first + order + last)
        return perm(lhs, ["N"], ["C"]), perm(rhs, [], ["I", "O"]), perm(out, ["N"], ["C"])
    specs = tuple(tuple(int(i) for i in s) for s in dimension_numbers)
    if any(sorted(s) != list(range(ndim)) for s in specs):
        raise ArgumentError(f"conv_general_dilated: dimension_numbers {dimension_numbers!r} "
                            f"must be permutations of range({ndim})")
    (lb, lf, *ls), (ro, ri, *rs), (ob, of, *os_) = specs
    return (lb, *ls, lf), (*rs, ri, ro), (ob, *os_, of)


class PaddingTypeError(ArgumentValueError, RuntimeError):
    """An unknown padding type: a RuntimeError, as jax.lax.padtype_to_pads raises."""


def padtype_pads(op, padding, sizes, windows, strides):
    """jax.lax's padding types as (lo, hi) pairs: 'VALID' none; 'SAME' (out = ceil(in /
    stride)) splits the padding with the extra one after, 'SAME_LOWER' before."""
    mode = str(getattr(padding, "name", padding)).upper()
    if mode == "VALID":
        return ((0, 0),) * len(sizes)
    if mode not in ("SAME", "SAME_LOWER"):
        raise PaddingTypeError(f"{op}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or "
                               f"(lo, hi) pairs, got {padding!r}")
    pads = []
    for n, k, s in zip(sizes, windows, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if mode == "SAME" else (large, small))
    return tuple(pads)


def pads_of(op, padding, sizes, windows, strides):
    """Explicit (lo, hi) pairs from a padding type or pairs (lo and hi may be negative)."""
    if isinstance(padding, str) or hasattr(padding, "name"):
        return padtype_pads(op, padding, sizes, windows, strides)
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):         # not pairs, or not integers (1.5 is no padding)
        raise ArgumentValueError(f"{op}: padding must be a padding type or a sequence of "
                                 f"(lo, hi) integer pairs, got {padding!r}") from None
    if len(pads) != len(sizes):
        raise ArgumentValueError(f"{op}: padding needs one (lo, hi) pair per spatial dim "
                                 f"({len(sizes)}), got {padding!r}")
    return pads


def ints(op, name, value, n, default=1):
    value = (default,) * n if value is None else tuple(int(v) for v in value)
    if len(value) != n or any(v < 1 for v in value):
        raise ArgumentError(f"{op}: {name} must be {n} positive ints, got {value}")
    return value


# ---- the op ----------------------------------------------------------------------------------
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """jax.lax.conv_general_dilated. `precision` is checked and, on CPU, has no effect;
    preferred_element_type converts the operands first. batch_group_count G splits the lhs
    batch into G consecutive groups and the output features into G groups, group g's
    features convolving batch group g only (XLA's; one convolution per group)."""
    _check_precision(precision)
    lhs, rhs = tnp.asarray(lhs), tnp.asarray(rhs)
    if preferred_element_type is not None:
        lhs, rhs = (tnp.astype(v, np.dtype(preferred_element_type)) for v in (lhs, rhs))
    if lhs.dtype == rhs.dtype == np.bool_:           # XLA's: or of ands, counted in int32
        return conv_general_dilated(
            tnp.astype(lhs, np.int32), tnp.astype(rhs, np.int32), window_strides, padding,
            lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count,
            batch_group_count, precision) != 0
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"conv_general_dilated: lhs and rhs need the same rank >= 2, got "
                         f"{lhs.shape} and {rhs.shape}")
    lp, rp, op = _perms(dimension_numbers, lhs.ndim)
    x, w = tnp.transpose(lhs, lp), tnp.transpose(rhs, rp)
    nsp = lhs.ndim - 2
    strides = ints("conv_general_dilated", "window_strides", window_strides, nsp)
    ldil = ints("conv_general_dilated", "lhs_dilation", lhs_dilation, nsp)
    rdil = ints("conv_general_dilated", "rhs_dilation", rhs_dilation, nsp)
    if isinstance(padding, str) and any(d != 1 for d in ldil):     # (0-d: none)
        raise ArgumentValueError(
            f"conv_general_dilated: string padding {padding!r} is not implemented with "
            f"lhs_dilation {ldil} (a transposed convolution), as in JAX: give explicit "
            f"(lo, hi) pairs or use conv_transpose")
    pads = pads_of("conv_general_dilated", padding, x.shape[1:-1],
                   [dilate(k, d) for k, d in zip(w.shape[:-2], rdil)], strides)
    groups, batches = int(feature_group_count), int(batch_group_count)
    if batches < 1 or (batches > 1 and groups > 1) or x.shape[0] % batches \
            or w.shape[-1] % batches:
        raise ShapeError(f"conv_general_dilated: batch_group_count={batch_group_count} must "
                         f"divide the lhs batch ({x.shape[0]}) and the rhs output features "
                         f"({w.shape[-1]}), with feature_group_count 1")
    n, o = x.shape[0] // batches, w.shape[-1] // batches
    out = tnp.concatenate([conv(x[g * n:(g + 1) * n], w[..., g * o:(g + 1) * o], strides,
                                pads, ldil, rdil, groups) for g in range(batches)], axis=-1) \
        if batches > 1 else conv(x, w, strides, pads, ldil, rdil, groups)
    return tnp.transpose(out, tuple(np.argsort(op)))


def conv(x, w, strides, pads, ldil, rdil, groups):
    return run_kernel("conv", [x, w], {"strides": tuple(strides), "pads": tuple(pads),
                                       "ldil": tuple(ldil), "rdil": tuple(rdil),
                                       "groups": groups})


# ---- shape rule ---------------------------------------------------------------------------
def _conv_rule(x, w, *, strides, pads, ldil, rdil, groups):
    def where():
        return (f"conv: lhs {ShapedArray(x.shape, x.dtype)} (N, *spatial, C), rhs "
                f"{ShapedArray(w.shape, w.dtype)} (*window, C/groups, O), groups={groups}")
    if x.dtype != w.dtype or dtype_kind(x.dtype) not in "fiu":
        raise DTypeError(f"{where()}: needs numeric operands of one dtype (cast one first)")
    if x.ndim != w.ndim or x.ndim < 2 or not (len(strides) == len(pads) == len(ldil)
                                              == len(rdil) == x.ndim - 2):
        raise ShapeError(f"{where()}: ranks or attrs do not match")
    if groups < 1 or x.shape[-1] != w.shape[-2] * groups or w.shape[-1] % groups:
        raise ShapeError(f"{where()}: C must be groups * rhs I and O a multiple of groups")
    sp = window_out_shape(x.shape[1:-1], w.shape[:-2], strides, pads, ldil, rdil)
    return ShapedArray((x.shape[0],) + sp + (w.shape[-1],), x.dtype)


# ---- gradients (JAX's transpose rules, in the canonical layout) ---------------------------
def _grad(dy, inputs, out, attrs):
    x, w = inputs
    s, pads, ldil, rdil, g = (attrs[k] for k in ("strides", "pads", "ldil", "rdil", "groups"))
    nsp = x.ndim - 2
    sp, ksp = x.shape[1:-1], w.shape[:-2]
    xd = [dilate(n, a) for n, a in zip(sp, ldil)]
    kd = [dilate(k, b) for k, b in zip(ksp, rdil)]
    od = [dilate(n, a) for n, a in zip(dy.shape[1:-1], s)]
    # input: conv of dy with the flipped kernel, out/in features swapped within each group
    o, cg = w.shape[-1], w.shape[-2]
    k = tuple(range(nsp))
    wt = tnp.transpose(tnp.reshape(w, ksp + (cg, g, o // g)), k + (nsp + 2, nsp + 1, nsp))
    wt = run_kernel("rev", [tnp.reshape(wt, ksp + (o // g, g * cg))], {"axes": k})
    lo_x = [k - lo - 1 for k, (lo, _) in zip(kd, pads)]
    pads_x = tuple((lo, a + k - 1 - d - lo) for lo, a, k, d in zip(lo_x, xd, kd, od))
    dx = conv(dy, wt, ldil, pads_x, s, rdil, g)
    # kernel: conv of lhs (channels as batch, groups x batch as features) with dy
    n = x.shape[0]
    xt = tnp.transpose(tnp.reshape(x, (n,) + sp + (g, cg)),
                       (nsp + 2,) + tuple(range(1, nsp + 1)) + (nsp + 1, 0))
    xt = tnp.reshape(xt, (cg,) + sp + (g * n,))
    dyt = tnp.transpose(dy, tuple(range(1, nsp + 1)) + (0, nsp + 1))
    pads_w = tuple((lo, d - a + k - lo - 1) for (lo, _), a, k, d in zip(pads, xd, kd, od))
    dw = conv(xt, dyt, rdil, pads_w, ldil, s, g)                  # (Cg, *k, O)
    return dx, tnp.transpose(dw, tuple(range(1, nsp + 1)) + (0, nsp + 1))


# ---- vmap: fold the batch into N (lhs) or into feature groups (rhs) ---------------------
def _batch(inputs, dims, attrs):
    x, w = inputs
    bx, bw = dims
    a = (attrs["strides"], attrs["pads"], attrs["ldil"], attrs["rdil"])
    g = attrs["groups"]
    if bw is None:
        x = tnp.moveaxis(x, bx, 0)
        b = x.shape[0]
        y = conv(tnp.reshape(x, (b * x.shape[1],) + x.shape[2:]), w, *a, g)
        return tnp.reshape(y, (b, x.shape[1]) + y.shape[1:]), 0
    w = tnp.moveaxis(w, bw, -1)                                # (*k, Cg, O, B)
    ksp, cg, o, b = w.shape[:-3], w.shape[-3], w.shape[-2], w.shape[-1]
    nk, og = len(ksp), o // g
    if bx is None:          # one lhs: out channels (G, B, Og) in each group's block
        wt = tnp.reshape(w, ksp + (cg, g, og, b))
        wt = tnp.reshape(tnp.swapaxes(wt, nk + 2, nk + 3), ksp + (cg, g * b * og))
        y = conv(x, wt, *a, g)
        y = tnp.reshape(y, y.shape[:-1] + (g, b, og))
        return tnp.reshape(tnp.swapaxes(y, -3, -2), y.shape[:-3] + (b, o)), x.ndim - 1
    x = tnp.moveaxis(x, bx, -2)                                # (N, *sp, B, C)
    y = conv(tnp.reshape(x, x.shape[:-2] + (b * x.shape[-1],)),
             tnp.reshape(tnp.moveaxis(w, -1, -2), ksp + (cg, b * o)), *a, b * g)
    return tnp.reshape(y, y.shape[:-1] + (b, o)), y.ndim - 1


declare_kernel("conv", shape=_conv_rule, family="contraction", gradient=_grad, batching=_batch)
