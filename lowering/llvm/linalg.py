"""Linear algebra: matmul, a call of the packed-B, register-tiled library kernel of
lowering.llvm.matmul (compiled once per process, lowering.llvm.matmul_shared) for numeric
dtypes (B packed once per call into the scratch buffer, then rows of C on whole register
tiles, each split across threads), and a plain i-k-j loop for bool (or of ands, as
NumPy); the decompositions of tracer.numpy.linalg (LAPACK) run their NumPy kernels inside
the compiled program, on purpose: LAPACK is what NumPy itself calls."""
import numpy as np

from lowering.llvm import conv_shared, irutil, matmul as mm, matmul_shared
from lowering.llvm.irutil import I64, PTR, i64
from lowering.llvm.protocol import KernelEmitter, NumpyInProgram
from lowering.llvm.scalars import arith
from llvmlite import ir

VOID = ir.VoidType()


def _dims(in_avals, transpose_a=False, transpose_b=False):
    """(batch, m, k, n); the llvm rewrites (lowering.llvm.rewrites) set transpose_a/_b
    when an operand is given transposed: A as (.., k, m), B as (.., n, k)."""
    a, b = in_avals
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    m, k = a.shape[-2:][::-1] if transpose_a else a.shape[-2:]
    return batch, m, k, b.shape[-2] if transpose_b else b.shape[-1]


def _native(in_avals, **attrs):
    batch, m, k, n = _dims(in_avals, **attrs)
    return in_avals[0].dtype.kind != "b" and batch * m * n > 0


def _library(ctx, ins, attrs, pack=False):
    """The matmul library function (lowering.llvm.matmul_shared) for this node's dtype
    and transposes, declared in the module: the row function, or the pack function."""
    sym = matmul_shared.symbol(ins[0].aval.dtype, **attrs)
    if pack:
        return irutil.intrinsic(ctx.b.module, sym + "_pack", VOID, [PTR, PTR] + [I64] * 6)
    return irutil.intrinsic(ctx.b.module, sym, VOID, [PTR, PTR, PTR, I64, I64, I64, I64, I64, I64])


def library_declarations(graph):
    """Declarations of the matmul and conv libraries that `graph`'s (and its regions')
    matmuls and convolutions call, for target.prefetch: a library missing from the caches
    (~0.7 s of CPU for float32 matmul) starts compiling before partitioning and codegen,
    where it was the last thing a deep MLP's first call waited for. The transposes are
    left to codegen (one library serves them all)."""
    symbols = set()

    def visit(g):
        for n in g.nodes:
            x = n.inputs[0].aval if n.inputs else None
            if n.kernel == "matmul" and _native([i.aval for i in n.inputs], **n.attrs):
                symbols.add(matmul_shared.symbol(x.dtype))
            elif n.kernel == "conv" and conv_shared.KERNELS["conv"].native(n):
                symbols.update((matmul_shared.symbol(x.dtype),
                                conv_shared.symbol(x.dtype, x.ndim - 2) + ".rows"))
            for r in n.regions:
                visit(r)
    visit(graph)
    return "\n".join(f'declare void @"{s}"()' for s in sorted(symbols))


def _prepare(ctx, ins, outs, **attrs):
    if _native([x.aval for x in ins], **attrs):
        batch, m, k, n = _dims([x.aval for x in ins], **attrs)
        ctx.b.call(_library(ctx, ins, attrs, pack=True),
                   [ins[1].ptr, ctx.scratch, i64(batch), i64(k), i64(n),
                    i64(_pack_plan([x.aval for x in ins], **attrs)[0]), ctx.start, ctx.end])


def _matmul(ctx, ins, outs, **attrs):
    a, bm = ins
    c, b = outs[0], ctx.b
    batch, m, k, n = _dims([x.aval for x in ins], **attrs)
    if _native([x.aval for x in ins], **attrs):
        b.call(_library(ctx, ins, attrs), [a.ptr, ctx.scratch, c.ptr, ctx.start, ctx.end,
                                           i64(batch), i64(m), i64(k), i64(n)])
        return
    add, mul = arith("add", c.aval.dtype), arith("mul", c.aval.dtype)
    with ctx.loop(ctx.start, ctx.end) as row:          # bool: C[row, j] = or_k A[row, k] & B[k, j]
        i, batch_at = b.urem(row, i64(max(m, 1))), b.udiv(row, i64(max(m, 1)))
        a_row, b_mat = b.mul(batch_at, i64(m * k)), b.mul(batch_at, i64(k * n))
        with ctx.loop(0, n) as j:
            acc = ctx.slot(ctx.const(0))
            with ctx.loop(0, k) as kk:
                x = a.read_flat(b.add(a_row, _at(b, i, kk, m, k, attrs.get("transpose_a"))))
                y = bm.read_flat(b.add(b_mat, _at(b, kk, j, k, n, attrs.get("transpose_b"))))
                b.store(add(ctx, b.load(acc), mul(ctx, x, y)), acc)
            c.store_flat(b.add(b.mul(row, i64(n)), j), b.load(acc))


def _at(b, i, j, rows, cols, transposed):
    """Flat offset of element (i, j) of a rows x cols matrix stored row-major, or its
    transpose."""
    return b.add(b.mul(j, i64(rows)), i) if transposed else b.add(b.mul(i, i64(cols)), j)


def _scratch(in_avals, out_avals, **attrs):
    batch, m, k, n = _dims(in_avals, **attrs)
    return mm.scratch_bytes(batch, m, k, n, in_avals[0].dtype) if _native(in_avals, **attrs) else 0


def _rows(in_avals, out_avals, **attrs):
    batch, m, k, n = _dims(in_avals, **attrs)
    return batch * m


def _pack_plan(in_avals, **attrs):
    batch, m, k, n = _dims(in_avals, **attrs)
    return mm.pack_plan(batch, k, n, in_avals[0].dtype, attrs.get("transpose_b", False))


def _pack_items(in_avals, out_avals, **attrs):
    """The pack's work items: split across threads as the rows are (a 1024 x 1024 float32
    B took ~1 ms to pack on one thread while the other waited)."""
    return _pack_plan(in_avals, **attrs)[1] if _native(in_avals, **attrs) else 1


def _work(in_avals, out_avals, **attrs):
    batch, m, k, n = _dims(in_avals, **attrs)
    return 2 * batch * m * n * k / 50.0       # ~50 flop/ns on one core


def _grain(in_avals, out_avals, **attrs):
    """Split the rows on whole register tiles when they line up with the flattened rows
    (standalone 5-9% faster than on 16-row boundaries)."""
    batch, m, k, n = _dims(in_avals, **attrs)
    mr = mm.tile_rows(in_avals[0].dtype) if _native(in_avals, **attrs) else 0
    return mr if mr and (batch == 1 or m % mr == 0) else None


_LAPACK = NumpyInProgram("LAPACK through NumPy")
KERNELS = {"matmul": KernelEmitter(_matmul, fuse_inputs=False, parallel=_rows,
                                   scratch=_scratch, work=_work, prepare=_prepare,
                                   prepare_items=_pack_items,
                                   epilogue=True, grain=_grain),
           **dict.fromkeys(("solve", "slogdet", "cholesky", "qr", "eigh", "svd"), _LAPACK)}
