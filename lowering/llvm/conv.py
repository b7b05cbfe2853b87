"""Convolution as a library: im2col rows gathered straight into the packed matmul.

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

The code is compiled once per process, CPU, dtype and number of spatial dimensions and
kept in the disk cache (lowering.llvm.conv_shared), as the matmul library is: a node
passes its geometry (`Shape.geometry`) and the matmul library's register tiles as
arrays built on its stack, so it compiles two calls. Emitted per node with its geometry
as constants, each convolution of a CNN's step cost ~100 ms of LLVM's time (W20: five).
"""
import numpy as np

from lowering.llvm import matmul as mm
from lowering.llvm.irtext import BYTES, Body
from lowering.settings import settings

# the geometry a node passes (i64s): these scalars, then each per-dimension row (one value
# per spatial dimension). The pack writes the window's offsets (k * rhs dilation per
# dimension, for each of its kw positions) into the scratch after B's panels, at i64
# `table`: as constants, a big window's made the node's own code slow to compile.
SCALARS = ("m", "opix", "c", "cg", "o", "og", "groups", "kdim", "npan", "kw", "nw_max", "cc",
           "chunk", "table", "dilated")
PER_DIM = ("osp", "oinner", "sp", "stride", "pad", "ldil", "extent", "ksp", "kinner", "rdil")


class Shape:
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
        """Bytes: B's panels, then the window's offsets."""
        return 8 * (self._table() + self.kw * len(self.osp))

    def _table(self):
        return -(-self.groups * self.npan * self.kdim * self.nr * self.isz // 8)

    def geometry(self):
        """The i64s the library reads (SCALARS, then PER_DIM): K blocks of
        whole window positions of all Cg channels, or of KC channels of one position."""
        sizes, kce, _ = mm.a_block(self.dtype)
        nw_max, cc = (max(1, kce // self.cg), self.cg) if self.cg <= kce else (1, kce)
        osp = list(self.osp)
        scalars = dict(m=self.m, opix=int(np.prod(osp, dtype=np.int64)), c=self.c, cg=self.cg,
                       o=self.o, og=self.og, groups=self.groups, kdim=self.kdim,
                       npan=self.npan, kw=self.kw, nw_max=nw_max, cc=cc,
                       chunk=sizes[0] * settings.conv_row_chunk, table=self._table(),
                       dilated=int(any(ld > 1 for ld in self.ldil)))
        rows = dict(osp=osp, oinner=[int(np.prod(osp[d + 1:], dtype=np.int64))
                                     for d in range(len(osp))],
                    sp=list(self.sp), stride=list(self.strides), pad=[lo for lo, _ in self.pads],
                    ldil=list(self.ldil),
                    extent=[(n - 1) * ld + 1 if n else 0 for n, ld in zip(self.sp, self.ldil)],
                    ksp=list(self.ksp), rdil=list(self.rdil),
                    kinner=[int(np.prod(self.ksp[d + 1:], dtype=np.int64))
                            for d in range(len(self.ksp))])
        return [scalars[k] for k in SCALARS] + [v for k in PER_DIM for v in rows[k]]


def shape(in_avals, out_avals, strides, pads, ldil, rdil, groups):
    return Shape(in_avals, out_avals[0], strides, pads, ldil, rdil, groups)


class _Geometry:
    """The geometry's values in the library's IR, loaded at a function's entry."""

    def __init__(self, f, rank):
        self.f = f
        for i, name in enumerate(SCALARS):
            setattr(self, name, self._at(i))
        self.dims = {name: [self._at(len(SCALARS) + j * rank + d) for d in range(rank)]
                     for j, name in enumerate(PER_DIM)}

    def _at(self, index):
        return self.f.load("i64", self.f.gep("%geom", index, "i64"))


def _pack(sym, elems, nr, rank):
    """B_g panels: panel p of group g holds, for each kk, w[kk, g*Og + p*NR : +NR] (zeros
    past Og); then the window's offsets."""
    f, vec = Body(*elems), f"<{nr} x {elems[0]}>"
    s = _Geometry(f, rank)
    full, edge = f.div(s.og, nr), f(f"urem i64 {s.og}, {nr}")
    lanes = f.mask(nr, edge)

    def row(g, kk):
        src = f.mgep("%w", f.add(f.mul(kk, s.o), f.mul(g, s.og)))
        dst = f.gep("%scratch", f.add(f.mul(g, f.mul(s.npan, f.mul(s.kdim, nr))), f.mul(kk, nr)))
        f.loop(0, full, lambda p: f.store(vec, f.mload(nr, f.mgep(src, f.mul(p, nr))),
                                          f.gep(dst, f.mul(p, f.mul(s.kdim, nr)))))
        f.loop(full, s.npan, lambda p: f.store(vec, f.mload(nr, f.mgep(src, f.mul(p, nr)), lanes),
                                               f.gep(dst, f.mul(p, f.mul(s.kdim, nr)))))
    f.loop(0, s.groups, lambda g: f.loop(0, s.kdim, lambda kk: row(g, kk)))
    table = f.gep("%scratch", s.table, "i64")

    def offsets(j):
        for d in range(rank):
            k = f(f"urem i64 {f.div(j, s.dims['kinner'][d])}, {s.dims['ksp'][d]}")
            f.store("i64", f.mul(k, s.dims["rdil"][d]),
                    f.gep(table, f.add(f.mul(j, rank), d), "i64"))
    f.loop(0, s.kw, offsets)
    return f.text(f"void @\"{sym}.pack\"(ptr noalias %w, ptr noalias %scratch, "
                  f"ptr noalias %geom)", "noinline")


def _gather(sym, elems, rank, lda):
    """`void sym.gather(ptr x, ptr abuf, i64 row, i64 size, i64 g, i64 wp0, i64 nw, i64 c0,
    i64 cc, ptr geom, ptr scratch)`: abuf[r, j*cc + c] = x at output row `row`+r (r <
    size), window position wp0+j (j < nw), channel g*Cg + c0 + c (0 outside the operand or
    on a dilation hole). One function that every tile size calls."""
    f, row, g, abuf = Body(*elems), "%row", "%g", "%abuf"
    s = _Geometry(f, rank)
    table = f.gep("%scratch", s.table, "i64")
    zero = "0" if elems[0][0] == "i" else "0.0"
    # the output row's coordinates (n, *opos): divided out for the first row, then counted
    # up row by row. With four divisions a row by run-time sizes, one channel copied by a
    # loop and the dilation's divisions done always, W15's and W20's steps took 1.1-1.5x
    # the per-node code's (on a busy host); with the three changes, within noise of it
    # (TRACER_NUM_THREADS=1 python examples/bench_steps.py --only W15,W20 --cpu)
    digits = [f(f"alloca i64", "dig") for _ in range(rank + 1)]
    first = [f.div(row, s.opix)] + [f(f"urem i64 {f.div(row, inner)}, {size}")
                                    for inner, size in zip(s.dims["oinner"], s.dims["osp"])]
    for slot, value in zip(digits, first):
        f.store("i64", value, slot)

    def run(body):
        """body(c) for c in [0, cc): alone, without a loop, when cc is 1 (one channel)."""
        one, many, joined = f.fresh("one"), f.fresh("many"), f.fresh("ran")
        f.emit(f"br i1 {f('icmp eq i64 %cc, 1')}, label {one}, label {many}")
        f.label(one)
        body(0)
        f.emit(f"br label {joined}")
        f.label(many)
        f.loop(0, "%cc", body)
        f.emit(f"br label {joined}")
        f.label(joined)

    def one_row(r, dilated):
        n, *opos = (f.load("i64", slot) for slot in digits)
        base = f.gep(abuf, f.mul(r, lda))

        def window(j):
            ok, flat = "true", n
            for d, o in enumerate(opos):
                st, lo, ld, n_, ext = (s.dims[k][d]
                                       for k in ("stride", "pad", "ldil", "sp", "extent"))
                off = f.load("i64", f.gep(table, f.add(f.mul(f.add("%wp0", j), rank), d), "i64"))
                pos = f(f"sub nsw i64 {f.add(f.mul(o, st), off)}, {lo}")
                ok = f(f"and i1 {ok}, {f(f'icmp ult i64 {pos}, {ext}')}")
                if dilated:
                    rem = f(f"urem i64 {pos}, {ld}")
                    ok = f(f"and i1 {ok}, {f(f'icmp eq i64 {rem}, 0')}")
                    pos = f(f"udiv i64 {pos}, {ld}")
                flat = f.add(f.mul(flat, n_), pos)
            src = f.mgep("%x", f.add(f.mul(flat, s.c), f.add(f.mul(g, s.cg), "%c0")))
            dst = f.gep(base, f.mul(j, "%cc"))
            copy, blank, done = f.fresh("copy"), f.fresh("zero"), f.fresh("done")
            f.emit(f"br i1 {ok}, label {copy}, label {blank}")
            f.label(copy)
            run(lambda c: f.store(f.elem, f.mload(None, f.mgep(src, c)), f.gep(dst, c)))
            f.emit(f"br label {done}")
            f.label(blank)
            run(lambda c: f.store(f.elem, zero, f.gep(dst, c)))
            f.emit(f"br label {done}")
            f.label(done)
        f.loop(0, "%nw", window)
        carry = "true"
        for slot, value, size in reversed(list(zip(digits, [n, *opos], [None, *s.dims["osp"]]))):
            up = f.add(value, f(f"zext i1 {carry} to i64"))
            if size is not None:
                carry = f(f"icmp eq i64 {up}, {size}")
                up = f(f"select i1 {carry}, i64 0, i64 {up}")
            f.store("i64", up, slot)
    yes, no, done = f.fresh("dilated"), f.fresh("plain"), f.fresh("gathered")
    f.emit(f"br i1 {f(f'icmp ne i64 {s.dilated}, 0')}, label {yes}, label {no}")
    for label, dilated in ((yes, True), (no, False)):     # divisions only if lhs-dilated
        f.label(label)
        f.loop(0, "%size", lambda r: one_row(r, dilated))
        f.emit(f"br label {done}")
    f.label(done)
    return f.text(f"internal void @\"{sym}.gather\"(ptr noalias %x, ptr noalias %abuf, i64 %row, "
                  "i64 %size, i64 %g, i64 %wp0, i64 %nw, i64 %c0, i64 %cc, ptr noalias %geom, "
                  "ptr noalias %scratch)",
                  "noinline")


def _rows(sym, elems, vl, nr, sizes, lda, rank):
    """Rows [start, end) of the (M, O) output: chunks -> groups -> K blocks -> row tiles,
    each tile's slice of A gathered into a stack buffer laid out as the matmul library's
    row function lays out its copy of A, for the library's tiles (%tiles: pointers to
    matmul_shared.tiles' in order) to read."""
    f = Body(*elems)
    s, nv = _Geometry(f, rank), nr // vl
    f.emit(f"%abuf = alloca {f.elem}, i64 {sizes[0] * lda}, align 64")
    start, end = (f.clamp("smin", f.clamp("smax", x, 0), s.m) for x in ("%start", "%end"))
    nchunks = f.div(f.clamp("smax", f(f"sub nsw i64 {end}, {start}"), 0), s.chunk, up=True)

    def one_chunk(q):
        lo = f.add(start, f.mul(q, s.chunk))
        hi = f.clamp("smin", f.add(lo, s.chunk), end)

        def group(g):
            def k_block(wb, cb):
                wp0, c0 = f.mul(wb, s.nw_max), f.mul(cb, s.cc)
                nw = f.clamp("smin", f(f"sub nsw i64 {s.kw}, {wp0}"), s.nw_max)
                ccb = f.clamp("smin", f(f"sub nsw i64 {s.cg}, {c0}"), s.cc)
                kc = f.mul(nw, ccb)
                add = f(f"icmp ne i64 {f(f'or i64 {wb}, {cb}')}, 0")
                bpan = f.gep("%scratch", f.add(f.mul(g, f.mul(s.npan, f.mul(s.kdim, nr))),
                                               f.mul(f.add(f.mul(wp0, s.cg), c0), nr)))

                def tile(size, row):
                    f.emit(f"call void @\"{sym}.gather\"(ptr %x, ptr %abuf, i64 {row}, "
                           f"i64 {size}, i64 {g}, i64 {wp0}, i64 {nw}, i64 {c0}, i64 {ccb}, "
                           f"ptr %geom, ptr %scratch)")
                    at = sizes.index(size) * nv - 1
                    mm.call_tiles(f, lambda v: f.load("ptr", f.gep("%tiles", at + v, "ptr")),
                                  "%abuf", bpan, s.kdim,
                                  f.mgep("%out", f.add(f.mul(row, s.o), f.mul(g, s.og))),
                                  s.og, nr, kc, add, vl, ldc=s.o)
                mm.over_rows(f, lo, hi, sizes, tile)
            f.loop(0, f.div(s.kw, s.nw_max, up=True), lambda wb: f.loop(
                0, f.div(s.cg, s.cc, up=True), lambda cb: k_block(wb, cb)))
        f.loop(0, s.groups, group)
    f.loop(0, nchunks, one_chunk)
    return f.text(f"void @\"{sym}.rows\"(ptr noalias %x, ptr noalias %scratch, ptr noalias %out, "
                  "i64 %start, i64 %end, ptr noalias %geom, ptr noalias %tiles)", "noinline")


def conv_ir(base, dtype, rank):
    """LLVM IR text of the library for `dtype` and `rank` spatial dimensions:
      define void @<base>.pack(ptr noalias %w, ptr noalias %scratch, ptr noalias %geom)
      define void @<base>.rows(ptr noalias %x, ptr noalias %scratch, ptr noalias %out,
                               i64 %start, i64 %end, ptr noalias %geom, ptr noalias %tiles)
    where geom holds Shape.geometry() and tiles the matmul library's tiles
    (matmul_shared.tiles(dtype), in order)."""
    elems, vl, _, nv = mm.tile_geometry(dtype)
    sizes, _, lda = mm.a_block(dtype)
    nr = vl * nv
    return "\n".join([
        _pack(base, elems, nr, rank), _gather(base, elems, rank, lda),
        _rows(base, elems, vl, nr, sizes, lda, rank)])
