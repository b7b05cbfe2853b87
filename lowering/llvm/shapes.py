"""Shape kernels: index maps that vanish into their consumer's loop (broadcast_to,
reshape, transpose, slice, rev, pad, take), copies (concatenate, scatter_add, scatter)
and checkpoint_name, the identity that names a value for tracer.checkpoint's policies.

Indices of `take` and the scatters are *checked*, as the numpy kernels check them: an
index outside [0, size) (the ops wrap negative indices before the kernel) makes the call
raise OutOfBoundsError, naming an offending index and the node's source line, after the
kernel ran with that index clamped into the axis, so memory is never touched out of
bounds. pad fills with zeros.
"""
import numpy as np
from llvmlite import ir

from ir.errors import OutOfBoundsError
from lowering.llvm.irutil import i64
from lowering.llvm.protocol import Index, IndexMap, KernelEmitter, ScalarKernel
from lowering.llvm.scalars import arith


def _broadcast_to(ctx, index, read, *, shape):
    x = ctx.in_avals[0]
    if x.size == 1:
        return read(0, ctx.index(x.shape, flat=i64(0)))
    if x.shape == tuple(shape):
        return read(0, index)
    lead = len(shape) - x.ndim
    return read(0, ctx.index(x.shape, multi=[i64(0) if d == 1 else index.multi[lead + k]
                                             for k, d in enumerate(x.shape)]))


def _reshape(ctx, index, read, *, shape):
    src = ctx.in_avals[0].shape
    if index.key[0] == "m" and ctx.in_avals[0].size and _merges(shape, src):
        return read(0, _Regrouped(ctx.b, src, index))
    return read(0, ctx.index(src, flat=index.flat))


def _merges(out, src):
    """Whether reshaping `src` to `out` only merges runs of axes (and adds or drops axes
    of extent 1): each input coordinate is then a multiply-add of output coordinates.
    A split is left to the flat index: dividing the innermost coordinate made LLVM
    unroll attention's merge of heads ten times over."""
    return all(sum(src[k] > 1 for k in b) <= 1 for _, b in _runs(out, src))


class _Regrouped(Index):
    """A reshape's input position at output position `out` (given by coordinates): the
    same flat offset, and coordinates from `out`'s by runs of axes whose extents have
    equal products (attention's heads, a slice read through a reshape and a transpose,
    took six divisions an element and did not vectorize)."""
    __slots__ = ("_out",)

    def __init__(self, b, shape, out):
        self.b, self.shape, self._out = b, tuple(shape), out
        self._flat = self._multi = None
        self.key = ("reshape", self.shape, out.key)

    @property
    def flat(self):
        if self._flat is None:
            self._flat = self._out.flat
        return self._flat

    @property
    def multi(self):
        if self._multi is None:
            out, multi = self._out, []
            for a, b in _runs(out.shape, self.shape):
                run = Index(self.b, [out.shape[k] for k in a], multi=[out.multi[k] for k in a])
                multi += Index(self.b, [self.shape[k] for k in b], flat=run.flat).multi
            self._multi = multi
        return self._multi


def _runs(a, b):
    """[(axes of a, axes of b)]: consecutive runs of both shapes' axes with equal products
    (each at least one axis of either shape; both shapes of the same nonzero size)."""
    runs, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        i0, j0, pa, pb = i, j, 1, 1
        if i < len(a):
            pa, i = a[i], i + 1
        if j < len(b):
            pb, j = b[j], j + 1
        while pa != pb:
            if pa < pb:
                pa, i = pa * a[i], i + 1
            else:
                pb, j = pb * b[j], j + 1
        runs.append((range(i0, i), range(j0, j)))
    return runs


def _transpose(ctx, index, read, *, perm):
    multi = [None] * len(perm)
    for i, p in enumerate(perm):
        multi[p] = index.multi[i]
    return read(0, ctx.index(ctx.in_avals[0].shape, multi=multi))


def _affine(b, v, scale, offset):
    if scale != 1:
        v = b.mul(v, i64(scale), flags=("nuw", "nsw"))
    return b.add(v, i64(offset), flags=("nuw", "nsw")) if offset else v


def _slice(ctx, index, read, *, start, limit, step):
    multi = [_affine(ctx.b, v, k, s) for v, s, k in zip(index.multi, start, step)]
    return read(0, ctx.index(ctx.in_avals[0].shape, multi=multi))


def _rev(ctx, index, read, *, axes):
    b, shape = ctx.b, ctx.in_avals[0].shape
    multi = [b.sub(i64(shape[d] - 1), v) if d in axes else v for d, v in enumerate(index.multi)]
    return read(0, ctx.index(shape, multi=multi))


def _pad(ctx, index, read, *, lo, hi, interior):
    """x's element where the position is on x's grid, else 0 (x is read at a clamped
    position either way, so the loop stays branch-free)."""
    b, shape = ctx.b, ctx.in_avals[0].shape
    if ctx.in_avals[0].size == 0:
        return ctx.const(0)
    ok, multi = ir.Constant(ir.IntType(1), 1), []
    for v, n, l, s in zip(index.multi, shape, lo, interior):
        t = b.sub(v, i64(l))
        ok = b.and_(ok, b.icmp_signed(">=", t, i64(0)))
        ok = b.and_(ok, b.icmp_signed("<=", t, i64((n - 1) * (s + 1))))
        t = b.select(b.icmp_signed("<", t, i64(0)), i64(0), t)
        if s:
            ok = b.and_(ok, b.icmp_unsigned("==", b.urem(t, i64(s + 1)), i64(0)))
            t = b.udiv(t, i64(s + 1))
        multi.append(b.select(b.icmp_signed(">", t, i64(n - 1)), i64(n - 1), t))
    return b.select(ok, read(0, ctx.index(shape, multi=multi)), ctx.const(0))


def checked_index(ctx, j, dtype, n, kernel, axis):
    """Index value j (of integer dtype `dtype`) checked against an axis of extent n, and
    clamped into [0, n) (None if n == 0: any index fails)."""
    j = ctx.convert(j, dtype, np.int64)
    where = f" (in {kernel!r} node created at {ctx.source})" if ctx.source else ""
    ctx.check_range(j, n, f"{kernel}: index {{value}} is out of bounds for axis {axis} of "
                          f"size {n}{where}", OutOfBoundsError)
    if n:
        return ctx.intrinsic("smin", ctx.intrinsic("smax", j, i64(0)), i64(n - 1))


def _take(ctx, index, read, *, axis):
    x, idx = ctx.in_avals
    n, k = x.shape[axis], idx.ndim
    m = index.multi
    j = checked_index(ctx, read(1, ctx.index(idx.shape, multi=m[axis:axis + k])), idx.dtype,
                      n, "take", axis)
    if n == 0:
        return ctx.const(0)
    return read(0, ctx.index(x.shape, multi=m[:axis] + [j] + m[axis + k:]))


def _concatenate(ctx, ins, outs, *, axis):
    """One copy loop per operand (its producers fused) into its slab of the output."""
    out, offset = outs[0], 0
    for op in ins:
        with ctx.nest(op.aval.shape) as m:
            pos = m[:axis] + [_affine(ctx.b, m[axis], 1, offset)] + m[axis + 1:]
            out.store(pos, op.read(m))
        offset += op.aval.shape[axis]


def scatter_into(ctx, out, upd, idx, kernel, combine, axis=0):
    """out[..., idx[j], ...] = combine(out[...], upd[..., j, ...]) along `axis`, for j in
    order (so the last of repeated indices is applied last), at checked indices; combine
    None stores the update."""
    k, size = idx.aval.ndim, out.aval.shape[axis]
    if upd.aval.size == 0:
        return
    with ctx.nest(upd.aval.shape) as m:
        j = checked_index(ctx, idx.read(m[axis:axis + k]), idx.aval.dtype, size, kernel, axis)
        if size:
            pos = m[:axis] + [j] + m[axis + k:]
            v = upd.read(m)
            out.store(pos, v if combine is None else combine(ctx, out.load(pos), v))


def _scatter_add(ctx, ins, outs, *, axis, size):
    """Zero the output, then add each update at its checked index (sequential)."""
    upd, idx = ins
    out = outs[0]
    with ctx.loop(0, out.aval.size) as i:
        out.store_flat(i, ctx.const(0))
    scatter_into(ctx, out, upd, idx, "scatter_add", arith("add", out.aval.dtype), axis)


def _scatter(ctx, ins, outs, *, how):
    """x copied, then each update combined into its row (tracer.lax.scatters' semantics)."""
    x, upd, idx = ins
    out = outs[0]
    with ctx.nest(x.aval.shape) as m:
        out.store(m, x.read(m))
    scatter_into(ctx, out, upd, idx, "scatter",
                 None if how == "set" else arith(how, out.aval.dtype))


def _same_shape(in_avals, out_aval, **attrs):
    return in_avals[0].size == 1 or in_avals[0].shape == out_aval.shape


KERNELS = {
    "broadcast_to": IndexMap(_broadcast_to, flat_ok=_same_shape),
    "reshape": IndexMap(_reshape, flat_ok=lambda in_avals, out_aval, **a: True),
    "transpose": IndexMap(_transpose),
    "slice": IndexMap(_slice),
    "rev": IndexMap(_rev),
    "pad": IndexMap(_pad),
    "take": IndexMap(_take),
    "concatenate": KernelEmitter(_concatenate),
    "scatter_add": KernelEmitter(_scatter_add),
    "scatter": KernelEmitter(_scatter),
    "checkpoint_name": ScalarKernel(lambda ctx, x, *, name: x, cost=0),
}
