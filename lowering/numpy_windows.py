"""The `numpy` backend's sliding-window kernels, `conv`, `reduce_window` and
`tile_scatter` (their ops, shape rules and gradients are tracer.lax.conv's and
tracer.lax.window's), and the window geometry the front end shares with them.

`conv` is im2col (a strided view of the windows) into one 2-d matmul per feature group,
on BLAS. `reduce_window` reduces a gather through `window_index`, one index table per
shape: `idx[k, p]` is the flat operand position read by window element k of output p, or
`size` (one slot past the end, holding the init value) where the window covers padding or
a hole of the base dilation. `tile_scatter` is the pooling gradient when windows tile the
operand, in gather form.
"""
import functools

import numpy as np

from ir.types import saturated
from registry import register_kernel

_UFUNC = {"add": np.add, "max": np.maximum, "min": np.minimum}


def dilate(n, d):
    """The extent of n elements with d - 1 holes between neighbours."""
    return 0 if n == 0 else 1 + d * (n - 1)


def window_out_shape(shape, window, strides, pads, bdil, wdil):
    """How many windows fit along each axis of `shape` (base dilation bdil, padded by
    pads, window dilation wdil)."""
    out = []
    for n, k, s, (lo, hi), d, wd in zip(shape, window, strides, pads, bdil, wdil):
        span = dilate(n, d) + lo + hi - dilate(k, wd)
        out.append(span // s + 1 if span >= 0 else 0)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def window_index(shape, window, strides, pads, bdil, wdil):
    """idx (K, P) of flat operand positions (`size` for padding and holes; window element
    major, so reducing over K combines whole rows); see the module doc."""
    out = window_out_shape(shape, window, strides, pads, bdil, wdil)
    size = int(np.prod(shape))
    flat = np.zeros(out + window, np.int64)
    valid = np.ones(out + window, bool)
    nd = len(shape)
    for ax, (n, k, s, (lo, _), d, wd) in enumerate(zip(shape, window, strides, pads, bdil,
                                                        wdil)):
        pos = np.arange(out[ax])[:, None] * s + np.arange(k)[None, :] * wd - lo  # dilated
        src, ok = pos // d, (pos % d == 0) & (pos >= 0) & (pos < dilate(n, d))
        axes = [1] * (2 * nd)
        axes[ax], axes[nd + ax] = out[ax], k
        flat = flat * n + np.where(ok, src, 0).reshape(axes)
        valid = valid & ok.reshape(axes)
    idx = np.where(valid, flat, size).reshape(int(np.prod(out)), int(np.prod(window)))
    idx = np.ascontiguousarray(idx.T)
    idx.setflags(write=False)
    return idx


def _prepare(x, pads, ldil):
    """x dilated (zeros between elements) and padded (negative pads crop), spatial axes."""
    inner = (slice(None),)
    if any(d > 1 for d in ldil):
        shape = x.shape[:1] + tuple(dilate(n, d) for n, d in zip(x.shape[1:-1], ldil)) \
            + x.shape[-1:]
        out = np.zeros(shape, x.dtype)
        out[inner + tuple(slice(None, None, d) for d in ldil) + inner] = x
        x = out
    grow = [(0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads] + [(0, 0)]
    if any(p != (0, 0) for p in grow):
        x = np.pad(x, grow)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for n, (lo, hi) in zip(x.shape[1:-1], pads))
    return x[inner + crop + inner]


def conv(x, w, *, strides, pads, ldil, rdil, groups):
    """x (N, *spatial, C) convolved with w (*window, C/groups, O): out (N, *out, O)."""
    n, o, ksp, cg = x.shape[0], w.shape[-1], w.shape[:-2], w.shape[-2]
    osp = window_out_shape(x.shape[1:-1], ksp, strides, pads, ldil, rdil)
    out_shape = (n,) + osp + (o,)
    if 0 in out_shape or 0 in w.shape[:-1]:
        return np.zeros(out_shape, x.dtype)
    xl = np.ascontiguousarray(_prepare(x, pads, ldil))
    st = xl.strides
    view = np.lib.stride_tricks.as_strided(                  # (N, *out, *k, G, Cg)
        xl, (n,) + osp + ksp + (groups, cg),
        (st[0],) + tuple(s * k for s, k in zip(st[1:-1], strides))
        + tuple(s * d for s, d in zip(st[1:-1], rdil)) + (st[-1] * cg, st[-1]),
        writeable=False)
    # a copy: a reshaped view of overlapping windows would send matmul off its BLAS path
    cols = np.ascontiguousarray(np.moveaxis(view, -2, 0))
    cols = cols.reshape(groups, n * int(np.prod(osp)), -1)
    wk = np.moveaxis(w.reshape(ksp + (cg, groups, o // groups)), -2, 0)
    wk = np.ascontiguousarray(wk.reshape(groups, -1, o // groups))
    y = np.empty((groups, cols.shape[1], o // groups), x.dtype)
    for g in range(groups):     # 2-d matmuls: NumPy's stacked matmul can miss BLAS (100x)
        np.matmul(cols[g], wk[g], out=y[g])
    return np.ascontiguousarray(np.moveaxis(y, 0, 1)).reshape(out_shape)


def reduce_window(x, *, op, init, window, strides, pads, bdil):
    ones = (1,) * x.ndim
    idx = window_index(tuple(x.shape), *(tuple(a) for a in (window, strides, pads, bdil)),
                       ones)
    init = saturated(init, x.dtype)
    ext = np.append(np.ravel(x), init)
    ufunc = _UFUNC[op]
    red = ufunc.reduce(ext[idx], axis=0) if idx.shape[0] else np.zeros(idx.shape[1], x.dtype)
    return ufunc(red, init).reshape(window_out_shape(x.shape, window, strides, pads, bdil,
                                                     ones)).astype(x.dtype)


def tile_scatter(x, dy, *, op, window):
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


for _name, _impl in {"conv": conv, "reduce_window": reduce_window,
                     "tile_scatter": tile_scatter}.items():
    register_kernel(_name, "numpy", _impl)
