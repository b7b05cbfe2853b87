"""Batched matmul as generated LLVM IR: pack B into column panels, then register-tile C.

Why generate it rather than call BLAS: a compiled graph stays one native module with no
Python round-trip, and a packed-B micro-kernel reaches BLAS speed (llvm-notes 2.7).

Layout. `<symbol>_pack` copies B (batch x k x n) into panels of NR = NV * VL columns
(VL = lanes of one SIMD vector), each contiguous in k: panel p of batch b holds, for
each kk, B[b, kk, p*NR : p*NR+NR], zero-padded past n. The row function computes C in
MR x NR register tiles (MR * NV vector accumulators, one fused multiply-add each per kk).
Loop order, GotoBLAS-style: batch -> K block of KC_BYTES (so a tile's B slice stays in
L1/L2) -> row tile, whose MR x KC slice of A is first copied to a stack buffer with rows
one cache line more than KC apart (A rows 4 KB apart would all share an L1 set; with one
panel, which reads each A element once, A is read in place) -> panel.
The kernel takes its sizes at run time (only the tile geometry, the K block and the A
copy's row stride are fixed), so one compiled copy per dtype and pair of transposes serves
every matmul (lowering.llvm.matmul_shared); its loops run on runtime bounds, which the
tiles' inner loop already did, and its edge tiles mask their C columns with runtime masks.
Either operand may be given stored transposed (the llvm rewrites fold a transpose into
the matmul): the pack and the A copy read it in place, so no pass makes the transpose.
LLVM does not unroll the loops of the row function or the k loop of a tile of several
rows (irtext.kept_loops): an iteration of an R-row tile already has R x NV independent
multiply-adds, and the copies made the library 1.3x longer to compile for no speed.
The first K block stores C, later ones add to it. Leftover rows use 4- and 1-row tiles;
the last, narrower panel masks its loads/stores of C, so nothing is read or written
outside A, B, C and the scratch buffer.

No alignment beyond the element size is assumed anywhere (numpy buffers are only
16-byte aligned; the scratch buffer needs no more either). Integers (signed or not) use
the same tiles with `mul`/`add`, which wrap like NumPy's. float16 and bfloat16 are widened
to float while packing B and copying A, accumulate in float (as the numpy kernel does)
and are rounded to nearest even when C is stored (once per K block). LLVM may turn the A
copy into a `memcpy` call, which MCJIT resolves from the process.
"""

import ml_dtypes
import numpy as np

from ir.errors import DTypeError, ShapeError
from lowering.llvm import compile_worker
from lowering.llvm.irtext import BYTES, SHORT, Body, kept_loops
from lowering.llvm.matmul_pack import pack_function
from lowering.settings import settings

# dtype -> (element type computed in, element type in memory)
ELEMENT_TYPES = {
    np.dtype(np.float32): ("float", "float"), np.dtype(np.float64): ("double", "double"),
    np.dtype(np.float16): ("float", "half"), np.dtype(ml_dtypes.bfloat16): ("float", "bf16"),
    **{np.dtype(t): (f"i{8 * np.dtype(t).itemsize}",) * 2 for t in (
        np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}}
KC_BYTES = 4096  # K block: one A row slice; measured best of 1-16 KB (f32 and f64)
PACK_BYTES = 32768  # B packed in blocks of rows this long: measured best of 4-64 KB


def tile_geometry(dtype):
    """((compute, memory) element types, VL lanes per vector, MR rows, NV vectors) of the
    register tile.

    MR * NV accumulators + NV B vectors + 1 broadcast fit the register file: 6 x 2 with 16
    registers (llvm-notes 2.7), 14 x 2 with 32."""
    dt = np.dtype(dtype)
    if dt not in ELEMENT_TYPES:
        raise DTypeError(f"matmul (llvm): unsupported dtype {dt}; expected one of "
                         f"{sorted(str(d) for d in ELEMENT_TYPES)} (convert the operands first)")
    vb = settings.vector_bytes
    elem = ELEMENT_TYPES[dt]
    return elem, vb // BYTES[elem[0]], (14 if vb == 64 else 6), 2


def tile_rows(dtype) -> int:
    """MR: the rows of C one register tile computes (row ranges starting on multiples of
    it use only whole tiles)."""
    return tile_geometry(dtype)[2]


def _check(batch, m, k, n):
    if batch < 1 or min(m, k, n) < 0:
        raise ShapeError(f"matmul (llvm): bad shape batch={batch}, m={m}, k={k}, n={n}; "
                         "need batch >= 1 and m, k, n >= 0")


def scratch_bytes(batch, m, k, n, dtype) -> int:
    """Bytes of the packed-B scratch buffer (0 when there is nothing to pack)."""
    _check(batch, m, k, n)
    (elem, _), vl, _, nv = tile_geometry(dtype)
    nr = vl * nv
    return batch * -(-n // nr) * k * nr * BYTES[elem]


def tile_function(name, elems, vl, nr, rows, vectors, lda):
    """`void name(ptr a, ptr b, ptr c, i64 kc, i1 add, i64 panels, i64 n, i64 k, i64 lda,
    i64 ldk, i64 cols)`: for each of `panels` panels, C[rows x cols] = (C if add else 0)
    + A @ B over kc steps of k, where a is a sliver of A (rows x kc; A[r, kk] at a + r *
    lda + kk * ldk), b the first packed B panel (kc x NR, the next one k * NR further) and
    c the tile's first element (row stride n); (`vectors` - 1) * VL < cols <= `vectors` *
    VL, its columns past cols masked. `lda` is a constant (then ldk is 1, and both
    parameters unused) or "%lda" (both given at run time).
    The panel loop is here rather than in the caller so that LLVM does not unroll it into
    many calls; nor does it unroll the k loop of a tile of several rows (marked for
    irtext.kept_loops, which the library's text goes through). The tiles are public:
    the conv library (lowering.llvm.conv) calls the matmul library's."""
    (elem, mem), nv = elems, vectors
    f, vec = Body(elem, mem, unrolled=rows == 1), f"<{vl} x {elem}>"
    is_float = elem in ("float", "double")
    ldk = 1 if isinstance(lda, int) else "%ldk"
    last = f.mask(vl, f(f"sub nsw i64 %cols, {(nv - 1) * vl}"))   # the last vector's columns
    n, k = "%n", "%k"

    def panel(p):
        b, c, pre = f.gep("%b", f.mul(p, f.mul(k, nr))), f.mgep("%c", f.mul(p, nr)), f.block
        loop, kdone, kk, knext = f.fresh("kloop"), f.fresh("kdone"), f.fresh("k"), f.fresh("k")
        phis = [[f.fresh("acc") for _ in range(nv)] for _ in range(rows)]
        nexts = [[f.fresh("acc") for _ in range(nv)] for _ in range(rows)]
        f.emit(f"br i1 {f('icmp sgt i64 %kc, 0')}, label {loop}, label {kdone}")
        f.label(loop)
        f.emit(f"{kk} = phi i64 [ 0, {pre} ], [ {knext}, {loop} ]")
        for r in range(rows):
            for v in range(nv):
                f.emit(f"{phis[r][v]} = phi {vec} [ zeroinitializer, {pre} ], [ {nexts[r][v]}, {loop} ]")
        bvec = [f.load(vec, f.gep(b, f.add(f.mul(kk, nr), v * vl))) for v in range(nv)]
        for r in range(rows):
            x = f.load(elem, f.gep("%a", f.add(f.mul(kk, ldk), f.mul(r, lda))))
            one = f(f"insertelement {vec} poison, {elem} {x}, i64 0")
            av = f(f"shufflevector {vec} {one}, {vec} poison, <{vl} x i32> zeroinitializer")
            for v in range(nv):
                if is_float:
                    f.emit(f"{nexts[r][v]} = call {vec} @llvm.fma.v{vl}{SHORT[elem]}"
                           f"({vec} {av}, {vec} {bvec[v]}, {vec} {phis[r][v]})")
                else:  # wrapping integer arithmetic, as NumPy's
                    f.emit(f"{nexts[r][v]} = add {vec} {phis[r][v]}, {f(f'mul {vec} {av}, {bvec[v]}')}")
        f.emit(f"{knext} = add nuw nsw i64 {kk}, 1")
        f.emit(f"br i1 {f(f'icmp eq i64 {knext}, %kc')}, label {kdone}, label {loop}{f.latch}")
        f.label(kdone)
        acc = [[f(f"phi {vec} [ zeroinitializer, {pre} ], [ {x}, {loop} ]") for x in row]
               for row in nexts]
        # only a tile's last vector of C can be partial (call_tiles picks the tile of as few
        # vectors as cover the columns), and only in the narrower last panel: masked there
        # alone. On AMD's Zen 3 masked stores are microcoded, and masking every panel's
        # writes made W18's three products 1.08-1.32x NumPy's time on one core, 0.97-1.08x
        # without (examples/bench_steps.py MM)
        out, part = f.fresh("out"), f(f"icmp slt i64 %cols, {nv * vl}")
        paths = [(f.fresh("store"), old) for old in (False, True)]
        f.emit(f"br i1 %add, label {paths[1][0]}, label {paths[0][0]}")

        def write(v, old, lanes):
            for r in range(rows):
                x, ptr = acc[r][v], f.mgep(c, f.add(f.mul(r, n), v * vl))
                if old:
                    x = f(f"{'fadd' if is_float else 'add'} {vec} {f.mload(vl, ptr, lanes)}, {x}")
                f.mstore(vl, x, ptr, lanes)
        for label, old in paths:
            f.label(label)
            for v in range(nv - 1):
                write(v, old, None)
            whole, edge = f.fresh("whole"), f.fresh("edge")
            f.emit(f"br i1 {part}, label {edge}, label {whole}")
            for at, lanes in ((whole, None), (edge, last)):
                f.label(at)
                write(nv - 1, old, lanes)
                f.emit(f"br label {out}")
        f.label(out)
    f.loop(0, "%panels", panel)
    return f.text(f"void @\"{name}\"({TILE_PARAMS})", "noinline")  # inlined: a copy per call


TILE_PARAMS = ("ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %kc, i1 %add, i64 %panels, "
               "i64 %n, i64 %k, i64 %lda, i64 %ldk, i64 %cols")


def tile_name(stem, vectors):
    """The register tile of `vectors` vectors among the tiles named from `stem`."""
    return f"{stem}xe{vectors}"


def named(stem):
    """The tiles named from `stem` (tile_name) as call_tiles takes them."""
    return lambda vectors: f'@"{tile_name(stem, vectors)}"'


def call_tiles(f, tile, abuf, panels, k, c, n, nr, kc, add, vl, ldc=None, lda=0, ldk=0):
    """Call register tiles on n columns of C (row stride ldc, default n; B packed as k x
    nr panels from `panels`); tile(v) is the pointer operand of the tile of v vectors
    (`named`, or pointers a caller was given): the tile of NV vectors on the full nr-wide
    panels, then on the remainder the tile of as few vectors v of VL = `vl` lanes as
    cover it (computing both of NV = 2 on a remainder of at most VL cost 1.4x on a
    256x512 @ 512x10). Sizes are IR values (or constants) of i64."""
    full, edge = f(f"udiv i64 {n}, {nr}"), f(f"urem i64 {n}, {nr}")
    fn = tile(nr // vl)
    for v in range(nr // vl - 1, 0, -1):
        fn = f(f'select i1 {f(f"icmp ule i64 {edge}, {v * vl}")}, ptr {tile(v)}, ptr {fn}')
    parts = [(tile(nr // vl), nr, full, 0),
             (fn, edge, f(f"zext i1 {f(f'icmp ne i64 {edge}, 0')} to i64"), full)]
    for fn, cols, count, p in parts:
        f.emit(f"call void {fn}(ptr {abuf}, ptr {f.gep(panels, f.mul(p, f.mul(k, nr)))}, "
               f"ptr {f.mgep(c, f.mul(p, nr))}, i64 {kc}, i1 {add}, i64 {count}, "
               f"i64 {n if ldc is None else ldc}, i64 {k}, i64 {lda}, i64 {ldk}, i64 {cols})")


def a_block(dtype):
    """(row tile sizes, largest K block, row stride of the stack copy of A) of the
    library's row function, which the conv library, calling its tiles, shares."""
    (elem, _), _, mr, _ = tile_geometry(dtype)
    size = BYTES[elem]
    kc = KC_BYTES // size
    return sorted({mr, 4, 1}, reverse=True), kc, kc + 64 // size  # +1 line: no L1 set conflicts


def over_rows(f, lo, hi, sizes, tile):
    """tile(size, row) over rows [lo, hi): as many tiles of each size in turn as fit."""
    i = lo
    for size in sizes:
        count = f(f"sdiv i64 {f(f'sub nsw i64 {hi}, {i}')}, {size}")
        f.loop(0, count, lambda t: tile(size, f.add(i, f.mul(t, size))))
        i = f.add(i, f.mul(count, size))


def pack_plan(batch, k, n, dtype, transpose_b=False):
    """(rows of B one pack block copies, work items of the pack function): PACK_BYTES of
    B's rows (kept in L1), or all of k when B is stored transposed (its panels then read
    NR rows of B^T in order); one item per (batch, block, panel), split across threads
    like the rows. The pack function is given the rows, so this is their one source."""
    (_, mem), vl, _, nv = tile_geometry(dtype)
    rows = max(k, 1) if transpose_b else max(1, (PACK_BYTES // BYTES[mem]) // max(n, 1))
    return rows, max(1, batch * -(-k // rows) * -(-n // (vl * nv)))


def _rows(symbol, elems, vl, nr, sizes, kc_max, lda):
    """The row function: batches -> K blocks -> row tiles (each size in `sizes` in turn;
    the tile's A sliver is copied to the stack, rows lda apart, or, with one panel (n <=
    NR: each element of A is read once, a copy would only double the reads) and no
    widening, read in place by the tiles `<size>i`, its strides given at run time) ->
    panels. A stored transposed (k x m, %trans_a) is copied k step by k step, reading
    rows of A^T in order, and read by the strided tiles, so both storages share them."""
    f, abuf, (batch, m, k, n) = Body(*elems, unrolled=False), "%abuf", ("%batch", "%m", "%k", "%n")
    npan, elem = f.div(n, nr, up=True), f.elem
    mk, mn, per_batch = f.mul(m, k), f.mul(m, n), f.mul(f.mul(npan, k), nr)
    in_place = f(f"icmp sle i64 {n}, {nr}") if elems[0] == elems[1] else "false"
    trans = "%trans_a"
    a_lda, a_ldk = f(f"select i1 {trans}, i64 1, i64 {k}"), f(f"select i1 {trans}, i64 {m}, i64 1")
    f.emit(f"{abuf} = alloca {elem}, i64 {sizes[0] * lda}, align 64")

    def batch_body(b, start, end):
        base = f.mul(b, m)
        lo = f(f"sub nsw i64 {f.clamp('smax', start, base)}, {base}")  # 0 <= lo < hi <= m
        hi = f(f"sub nsw i64 {f.clamp('smin', end, f.add(base, m))}, {base}")
        a, c = f.mgep("%a", f.mul(b, mk)), f.mgep("%c", f.mul(b, mn))
        s = f.gep("%scratch", f.mul(b, per_batch))

        def k_block(kb):
            k0 = f.mul(kb, kc_max)
            kc, add = f.clamp("smin", f(f"sub nsw i64 {k}, {k0}"), kc_max), f(f"icmp ne i64 {kb}, 0")

            def row_tile(size, row):
                src = f.mgep(a, f.add(f.mul(k0, a_ldk), f.mul(row, a_lda)))
                panels, crow = f.gep(s, f.mul(k0, nr)), f.mgep(c, f.mul(row, n))
                direct, copied, done = f.fresh("direct"), f.fresh("copied"), f.fresh("tiled")
                f.emit(f"br i1 {in_place}, label {direct}, label {copied}")
                f.label(direct)
                call_tiles(f, named(f"{symbol}.{size}i"), src, panels, k, crow, n, nr, kc, add,
                           lda=a_lda, ldk=a_ldk, vl=vl)
                f.emit(f"br label {done}")
                f.label(copied)

                def copied(trans_a):
                    """The sliver copied as A^T's rows (k-major, read by the strided
                    tiles) or A's (rows lda apart); each read in order."""
                    def copy(r, kk):
                        at, to = (f.add(f.mul(kk, m), r), f.add(f.mul(kk, size), r)) if trans_a else (
                            f.add(f.mul(r, k), kk), f.add(f.mul(r, lda), kk))
                        f.store(elem, f.mload(None, f.mgep(src, at)), f.gep(abuf, to))
                    if trans_a:
                        f.loop(0, kc, lambda kk: f.loop(0, size, lambda r: copy(r, kk)))
                    else:
                        f.loop(0, size, lambda r: f.loop(0, kc, lambda kk: copy(r, kk)))
                    call_tiles(f, named(f"{symbol}.{size}{'i' if trans_a else ''}"), abuf, panels,
                               k, crow, n, nr, kc, add, lda=1 if trans_a else 0,
                               ldk=size if trans_a else 0, vl=vl)
                f.branches(trans, copied)
                f.emit(f"br label {done}")
                f.label(done)
            over_rows(f, lo, hi, sizes, row_tile)
        f.loop(0, f.clamp("smax", 1, f.div(k, kc_max, up=True)), k_block)
    start, end = (f.clamp("smin", f.clamp("smax", x, 0), f.mul(batch, m)) for x in ("%start", "%end"))
    f.emit(f"br i1 {f(f'icmp slt i64 {start}, {end}')}, label %rows, label %exit")
    f.label("%rows")
    f.loop(f.div(start, m), f.div(end, m, up=True), lambda b: batch_body(b, start, end))
    f.emit("br label %exit")
    f.label("%exit")
    return f.text(f"void @\"{symbol}.rows\"(ptr noalias %a, ptr noalias %scratch, ptr noalias %c, "
                  "i64 %start, i64 %end, i64 %batch, i64 %m, i64 %k, i64 %n, i1 %trans_a)",
                  "noinline")


STORAGES = ("nn", "nt", "tn", "tt")   # A, B stored as themselves (n) or transposed (t)
_ROW_ARGS = "ptr noalias %a, ptr noalias %scratch, ptr noalias %c, i64 %start, i64 %end, " \
            "i64 %batch, i64 %m, i64 %k, i64 %n"
_PACK_ARGS = ("ptr noalias %b, ptr noalias %scratch, i64 %batch, i64 %k, i64 %n, i64 %rows, "
              "i64 %start, i64 %end")


def matmul_ir(base: str, dtype) -> str:
    """LLVM IR text defining, for every shape (sizes given at run time) and each storage
    s in STORAGES (A's then B's: n as is, t transposed), two functions:
      define void @<base>.<s>_pack(ptr noalias %b, ptr noalias %scratch, i64 %batch,
                                   i64 %k, i64 %n, i64 %rows, i64 %start, i64 %end)
          packs items [start, end) of pack_plan(...), which gives %rows, of B (batch x
          k x n, row-major contiguous; batch x n x k if B is stored transposed) into
          scratch (scratch_bytes long);
      define void @<base>.<s>(ptr noalias %a, ptr noalias %scratch, ptr noalias %c,
                              i64 %start, i64 %end, i64 %batch, i64 %m, i64 %k, i64 %n)
          computes rows [start, end) of the flattened (batch*m) x n output C = A @ B
          (A: batch x m x k row-major contiguous; batch x k x m if stored transposed),
          reading packed B from scratch.
    Per call, the pack function runs on all its items, then the row function on all rows
    (each split into disjoint ranges, possibly run concurrently). Out-of-range parts of
    [start, end) are clipped to [0, batch*m). They are one-call wrappers of `<base>.pack`
    and `<base>.rows`, which take the storage as an i1 flag, so that one compiled copy of
    the tiles (`<base>.<r>x<c>`) serves all four storages."""
    elem, vl, mr, nv = tile_geometry(dtype)
    nr = vl * nv
    sizes, kc, lda = a_block(dtype)
    tiles = [tile_function(tile_name(f"{base}.{r}{mode}", v), elem, vl, nr, r, v, stride)
             for r in sizes for v in range(1, nv + 1)
             for mode, stride in (("", lda), ("i", "%lda"))]
    wrappers = [f'define void @"{base}.{s}{tail}"({params}) {{\nentry:\n  call void @"{base}.{fn}"('
                f'{params.replace("ptr noalias", "ptr")}, i1 {"false true".split()[flag == "t"]})\n'
                f'  ret void\n}}\n'
                for s in STORAGES for tail, params, fn, flag in (
                    ("", _ROW_ARGS, "rows", s[0]), ("_pack", _PACK_ARGS, "pack", s[1]))]
    body = [pack_function(base, elem, nr, vl), _rows(base, elem, vl, nr, sizes, kc, lda),
            *tiles, *wrappers]
    # SLP only costs time, but on the dtypes widened (compile_worker.tuning)
    return compile_worker.pipeline(2, slp=elem[0] != elem[1]) + kept_loops("\n".join(body))
