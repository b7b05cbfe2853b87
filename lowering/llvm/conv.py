"""Convolution as generated LLVM IR: im2col rows gathered straight into the packed matmul.

The `conv` kernel's canonical layout is channels-last (tracer.lax.conv): x (N, *sp, C),
w (*k, Cg, O), out (N, *osp, O). Viewed as a matmul per feature group g, out[:, g] =
A_g @ B_g with one row of A per output pixel (its window: for each window position, a
run of Cg contiguous channels of x, or zeros where the window covers padding or a hole
of the lhs dilation) and B_g = w[..., g*Og:(g+1)*Og] reshaped (K*Cg, Og). B is packed
once per call into NR-column panels (the `prepare` step); the row function walks output
rows in chunks, K in blocks, and for each register tile gathers its MR x KC slice of A
from x into the stack buffer that matmul.py's micro-kernel reads — the only copy of A
that the plain matmul makes anyway, so im2col costs no extra pass over memory. Rows are
independent work items, split across threads. Empty shapes run the NumPy kernel.

The register tiles are the matmul library's (lowering.llvm.matmul_shared: compiled once
per process and CPU, disk-cached), so a node's own code is its pack, gather and loops.
Emitted per node, its tiles had been most of a CNN's compile time: W20's first call on
AVX2 spent 1.3 s in LLVM's optimizer and 1.35 s emitting, against jax's 1.36 s in all.
"""
import numpy as np

from ir.errors import DTypeError
from lowering.llvm import matmul as mm, matmul_shared
from lowering.llvm.irtext import BYTES, Body
from lowering.llvm.irutil import I64, PTR
from lowering.llvm.protocol import KernelEmitter
from lowering.settings import settings
from llvmlite import ir



class _Shape:
    """Static geometry of one conv node."""

    def __init__(self, in_avals, out_aval, strides, pads, ldil, rdil, groups):
        x, w = in_avals
        self.dtype, self.groups = x.dtype, groups
        self.sp, self.osp, self.ksp = x.shape[1:-1], out_aval.shape[1:-1], w.shape[:-2]
        self.c, self.cg, self.o = x.shape[-1], w.shape[-2], w.shape[-1]
        self.og = self.o // groups
        self.m = out_aval.shape[0] * int(np.prod(self.osp, dtype=np.int64))
        self.kw = int(np.prod(self.ksp, dtype=np.int64))
        self.kdim = self.kw * self.cg
        self.strides, self.pads, self.ldil, self.rdil = strides, pads, ldil, rdil
        self.elems, self.vl, _, nv = mm.tile_geometry(self.dtype)   # (compute, memory)
        self.elem, self.isz = self.elems[0], BYTES[self.elems[0]]
        self.nr = self.vl * nv
        self.npan = -(-self.og // self.nr)

    def native(self):
        return self.m > 0 and self.og > 0 and self.kdim > 0

    def scratch(self):
        return self.groups * self.npan * self.kdim * self.nr * self.isz


def _shape(in_avals, out_avals, strides, pads, ldil, rdil, groups):
    return _Shape(in_avals, out_avals[0], strides, pads, ldil, rdil, groups)


def _pack(sym, s):
    """B_g panels: panel p of group g holds, for each kk, w[kk, g*Og + p*NR : +NR]."""
    f, vec, edge = Body(*s.elems), f"<{s.nr} x {s.elem}>", s.og % s.nr

    def row(g, kk):
        src = f.mgep("%w", f.add(f.mul(kk, s.o), f.mul(g, s.og)))
        dst = f.gep("%scratch", f.add(f.mul(g, s.npan * s.kdim * s.nr), f.mul(kk, s.nr)))
        f.loop(0, s.og // s.nr, lambda p: f.store(vec, f.mload(s.nr, f.mgep(src, f.mul(p, s.nr))),
                                                  f.gep(dst, f.mul(p, s.kdim * s.nr))))
        if edge:
            last = (s.npan - 1) * s.nr
            f.store(vec, f.mload(s.nr, f.mgep(src, last), edge), f.gep(dst, last * s.kdim))
    f.loop(0, s.groups, lambda g: f.loop(0, s.kdim, lambda kk: row(g, kk)))
    return f.text(f"void @\"{sym}_pack\"(ptr noalias %w, ptr noalias %scratch)")


def _digits(f, value, sizes):
    """Row-major coordinates of flat `value` (< the size of static shape `sizes`)."""
    out = []
    for d, n in enumerate(sizes):
        inner = int(np.prod(sizes[d + 1:], dtype=np.int64))
        q = value if inner == 1 else f(f"udiv i64 {value}, {inner}")
        out.append(q if d == 0 else f(f"urem i64 {q}, {n}"))
    return out


def _gather(sym, s, cc, lda, single):
    """`void sym.gather(ptr x, ptr abuf, i64 row, i64 size, i64 g, i64 wp0, i64 nw, i64 c0,
    i64 cc)`: abuf[r, j*cc + c] = x at output row `row`+r (r < size), window position
    wp0+j (j < nw), channel g*Cg + c0 + c (0 outside the operand or on a dilation hole).
    One function that every tile size calls, so LLVM optimizes the gather once; static
    values replace the arguments where known (`cc`; with a `single` K block, the whole
    window: the window loop then unrolls with constant offsets, 2x faster when C = 1)."""
    f, row, g, abuf = Body(*s.elems), "%row", "%g", "%abuf"
    wp0, nw, c0 = (0, s.kw, 0) if single else ("%wp0", "%nw", "%c0")

    def one_row(r):
        m = f.add(row, r)
        n, *opos = _digits(f, m, (s.m, *s.osp))
        base = f.gep(abuf, f.mul(r, lda))

        def window(j):
            kpos = _digits(f, f.add(wp0, j), s.ksp)
            ok, flat = "true", n
            for o, k, n_, st, (lo, _), ld, rd in zip(opos, kpos, s.sp, s.strides, s.pads,
                                                      s.ldil, s.rdil):
                pos = f(f"sub nsw i64 {f.add(f.mul(o, st), f.mul(k, rd))}, {lo}")
                inside = f(f"icmp ult i64 {pos}, {(n_ - 1) * ld + 1 if n_ else 0}")
                ok = f(f"and i1 {ok}, {inside}")
                if ld > 1:
                    on_grid = f(f"icmp eq i64 {f(f'urem i64 {pos}, {ld}')}, 0")
                    ok = f(f"and i1 {ok}, {on_grid}")
                    pos = f(f"udiv i64 {pos}, {ld}")
                flat = f.add(f.mul(flat, n_), pos)
            src = f.mgep("%x", f.add(f.mul(flat, s.c), f.add(f.mul(g, s.cg), c0)))
            dst = f.gep(base, f.mul(j, cc))
            copy, zero, done = f.fresh("copy"), f.fresh("zero"), f.fresh("done")
            f.emit(f"br i1 {ok}, label {copy}, label {zero}")
            f.label(copy)
            f.loop(0, cc, lambda c: f.store(s.elem, f.mload(None, f.mgep(src, c)), f.gep(dst, c)))
            f.emit(f"br label {done}")
            f.label(zero)
            f.loop(0, cc, lambda c: f.store(s.elem, "0" if s.elem[0] == "i" else "0.0",
                                            f.gep(dst, c)))
            f.emit(f"br label {done}")
            f.label(done)
        f.loop(0, nw, window)
    f.loop(0, "%size", one_row)
    return f.text(f"internal void @\"{sym}.gather\"(ptr noalias %x, ptr noalias %abuf, i64 %row, "
                  "i64 %size, i64 %g, i64 %wp0, i64 %nw, i64 %c0, i64 %cc)", "noinline")


def _rows(sym, s):
    """Rows [start, end) of the (M, O) output: chunks -> groups -> K blocks -> row tiles,
    each tile's slice of A gathered into a stack buffer laid out as the matmul library's
    row function lays out its copy of A, for the library's tiles to read."""
    f = Body(*s.elems)
    sizes, kce, lda = mm.a_block(s.dtype)
    nw_max, cc = (max(1, kce // s.cg), s.cg) if s.cg <= kce else (1, kce)
    chunk = sizes[0] * settings.conv_row_chunk   # rows stay in cache across K blocks

    def clamp(fn, x, y):
        return f(f"call i64 @llvm.{fn}.i64(i64 {x}, i64 {y})")

    f.emit(f"%abuf = alloca {s.elem}, i64 {sizes[0] * lda}, align 64")
    start, end = (clamp("smin", clamp("smax", x, 0), s.m) for x in ("%start", "%end"))
    rows = clamp("smax", f(f"sub nsw i64 {end}, {start}"), 0)
    nchunks = f(f"udiv i64 {f.add(rows, chunk - 1)}, {chunk}")

    def one_chunk(q):
        lo = f.add(start, f.mul(q, chunk))
        hi = clamp("smin", f.add(lo, chunk), end)

        def group(g):
            def k_block(wb, cb):
                wp0, c0 = f.mul(wb, nw_max), f.mul(cb, cc)
                nw = clamp("smin", f(f"sub nsw i64 {s.kw}, {wp0}"), nw_max)
                ccb = cc if s.cg <= kce else clamp("smin", f(f"sub nsw i64 {s.cg}, {c0}"), cc)
                kc = f.mul(nw, ccb)
                add = f(f"icmp ne i64 {f(f'or i64 {wb}, {cb}')}, 0")
                bpan = f.gep("%scratch", f.add(f.mul(g, s.npan * s.kdim * s.nr),
                                               f.mul(f.add(f.mul(wp0, s.cg), c0), s.nr)))

                def tile(size, row):
                    f.emit(f"call void @\"{sym}.gather\"(ptr %x, ptr %abuf, i64 {row}, "
                           f"i64 {size}, i64 {g}, i64 {wp0}, i64 {nw}, i64 {c0}, i64 {ccb})")
                    mm.call_tiles(f, matmul_shared.tile_stem(s.dtype, size), "%abuf", bpan,
                                  s.kdim, f.mgep("%out", f.add(f.mul(row, s.o), f.mul(g, s.og))),
                                  s.og, s.nr, kc, add, s.vl, ldc=s.o)
                mm.over_rows(f, lo, hi, sizes, tile)
            f.loop(0, -(-s.kw // nw_max), lambda wb: f.loop(0, -(-s.cg // cc),
                                                            lambda cb: k_block(wb, cb)))
        f.loop(0, s.groups, group)
    f.loop(0, nchunks, one_chunk)
    return "\n".join([f.text(f"void @\"{sym}\"(ptr noalias %x, ptr noalias %scratch, "
                             f"ptr noalias %out, i64 %start, i64 %end)"),
                      _gather(sym, s, cc if s.cg <= kce else "%cc", lda,
                              s.kw <= nw_max and s.cg <= kce)])


def _text(ctx, ins, outs, attrs):
    s = _shape([x.aval for x in ins], [o.aval for o in outs], **attrs)
    sym = ctx.unique("conv")
    return sym, s, _pack(sym, s) + "\n" + _rows(sym, s)


def _prepare(ctx, ins, outs, **attrs):
    sym, s, text = _text(ctx, ins, outs, attrs)
    ctx.b.call(ctx.external(sym + "_pack", ir.VoidType(), [PTR, PTR], text),
               [ins[1].ptr, ctx.scratch])


def _emit(ctx, ins, outs, **attrs):
    sym, s, text = _text(ctx, ins, outs, attrs)
    matmul_shared.declare_tiles(ctx.b.module, s.dtype)     # the library's tiles it calls
    fn = ctx.external(sym, ir.VoidType(), [PTR, PTR, PTR, I64, I64], text)
    ctx.b.call(fn, [ins[0].ptr, ctx.scratch, outs[0].ptr, ctx.start, ctx.end])


class _ConvEmitter(KernelEmitter):
    """Native for numeric dtypes the matmul tiles support and non-empty shapes; other
    nodes run the NumPy kernel inside the program (on purpose: no warning)."""

    def native(self, node):
        try:
            s = _shape([x.aval for x in node.inputs], [o.aval for o in node.outputs],
                       **node.attrs)
        except DTypeError:      # a dtype the tiles lack: the NumPy kernel runs it
            return False
        return s.native()


def _work(in_avals, out_avals, **attrs):
    s = _shape(in_avals, out_avals, **attrs)
    return 2.0 * s.m * s.kdim * s.og * s.groups / 50.0      # ~50 flop/ns on one core


KERNELS = {"conv": _ConvEmitter(_emit, fuse_inputs=False, prepare=_prepare, work=_work,
                                parallel=lambda i, o, **a: _shape(i, o, **a).m,
                                scratch=lambda i, o, **a: _shape(i, o, **a).scratch(),
                                epilogue=True)}
