"""`reduce_window` (sum, max or min over sliding windows), as one `reduce_window` kernel.

Every window is a fixed set of flat positions of the operand, so the kernel and both
gradients share one index map, computed once per shape (cached): `idx[k, p]` is the flat
operand position read by window element k of output p, or `size` (one slot past the end,
holding the init value) where the window covers padding or a hole of the base dilation.
The sum's gradient spreads dy over each window (a scatter_add); max/min send dy to the
first extreme of each window, as jax.lax's select_and_scatter_add does. Both are written
with take/scatter_add, so they differentiate again. Windows that tile the operand (the
usual pooling: strides = window, no padding or dilation) use one `tile_scatter` kernel
instead, in gather form: each position of dx reads its window, so no index arrays and
no scatter.
"""
import functools
import itertools

import numpy as np
from llvmlite import ir

from ir import ShapedArray
from ir.errors import ArgumentError, DTypeError, ShapeError
from ir.types import dtype_kind, saturated
from lowering.llvm.graph_cache import register_builtin
from lowering.llvm.irutil import i64
from lowering.llvm.protocol import IndexMap
from lowering.llvm.scalars import arith
from registry import register_gradient, register_kernel, register_shape_rule
from registry.batching import register_batching_rule
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.lax.conv import dilate, ints, pads_of
from tracer.lax.lax_elementwise import add, max, min  # noqa: A004  (jax.lax's, as computations)
from tracer.numpy.reductions import computation as computation_dtype


_OPS = ((add, "add"), (max, "max"), (min, "min"), (tnp.add, "add"), (tnp.maximum, "max"),
        (tnp.minimum, "min"))
_UFUNC = {"add": np.add, "max": np.maximum, "min": np.minimum}


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None):
    """jax.lax.reduce_window with computation tracer.lax.add, max or min (padding and
    base-dilation holes read init_value, which must be a concrete scalar)."""
    x = tnp.asarray(operand)
    op = next((name for fn, name in _OPS if fn is computation), None)
    if op is None:
        raise ArgumentError(f"reduce_window: computation must be tracer.lax.add, max or min, "
                            f"got {computation!r}")
    try:
        init = float(np.asarray(init_value))
    except (TypeError, ValueError):
        raise ArgumentError(f"reduce_window: init_value must be a concrete scalar (not traced), "
                            f"got {init_value!r}") from None
    n = x.ndim
    window = ints("reduce_window", "window_dimensions", window_dimensions, n)
    strides = ints("reduce_window", "window_strides", window_strides, n)
    bdil = ints("reduce_window", "base_dilation", base_dilation, n)
    pads = pads_of("reduce_window", padding, x.shape, window, strides)
    wide = computation_dtype(x.dtype) if op == "add" else x.dtype    # half sums in float32
    out = run_kernel("reduce_window", [tnp.astype(x, wide)], {
        "op": op, "init": init, "window": window, "strides": strides, "pads": pads,
        "bdil": bdil})
    return tnp.astype(out, x.dtype)


def _out_shape(shape, window, strides, pads, bdil):
    out = []
    for n, k, s, (lo, hi), d in zip(shape, window, strides, pads, bdil):
        span = dilate(n, d) + lo + hi - k
        out.append(span // s + 1 if span >= 0 else 0)
    return tuple(out)


def _rule(x, *, op, init, window, strides, pads, bdil):
    if dtype_kind(x.dtype) not in "fiu":
        raise DTypeError(f"reduce_window: needs a numeric operand, got {x}")
    if not (len(window) == len(strides) == len(pads) == len(bdil) == x.ndim):
        raise ShapeError(f"reduce_window: window {window}, strides {strides}, padding {pads} "
                         f"and base_dilation {bdil} need one entry per dim of {x}")
    return ShapedArray(_out_shape(x.shape, window, strides, pads, bdil), x.dtype)


@functools.lru_cache(maxsize=64)
def window_index(shape, window, strides, pads, bdil):
    """idx (K, P) of flat operand positions (`size` for padding and holes; window element
    major, so reducing over K combines whole rows); see module doc."""
    out = _out_shape(shape, window, strides, pads, bdil)
    size = int(np.prod(shape))
    flat = np.zeros(out + window, np.int64)
    valid = np.ones(out + window, bool)
    nd = len(shape)
    for ax, (n, k, s, (lo, _), d) in enumerate(zip(shape, window, strides, pads, bdil)):
        pos = np.arange(out[ax])[:, None] * s + np.arange(k)[None, :] - lo   # dilated coords
        src, ok = pos // d, (pos % d == 0) & (pos >= 0) & (pos < dilate(n, d))
        axes = [1] * (2 * nd)
        axes[ax], axes[nd + ax] = out[ax], k
        flat = flat * n + np.where(ok, src, 0).reshape(axes)
        valid = valid & ok.reshape(axes)
    idx = np.where(valid, flat, size).reshape(int(np.prod(out)), int(np.prod(window)))
    idx = np.ascontiguousarray(idx.T)
    idx.setflags(write=False)
    return idx


def _index(x, attrs):
    return window_index(tuple(x.shape), *(tuple(attrs[k]) for k in
                                          ("window", "strides", "pads", "bdil")))


def _numpy(x, *, op, init, window, strides, pads, bdil):
    idx = _index(x, {"window": window, "strides": strides, "pads": pads, "bdil": bdil})
    out = _out_shape(x.shape, window, strides, pads, bdil)
    init = saturated(init, x.dtype)
    ext = np.append(np.ravel(x), init)
    ufunc = _UFUNC[op]
    red = ufunc.reduce(ext[idx], axis=0) if idx.shape[0] else np.zeros(idx.shape[1], x.dtype)
    return ufunc(red, init).reshape(out).astype(x.dtype)


def _llvm(ctx, index, read, *, op, init, window, strides, pads, bdil):
    """The window's elements read in turn (padding and holes give init; positions are
    clamped so every read stays inside x) and combined as NumPy's ufunc does."""
    b, x = ctx.b, ctx.in_avals[0]
    combine, acc = arith(op, x.dtype), ctx.const(saturated(init, x.dtype).item())
    for kpos in itertools.product(*map(range, window)):
        ok, multi = ir.Constant(ir.IntType(1), 1), []
        for v, k, s, (lo, _), d, n in zip(index.multi, kpos, strides, pads, bdil, x.shape):
            t = b.add(b.mul(v, i64(s)), i64(k - lo))              # dilated coordinate
            ok = b.and_(ok, b.icmp_unsigned("<=", t, i64((n - 1) * d)))
            if d > 1:
                ok = b.and_(ok, b.icmp_unsigned("==", b.urem(t, i64(d)), i64(0)))
                t = b.udiv(t, i64(d))
            multi.append(b.select(b.icmp_unsigned(">", t, i64(n - 1)), i64(n - 1), t))
        acc = combine(ctx, acc, b.select(ok, read(0, ctx.index(x.shape, multi=multi)),
                                         ctx.const(saturated(init, x.dtype).item())))
    return acc


class _WindowMap(IndexMap):
    """Native for windows of up to MAX_WINDOW elements (each is unrolled) over a non-empty
    operand; others run the NumPy kernel in the program, on purpose."""
    MAX_WINDOW = 64

    def native(self, node):
        return node.inputs[0].aval.size > 0 and \
            int(np.prod(node.attrs["window"])) <= self.MAX_WINDOW


# ---- the gradient when windows tile x: one gather-form kernel, no index arrays ------------
def _tiled(attrs):
    return attrs["strides"] == attrs["window"] and set(attrs["bdil"]) == {1} and \
        set(attrs["pads"]) <= {(0, 0)}


def _tile_rule(x, dy, *, op, window):
    if dy.ndim != x.ndim or any(o != n // k for o, n, k in zip(dy.shape, x.shape, window)):
        raise ShapeError(f"tile_scatter: dy {dy} is not x {x} pooled by window {window}")
    return ShapedArray(x.shape, dy.dtype)


def _tile_numpy(x, dy, *, op, window):
    """dx: dy[i // window] at the first extreme of each window (everywhere for add),
    0 elsewhere and on the rim the windows do not cover."""
    nd, osh, k = x.ndim, dy.shape, int(np.prod(window))
    out = np.zeros(x.shape, dy.dtype)
    if out.size == 0 or dy.size == 0:
        return out
    order = tuple(range(0, 2 * nd, 2)) + tuple(range(1, 2 * nd, 2))
    inter = tuple(d for o, w in zip(osh, window) for d in (o, w))
    cover = tuple(slice(0, o * w) for o, w in zip(osh, window))
    if op == "add":
        upd = np.broadcast_to(dy[..., None], osh + (k,))
    else:
        tiles = x[cover].reshape(inter).transpose(order).reshape(osh + (k,))
        first = (np.argmax if op == "max" else np.argmin)(tiles, axis=-1)
        upd = np.where(first[..., None] == np.arange(k), dy[..., None], 0).astype(dy.dtype)
    out[cover] = upd.reshape(osh + tuple(window)).transpose(np.argsort(order)).reshape(
        out[cover].shape)
    return out


def _tile_llvm(ctx, index, read, *, op, window):
    """dx at one position: its window's first extreme found by reading the window (K
    reads, a strict compare keeps the first; NaN wins, as in NumPy's argmax)."""
    b, (x, dy) = ctx.b, ctx.in_avals
    multi, off, ok = [], i64(0), ir.Constant(ir.IntType(1), 1)
    for v, k, o, n in zip(index.multi, window, dy.shape, x.shape):
        w = b.udiv(v, i64(k)) if k > 1 else v
        if o * k < n:                                       # the rim: no window
            ok = b.and_(ok, b.icmp_unsigned("<", w, i64(o)))
            w = b.select(b.icmp_unsigned("<", w, i64(o)), w, i64(o - 1))
        multi.append(w)
        off = b.add(b.mul(off, i64(k)), b.urem(v, i64(k)) if k > 1 else i64(0))
    g = read(1, ctx.index(dy.shape, multi=multi))
    if op != "add":
        best, at = None, i64(0)
        for j, kpos in enumerate(itertools.product(*map(range, window))):
            pos = [b.add(b.mul(w, i64(k)), i64(p)) for w, k, p in zip(multi, window, kpos)]
            v = read(0, ctx.index(x.shape, multi=pos))
            if best is not None:
                better = _beats(b, op, x.dtype, v, best)
                best, at = b.select(better, v, best), b.select(better, i64(j), at)
            else:
                best = v
        ok = b.and_(ok, b.icmp_unsigned("==", at, off))
    return b.select(ok, g, ctx.const(0))


def _beats(b, op, dtype, v, best):
    if dtype_kind(dtype) == "f":
        nan_first = b.and_(b.fcmp_unordered("uno", v, v), b.fcmp_ordered("ord", best, best))
        return b.or_(b.fcmp_ordered(">" if op == "max" else "<", v, best), nan_first)
    cmp = b.icmp_signed if dtype_kind(dtype) == "i" else b.icmp_unsigned
    return cmp(">" if op == "max" else "<", v, best)


def _tile_grad(ct, inputs, out, attrs):
    """Linear in dy: each window gathers ct at its selected element(s)."""
    x, dy = inputs
    window = attrs["window"]
    mask = run_kernel("tile_scatter", [x, tnp.ones(dy.shape, dy.dtype)], attrs)
    return None, reduce_window(ct * mask, 0.0, add, window, window, "VALID")


def _tile_batch(inputs, dims, attrs):
    size = next(x.shape[d] for x, d in zip(inputs, dims) if d is not None)
    xs = [tnp.moveaxis(x, d, 0) if d is not None else tnp.broadcast_to(x, (size,) + x.shape)
          for x, d in zip(inputs, dims)]
    return run_kernel("tile_scatter", xs, {"op": attrs["op"],
                                           "window": (1,) + tuple(attrs["window"])}), 0


def _grad(dy, inputs, out, attrs):
    x, = inputs
    if _tiled(attrs) and dy.size:
        return (run_kernel("tile_scatter", [x, dy], {"op": attrs["op"],
                                                     "window": attrs["window"]}),)
    idx = _index(x, attrs)
    size = x.size
    g = tnp.reshape(dy, (1, idx.shape[1]))
    if attrs["op"] == "add":
        upd = tnp.broadcast_to(g, idx.shape)
    else:       # the first extreme of each window (a padding slot never wins over init)
        ext = tnp.concatenate([tnp.reshape(x, (size,)), tnp.full((1,), attrs["init"], x.dtype)])
        vals = run_kernel("take", [ext, idx], {"axis": 0})
        first = tnp.argmax(vals if attrs["op"] == "max" else -vals, axis=0)
        hit = tnp.equal(tnp.reshape(first, (1, idx.shape[1])), np.arange(idx.shape[0])[:, None])
        upd = tnp.where(hit, g, tnp.zeros((), dy.dtype))
    dx = run_kernel("scatter_add", [upd, idx], {"axis": 0, "size": size + 1})
    return (tnp.reshape(dx[:size], x.shape),)


def _batch(inputs, dims, attrs):
    x, = inputs
    bd = dims[0]
    a = dict(attrs)
    for k, v in (("window", 1), ("strides", 1), ("pads", (0, 0)), ("bdil", 1)):
        a[k] = tuple(a[k][:bd]) + (v,) + tuple(a[k][bd:])
    return run_kernel("reduce_window", [x], a), bd


register_shape_rule("reduce_window", _rule)
register_kernel("reduce_window", "numpy", _numpy)
register_builtin("reduce_window", _WindowMap(_llvm))
register_gradient("reduce_window", _grad)
register_batching_rule("reduce_window", _batch)
register_shape_rule("tile_scatter", _tile_rule)
register_kernel("tile_scatter", "numpy", _tile_numpy)
register_builtin("tile_scatter", IndexMap(_tile_llvm))
register_gradient("tile_scatter", _tile_grad)
register_batching_rule("tile_scatter", _tile_batch)
