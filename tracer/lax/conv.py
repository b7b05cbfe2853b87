"""`conv_general_dilated` with JAX semantics, as one `conv` kernel.

The kernel works in one canonical layout, lhs (N, C, *spatial), rhs (O, C/groups, *window),
out (N, O, *spatial); the op transposes from the caller's dimension numbers (transposes are
index maps, which the llvm backend fuses into their consumer). Gradients are convolutions
again, as in JAX: the input gradient convolves dy with the flipped kernel (lhs dilation =
the strides), the kernel gradient convolves lhs with dy (rhs dilation = the strides), so
they differentiate to any order. The NumPy kernel is im2col (a strided window view) into
one batched matmul per feature group (BLAS). The llvm backend runs that NumPy kernel inside
the compiled program, declared on purpose (`NumpyInProgram`, so no fallback warning)
until a native im2col + packed-matmul emitter exists.
"""
import numpy as np

from ir import ShapedArray
from ir.errors import ArgumentError, DTypeError, ShapeError
from lowering.llvm.protocol import NumpyInProgram
from registry import register_gradient, register_kernel, register_shape_rule
from registry.batching import register_batching_rule
from tracer import numpy as tnp
from tracer.core import run_kernel


# ---- arguments: dimension numbers, padding ------------------------------------------------
def _perms(dimension_numbers, ndim):
    """(lhs_perm, rhs_perm, out_perm): each maps canonical axis -> the caller's axis.
    Spatial dims are ordered as in the rhs spec, as in JAX."""
    if dimension_numbers is None:
        return (tuple(range(ndim)),) * 3
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

        def perm(spec, a, b):
            return (spec.index(a), spec.index(b)) + tuple(spec.index(c) for c in order)
        return perm(lhs, "N", "C"), perm(rhs, "O", "I"), perm(out, "N", "C")
    specs = tuple(tuple(int(i) for i in s) for s in dimension_numbers)
    if any(sorted(s) != list(range(ndim)) for s in specs):
        raise ArgumentError(f"conv_general_dilated: dimension_numbers {dimension_numbers!r} "
                            f"must be permutations of range({ndim})")
    return specs


def _same_pads(sizes, windows, strides):
    """JAX's 'SAME': out = ceil(in / stride), the padding split with the extra one after."""
    pads = []
    for n, k, s in zip(sizes, windows, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def pads_of(op, padding, sizes, windows, strides):
    """Explicit (lo, hi) pairs from 'SAME' / 'VALID' / pairs (lo and hi may be negative)."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return ((0, 0),) * len(sizes)
        if padding.upper() == "SAME":
            return _same_pads(sizes, windows, strides)
        raise ArgumentError(f"{op}: padding must be 'SAME', 'VALID' or (lo, hi) pairs, got "
                            f"{padding!r}")
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(pads) != len(sizes):
        raise ArgumentError(f"{op}: padding needs one (lo, hi) pair per spatial dim "
                            f"({len(sizes)}), got {padding!r}")
    return pads


def ints(op, name, value, n, default=1):
    value = (default,) * n if value is None else tuple(int(v) for v in value)
    if len(value) != n or any(v < 1 for v in value):
        raise ArgumentError(f"{op}: {name} must be {n} positive ints, got {value}")
    return value


def dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


# ---- the op ----------------------------------------------------------------------------------
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1):
    """jax.lax.conv_general_dilated (no batch_group_count, no precision)."""
    lhs, rhs = tnp.asarray(lhs), tnp.asarray(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"conv_general_dilated: lhs and rhs need the same rank >= 2, got "
                         f"{lhs.shape} and {rhs.shape}")
    lp, rp, op = _perms(dimension_numbers, lhs.ndim)
    x, w = tnp.transpose(lhs, lp), tnp.transpose(rhs, rp)
    nsp = lhs.ndim - 2
    strides = ints("conv_general_dilated", "window_strides", window_strides, nsp)
    ldil = ints("conv_general_dilated", "lhs_dilation", lhs_dilation, nsp)
    rdil = ints("conv_general_dilated", "rhs_dilation", rhs_dilation, nsp)
    pads = pads_of("conv_general_dilated", padding, x.shape[2:],
                   [dilate(k, d) for k, d in zip(w.shape[2:], rdil)], strides)
    out = conv(x, w, strides, pads, ldil, rdil, int(feature_group_count))
    return tnp.transpose(out, tuple(np.argsort(op)))


def conv(x, w, strides, pads, ldil, rdil, groups):
    return run_kernel("conv", [x, w], {"strides": tuple(strides), "pads": tuple(pads),
                                       "ldil": tuple(ldil), "rdil": tuple(rdil),
                                       "groups": groups})


# ---- shape rule ---------------------------------------------------------------------------
def _conv_rule(x, w, *, strides, pads, ldil, rdil, groups):
    def where():
        return (f"conv: lhs {ShapedArray(x.shape, x.dtype)} (N, C, *spatial), rhs "
                f"{ShapedArray(w.shape, w.dtype)} (O, C/groups, *window), groups={groups}")
    if x.dtype != w.dtype or x.dtype.kind not in "fiu":
        raise DTypeError(f"{where()}: needs numeric operands of one dtype (cast one first)")
    if x.ndim != w.ndim or x.ndim < 2 or not (len(strides) == len(pads) == len(ldil)
                                              == len(rdil) == x.ndim - 2):
        raise ShapeError(f"{where()}: ranks or attrs do not match")
    if groups < 1 or x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise ShapeError(f"{where()}: C must be groups * rhs I and O a multiple of groups")
    sp = []
    for n, k, s, (lo, hi), a, b in zip(x.shape[2:], w.shape[2:], strides, pads, ldil, rdil):
        span = dilate(n, a) + lo + hi - dilate(k, b)
        sp.append(span // s + 1 if span >= 0 else 0)
    return ShapedArray((x.shape[0], w.shape[0]) + tuple(sp), x.dtype)


# ---- NumPy kernel: im2col + one matmul per group ---------------------------------------------
def _prepare(x, pads, ldil):
    """x dilated (zeros between elements) and padded (negative pads crop)."""
    if any(d > 1 for d in ldil):
        shape = x.shape[:2] + tuple(dilate(n, d) for n, d in zip(x.shape[2:], ldil))
        out = np.zeros(shape, x.dtype)
        out[(slice(None),) * 2 + tuple(slice(None, None, d) for d in ldil)] = x
        x = out
    grow = [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    if any(p != (0, 0) for p in grow):
        x = np.pad(x, grow)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for n, (lo, hi) in zip(x.shape[2:], pads))
    return x[(slice(None),) * 2 + crop]


def conv_numpy(x, w, *, strides, pads, ldil, rdil, groups):
    out_shape = _conv_rule(x, w, strides=strides, pads=pads, ldil=ldil, rdil=rdil,
                           groups=groups).shape
    n, o, osp = x.shape[0], w.shape[0], out_shape[2:]
    if 0 in out_shape or 0 in w.shape[1:]:
        return np.zeros(out_shape, x.dtype)
    # channels last, so that each window row copied into the columns is contiguous
    xl = np.ascontiguousarray(np.moveaxis(_prepare(x, pads, ldil), 1, -1))
    st, cg, ksp = xl.strides, w.shape[1], w.shape[2:]
    view = np.lib.stride_tricks.as_strided(                  # (N, *out, *k, G, Cg)
        xl, (n,) + osp + ksp + (groups, cg),
        (st[0],) + tuple(s * k for s, k in zip(st[1:-1], strides))
        + tuple(s * d for s, d in zip(st[1:-1], rdil)) + (st[-1] * cg, st[-1]),
        writeable=False)
    # a copy: a reshaped view of overlapping windows would send matmul off its BLAS path
    cols = np.ascontiguousarray(np.moveaxis(view, -2, 0))
    cols = cols.reshape(groups, n * int(np.prod(osp)), -1)
    wk = np.moveaxis(w.reshape((groups, o // groups, cg) + ksp), (1, 2), (-1, -2))
    y = np.matmul(cols, wk.reshape(groups, -1, o // groups))     # (G, N*P, Og)
    y = np.moveaxis(y.reshape((groups, n) + osp + (o // groups,)), (0, -1), (1, 2))
    return np.ascontiguousarray(y).reshape(out_shape)


# ---- gradients (JAX's transpose rules, in the canonical layout) ---------------------------
def _grad(dy, inputs, out, attrs):
    x, w = inputs
    s, pads, ldil, rdil, g = (attrs[k] for k in ("strides", "pads", "ldil", "rdil", "groups"))
    nsp = x.ndim - 2
    xd = [dilate(n, a) for n, a in zip(x.shape[2:], ldil)]
    kd = [dilate(k, b) for k, b in zip(w.shape[2:], rdil)]
    od = [dilate(n, a) for n, a in zip(dy.shape[2:], s)]
    # input: conv of dy with the flipped kernel, out/in features swapped within each group
    o, cg = w.shape[0], w.shape[1]
    wt = tnp.reshape(w, (g, o // g, cg) + w.shape[2:])
    wt = tnp.reshape(tnp.swapaxes(wt, 1, 2), (g * cg, o // g) + w.shape[2:])
    wt = run_kernel("rev", [wt], {"axes": tuple(range(2, 2 + nsp))})
    lo_x = [k - lo - 1 for k, (lo, _) in zip(kd, pads)]
    pads_x = tuple((lo, a + k - 1 - d - lo) for lo, a, k, d in zip(lo_x, xd, kd, od))
    dx = conv(dy, wt, ldil, pads_x, s, rdil, g)
    # kernel: conv of lhs (channels as batch, groups x batch as features) with dy
    n = x.shape[0]
    xt = tnp.reshape(x, (n, g, cg) + x.shape[2:])
    xt = tnp.reshape(tnp.transpose(xt, (2, 1, 0) + tuple(range(3, 3 + nsp))),
                     (cg, g * n) + x.shape[2:])
    dyt = tnp.swapaxes(dy, 0, 1)
    pads_w = tuple((lo, d - a + k - lo - 1) for (lo, _), a, k, d in zip(pads, xd, kd, od))
    dw = tnp.swapaxes(conv(xt, dyt, rdil, pads_w, ldil, s, g), 0, 1)
    return dx, dw


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
    w = tnp.moveaxis(w, bw, 0)
    b, o = w.shape[0], w.shape[1]
    og = o // g
    if bx is None:          # one lhs: out channels (G, B, Og) in each group's block
        wt = tnp.reshape(tnp.swapaxes(tnp.reshape(w, (b, g, og) + w.shape[2:]), 0, 1),
                         (g * b * og,) + w.shape[2:])
        y = conv(x, wt, *a, g)
        y = tnp.reshape(y, (y.shape[0], g, b, og) + y.shape[2:])
        return tnp.reshape(tnp.swapaxes(y, 1, 2), (y.shape[0], b, o) + y.shape[4:]), 1
    x = tnp.moveaxis(x, bx, 1)                                 # (N, B, C, ...)
    y = conv(tnp.reshape(x, (x.shape[0], b * x.shape[2]) + x.shape[3:]),
             tnp.reshape(w, (b * o,) + w.shape[2:]), *a, b * g)
    return tnp.reshape(y, (y.shape[0], b, o) + y.shape[2:]), 1


register_shape_rule("conv", _conv_rule)
register_kernel("conv", "numpy", conv_numpy)
register_kernel("conv", "llvm", NumpyInProgram("no native convolution yet: im2col + BLAS"))
register_gradient("conv", _grad)
register_batching_rule("conv", _batch)
