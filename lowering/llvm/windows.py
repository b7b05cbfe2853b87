"""Sliding windows as index maps that fuse into their consumer's loop: `reduce_window`
(sum, max or min over each window) and `tile_scatter` (the pooling gradient when windows
tile the operand). The ops, shape rules and gradients are tracer.lax.window's.

A window's elements are read in turn, unrolled: positions on padding or on a hole of the
base dilation give the init value, and every read position is clamped into the operand,
so the loop stays branch-free and never reads out of bounds.
"""
import itertools

import numpy as np
from llvmlite import ir

from ir.types import dtype_kind, saturated
from lowering.llvm.irutil import i64
from lowering.llvm.protocol import IndexMap
from lowering.llvm.scalars import arith


def _reduce_window(ctx, index, read, *, op, init, window, strides, pads, bdil):
    """The window's elements combined in turn as NumPy's ufunc does."""
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


class WindowMap(IndexMap):
    """Native for windows of up to MAX_WINDOW elements (each is unrolled) over a non-empty
    operand; others run the NumPy kernel in the program, on purpose."""
    MAX_WINDOW = 64

    def native(self, node):
        return node.inputs[0].aval.size > 0 and \
            int(np.prod(node.attrs["window"])) <= self.MAX_WINDOW


def _tile_scatter(ctx, index, read, *, op, window):
    """dx at one position: dy of its window where the position is the window's first
    extreme (everywhere for add), found by reading the window (K reads, a strict compare
    keeps the first; NaN wins, as in NumPy's argmax); 0 on the rim no window covers."""
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


KERNELS = {"reduce_window": WindowMap(_reduce_window), "tile_scatter": IndexMap(_tile_scatter)}
