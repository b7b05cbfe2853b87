"""Loops that read across their last two axes: the tiled walk (`tiled`: square blocks of
settings.transpose_tile items, so transposed reads stay in cache), and a materialized
transpose of the last two axes, moved through registers in V x V blocks
(V = elements per SIMD vector): V contiguous row loads, log2(V) rounds of shuffles, V
contiguous row stores.

Why: the tiled scalar loop that serves other transposing loops reads one side with a
stride, and LLVM vectorizes that with scatters on AVX-512 or element-wise on AVX2:
1024x1024 float32 took 2.4 ms (AVX-512) and 1.6 ms (AVX2), now 0.47 and 0.58 ms. A
block's rows are whole cache lines on both sides, so nothing needs to stay in cache
between blocks. Items of 4 and 8 bytes move as integers (NaN payloads are kept); other
sizes, and transposes fused with other work, keep the tiled loop. Rows or columns past
the last whole block take a scalar loop. Work items are those of the tiled loop
(schedule.launch): the leading axes' extent if it is over 1, else the output's rows.
"""
import contextlib
import math

import numpy as np
from llvmlite import ir

from lowering.llvm.cpu import CURRENT
from lowering.llvm.fusion import parallel_extent
from lowering.llvm.irutil import I32, PTR, i64
from lowering.llvm.protocol import Index
from lowering.settings import settings

LINE = 64    # bytes of a cache line: a block spans one of the source's


def lanes(dtype):
    """V for a dtype, or 0 when its items do not move in blocks."""
    size = np.dtype(dtype).itemsize
    return CURRENT.vector_bytes // size if size in (4, 8) else 0


# a tile's row loop stays a loop: fully unrolled, LLVM vectorized the column loop around it,
# with gathers and scatters
NOT_UNROLLED = ("llvm.loop.unroll.disable",)
# the items past the last whole block: a strided read LLVM would vectorize with gathers
# (AVX-512) where a call's rows are not known when compiled (a parallel piece, a segment)
SCALAR = (("llvm.loop.vectorize.enable", 0),)


def swaps_last_two(node):
    """Whether `node` transposes the last two axes only (x.T of a matrix, mT of a stack):
    the transposes this module and the matmul rewrite (lowering.llvm.rewrites) handle."""
    perm = node.attrs.get("perm") if node.kernel == "transpose" else None
    rank = len(perm or ())
    return rank >= 2 and tuple(perm) == (*range(rank - 2), rank - 1, rank - 2)


def applies(grp):
    """The group is one transpose of the last two axes of a materialized value."""
    if grp.kind != "loop" or not grp.tiled or len(grp.nodes) != 1 or len(grp.roots) != 1:
        return False
    node = grp.nodes[0]
    return (swaps_last_two(node) and any(x is node.inputs[0] for x in grp.leaves)
            and lanes(node.inputs[0].aval.dtype) > 0)


@contextlib.contextmanager
def tiled(ctx, grp, values):
    """The last two axes in square blocks of settings.transpose_tile items, so that
    transposed reads stay in cache; work items are the outer axes' first, or else the
    rows. The `staged` transposes are copied per tile into stack tiles (_stage_tiles),
    which `values` then reads."""
    b, shape, tile = ctx.b, grp.shape, settings.transpose_tile
    rows, cols, staged = shape[-2], shape[-1], _staged(grp, values.buffers)
    split_outer = parallel_extent(shape[:-2]) > 1
    with ctx.nest(shape[:-2], parallel=split_outer) as outer:
        lo, hi = (i64(0), i64(rows)) if split_outer else (ctx.start, ctx.end)
        ntiles = b.udiv(b.add(b.sub(hi, lo), i64(tile - 1)), i64(tile))
        with ctx.loop(0, ntiles, "ti") as ti:
            r0 = b.add(lo, b.mul(ti, i64(tile)))
            r1 = b.add(r0, i64(tile))
            r1 = b.select(b.icmp_signed("<", r1, hi), r1, hi)
            with ctx.loop(0, -(-cols // tile), "tj") as tj:
                c0 = b.mul(tj, i64(tile))
                c1 = b.add(c0, i64(tile))
                c1 = b.select(b.icmp_signed("<", c1, i64(cols)), c1, i64(cols))
                tiles = _stage_tiles(ctx, staged, shape, outer, r0, r1, c0, c1)
                with ctx.loop(r0, r1) as i, ctx.loop(c0, c1, "j", NOT_UNROLLED) as j:
                    index = Index(b, shape, multi=list(outer) + [i, j])
                    at = b.add(b.mul(b.sub(i, r0), i64(tile)), b.sub(j, c0))
                    values.tiles = {k: (index.key, ptr, at) for k, ptr in tiles.items()}
                    yield index


def _staged(grp, buffers):
    """[(transposed value, its source's buffer)] for a tiled loop group's transposes of
    the last two axes of materialized values, read at the loop's own position: the loop
    copies each tile of them through registers into a stack tile, then reads that in
    order (x.T * 2 over 1024x1024 float32: see tests/lowering/test_llvm_transpose.py)."""
    return [(n.outputs[0], buffers[id(n.inputs[0])]) for n in grp.nodes
            if swaps_last_two(n) and id(n.inputs[0]) in buffers
            and n.outputs[0].aval.shape == tuple(grp.shape) and lanes(n.outputs[0].aval.dtype)]


def _mask(indices):
    return ir.Constant(ir.VectorType(I32, len(indices)), indices)


def _swap_round(b, vectors, bit, v):
    """Exchange bit `bit` of the row and column index of every element."""
    s = 1 << bit
    out = list(vectors)
    for r in range(v):
        if r & s:
            continue
        lo = [c if not c & s else v + c - s for c in range(v)]
        hi = [c + s if not c & s else v + c for c in range(v)]
        out[r] = b.shuffle_vector(vectors[r], vectors[r + s], _mask(lo))
        out[r + s] = b.shuffle_vector(vectors[r], vectors[r + s], _mask(hi))
    return out


def _move_block(b, vec, size, src_row, dst_row):
    """One v x v block: dst_row(c)[r] = src_row(r)[c], each row a pointer to v items."""
    v = vec.count
    rows = [b.load(src_row(r), typ=vec, align=size) for r in range(v)]
    for bit in range(v.bit_length() - 1):
        rows = _swap_round(b, rows, bit, v)
    for c, x in enumerate(rows):
        b.store(x, dst_row(c), align=size)


def emit(ctx, src, dst, shape, dtype):
    """dst[..., i, j] = src[..., j, i] over this call's work items; shape is dst's."""
    b, v, size = ctx.b, lanes(dtype), np.dtype(dtype).itemsize
    elem = ir.IntType(8 * size)
    vec = ir.VectorType(elem, v)
    rows, cols = shape[-2], shape[-1]           # of dst; src is cols x rows
    line = max(v, LINE // size)                 # dst rows per block: a src cache line
    if parallel_extent(shape[:-2]) > 1:
        matrices, lo, hi = ctx.loop(ctx.start, ctx.end, "m"), i64(0), i64(rows)
    else:
        matrices, lo, hi = ctx.loop(0, math.prod(shape[:-2]), "m"), ctx.start, ctx.end

    def at(ptr, base, i, j, stride):
        return b.gep(ptr, [b.add(base, b.add(b.mul(i, i64(stride)), j))], inbounds=True,
                     source_etype=elem)

    with matrices as m:
        base = b.mul(m, i64(rows * cols))
        blocks = b.udiv(b.sub(hi, lo), i64(line))
        whole = b.add(lo, b.mul(blocks, i64(line)))
        with ctx.loop(0, blocks, "bi") as bi, ctx.loop(0, cols // v, "bj") as bj:
            j0 = b.mul(bj, i64(v))
            for part in range(0, line, v):      # the v x v pieces of one src line
                i0 = b.add(lo, b.add(b.mul(bi, i64(line)), i64(part)))
                _move_block(b, vec, size, lambda r: at(src, base, b.add(j0, i64(r)), i0, rows),
                            lambda c: at(dst, base, b.add(i0, i64(c)), j0, cols))
        # the rest one by one: columns past the last block, then rows past the last block
        for r0, r1, c0 in ((lo, whole, cols // v * v), (whole, hi, 0)):
            with ctx.loop(r0, r1, "ri") as i, ctx.loop(c0, cols, "rj", SCALAR) as j:
                b.store(b.load(at(src, base, j, i, rows), typ=elem), at(dst, base, i, j, cols))


def _stage_tiles(ctx, staged, shape, outer, r0, r1, c0, c1):
    """Copy each staged value's tile [r0, r1) x [c0, c1) (at the leading index `outer`)
    into a square stack tile of settings.transpose_tile items: whole tiles by register
    blocks, the edge ones item by item. Returns {id(value): stack tile}."""
    b, rows, tile = ctx.b, shape[-2], settings.transpose_tile
    base = Index(b, shape, multi=list(outer) + [i64(0), i64(0)]).flat
    whole = b.and_(b.icmp_signed("==", b.sub(r1, r0), i64(tile)),
                   b.icmp_signed("==", b.sub(c1, c0), i64(tile)))
    tiles = {}
    for x, src in staged:
        size = x.aval.dtype.itemsize
        elem = ir.IntType(8 * size)
        vec = ir.VectorType(elem, lanes(x.aval.dtype))
        with b.goto_entry_block():
            buf = b.alloca(ir.ArrayType(elem, tile * tile))
        buf.type = PTR      # llvmlite types an alloca's pointer; address it as the others

        def src_at(j, i):       # the value's item (i, j) is src's (j, i)
            return b.gep(src, [b.add(base, b.add(b.mul(j, i64(rows)), i))], inbounds=True,
                         source_etype=elem)

        def buf_at(i, j):
            return b.gep(buf, [b.add(b.mul(i, i64(tile)), j)], inbounds=True, source_etype=elem)

        with b.if_else(whole) as (blocks, items):
            with blocks:
                v = vec.count
                for bi in range(0, tile, v):
                    for bj in range(0, tile, v):
                        i0, j0 = b.add(r0, i64(bi)), b.add(c0, i64(bj))
                        _move_block(b, vec, size, lambda r: src_at(b.add(j0, i64(r)), i0),
                                    lambda c: buf_at(i64(bi + c), i64(bj)))
            with items:
                with ctx.loop(r0, r1, "si") as i, ctx.loop(c0, c1, "sj") as j:
                    b.store(b.load(src_at(j, i), typ=elem), buf_at(b.sub(i, r0), b.sub(j, c0)))
        # an empty asm that may read the tile: without it LLVM forwards the tile's
        # stores to the loop's loads and rebuilds the strided reads (gathers, scatters)
        b.call(ir.InlineAsm(ir.FunctionType(ir.VoidType(), [PTR]), "", "r,~{memory}",
                            side_effect=True), [buf])
        tiles[id(x)] = buf
    return tiles
