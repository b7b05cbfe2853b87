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
Either operand may be given stored transposed (the llvm rewrites fold a transpose into
the matmul): the pack and the A copy read it in place, so no pass makes the transpose.
The first K block stores C, later ones add to it. Leftover rows use 4- and 1-row tiles;
the last, narrower panel uses fewer vectors and masked loads/stores for a partial one, so
nothing is read or written outside A, B, C and the scratch buffer.

No alignment beyond the element size is assumed anywhere (numpy buffers are only
16-byte aligned; the scratch buffer needs no more either). Integers (signed or not) use
the same tiles with `mul`/`add`, which wrap like NumPy's. float16 and bfloat16 are widened
to float while packing B and copying A, accumulate in float (as the numpy kernel does)
and are rounded to nearest even when C is stored (once per K block). LLVM may turn the A
copy into a `memcpy` call, which MCJIT resolves from the process.
"""
from functools import lru_cache

import ml_dtypes
import numpy as np

from ir.errors import DTypeError, ShapeError

# dtype -> (element type computed in, element type in memory)
_ELEM = {np.dtype(np.float32): ("float", "float"), np.dtype(np.float64): ("double", "double"),
         np.dtype(np.float16): ("float", "half"), np.dtype(ml_dtypes.bfloat16): ("float", "bf16"),
         **{np.dtype(t): (f"i{8 * np.dtype(t).itemsize}",) * 2 for t in (
             np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}}
_SHORT = {"float": "f32", "double": "f64", "half": "f16"}    # intrinsic name suffixes
_BYTES = {"half": 2, "bf16": 2, "float": 4, "double": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}
_ATTRS = 'nounwind "no-trapping-math"="true"'
KC_BYTES = 4096  # K block: one A row slice; measured best of 1-16 KB (f32 and f64)
PACK_BYTES = 32768  # B packed in blocks of rows this long: measured best of 4-64 KB


@lru_cache(maxsize=None)
def _vector_bytes() -> int:
    """The target CPU's vector width (tests set it to generate either ISA's tiles)."""
    from lowering.llvm.cpu import CURRENT
    return CURRENT.vector_bytes


def _geometry(dtype):
    """((compute, memory) element types, VL lanes per vector, MR rows, NV vectors) of the
    register tile.

    MR * NV accumulators + NV B vectors + 1 broadcast fit the register file: 6 x 2 with 16
    registers (llvm-notes 2.7), 14 x 2 with 32."""
    dt = np.dtype(dtype)
    if dt not in _ELEM:
        raise DTypeError(f"matmul (llvm): unsupported dtype {dt}; expected one of "
                         f"{sorted(str(d) for d in _ELEM)} (convert the operands first)")
    vb = _vector_bytes()
    elem = _ELEM[dt]
    return elem, vb // _BYTES[elem[0]], (14 if vb == 64 else 6), 2


def tile_rows(dtype) -> int:
    """MR: the rows of C one register tile computes (row ranges starting on multiples of
    it use only whole tiles)."""
    return _geometry(dtype)[2]


def _check(batch, m, k, n):
    if batch < 1 or min(m, k, n) < 0:
        raise ShapeError(f"matmul (llvm): bad shape batch={batch}, m={m}, k={k}, n={n}; "
                         "need batch >= 1 and m, k, n >= 0")


def scratch_bytes(batch, m, k, n, dtype) -> int:
    """Bytes of the packed-B scratch buffer (0 when there is nothing to pack)."""
    _check(batch, m, k, n)
    (elem, _), vl, _, nv = _geometry(dtype)
    nr = vl * nv
    return batch * -(-n // nr) * k * nr * _BYTES[elem]


class _Body:
    """Lines of one function body: fresh SSA names, i64 arithmetic that folds Python ints,
    counted loops, and loads/stores of the operands' memory type `mem` (`mload`,
    `mstore`, `mgep`) converting from/to the type `elem` computed in."""

    def __init__(self, elem, mem=None):
        self.elem, self.lines, self.count, self.block = elem, [], 0, "%entry"
        self.mem = mem or elem
        self.mty = "i16" if self.mem == "bf16" else self.mem     # its LLVM type

    def fresh(self, stem="t"):
        self.count += 1
        return f"%{stem}{self.count}"

    def __call__(self, text, stem="t"):
        """Emit `%new = text` and return %new."""
        name = self.fresh(stem)
        self.lines.append(f"  {name} = {text}")
        return name

    def emit(self, text):
        self.lines.append(f"  {text}")

    def label(self, name):
        self.lines.append(f"{name[1:]}:")
        self.block = name

    def add(self, x, y):
        if isinstance(x, int) and isinstance(y, int):
            return x + y
        return x if y == 0 else y if x == 0 else self(f"add nuw nsw i64 {x}, {y}")

    def mul(self, x, y):
        if isinstance(x, int) and isinstance(y, int):
            return x * y
        return 0 if y == 0 else x if y == 1 else self(f"mul nuw nsw i64 {x}, {y}")

    def load(self, ty, ptr, lanes=None):
        """Load `ty`; given `lanes`, only the first `lanes` elements of vector `ty` (the rest 0)."""
        align = _BYTES[_scalar(ty)]         # claim no more than the element size
        if lanes is None:
            return self(f"load {ty}, ptr {ptr}, align {align}")
        suffix, mask = self._masked(ty, lanes)
        return self(f"call {ty} @llvm.masked.load.{suffix}.p0(ptr align {align} {ptr}, {mask}, "
                    f"{ty} zeroinitializer)")

    def store(self, ty, x, ptr, lanes=None):
        """Store `ty`; given `lanes`, only the first `lanes` elements of vector `ty`."""
        align = _BYTES[_scalar(ty)]
        if lanes is None:
            self.emit(f"store {ty} {x}, ptr {ptr}, align {align}")
            return
        suffix, mask = self._masked(ty, lanes)
        self.emit(f"call void @llvm.masked.store.{suffix}.p0({ty} {x}, ptr align {align} {ptr}, "
                  f"{mask})")

    @staticmethod
    def _masked(ty, lanes):
        """("v16f32", "<16 x i1> <i1 true, ...>") for vector type `ty` = "<16 x float>"."""
        width = int(ty[1:].split(" x")[0])
        bits = ", ".join(["i1 true"] * lanes + ["i1 false"] * (width - lanes))
        return f"v{width}{_SHORT.get(_scalar(ty), _scalar(ty))}", f"<{width} x i1> <{bits}>"

    def gep(self, base, index, ty=None):
        """Pointer to element `index` of `base` (elements of `ty`, default the compute type)."""
        if index == 0:
            return base
        return self(f"getelementptr inbounds {ty or self.elem}, ptr {base}, i64 {index}", "p")

    def mgep(self, base, index):
        return self.gep(base, index, self.mty)

    def mload(self, width, ptr, lanes=None):
        """Load `width` (None: one) memory elements as the compute type."""
        x = self.load(_vec(width, self.mty), ptr, lanes)
        if self.mem == self.elem:
            return x
        ty, i32 = _vec(width, self.elem), _vec(width, "i32")
        if self.mem == "half":
            return self(f"fpext {_vec(width, 'half')} {x} to {ty}")
        wide = self(f"zext {_vec(width, 'i16')} {x} to {i32}")
        return self(f"bitcast {i32} {self(f'shl {i32} {wide}, {_splat(width, 16)}')} to {ty}")

    def mstore(self, width, x, ptr, lanes=None):
        """Store `width` (None: one) compute values rounded to the memory type (bfloat16:
        to nearest even, NaN kept NaN)."""
        f32, i32 = _vec(width, "float"), _vec(width, "i32")
        if self.mem == "half":
            x = self(f"fptrunc {f32} {x} to {_vec(width, 'half')}")
        elif self.mem == "bf16":
            bits = self(f"bitcast {f32} {x} to {i32}")
            odd = self(f"and {i32} {self(f'lshr {i32} {bits}, {_splat(width, 16)}')}, "
                       f"{_splat(width, 1)}")
            rounded = self(f"add {i32} {bits}, {self(f'add {i32} {odd}, {_splat(width, 0x7FFF)}')}")
            nan = self(f"fcmp uno {f32} {x}, {x}")
            quiet = self(f"or {i32} {bits}, {_splat(width, 0x400000)}")
            pick = self(f"select {_vec(width, 'i1')} {nan}, {i32} {quiet}, {i32} {rounded}")
            top = self(f"lshr {i32} {pick}, {_splat(width, 16)}")
            x = self(f"trunc {i32} {top} to {_vec(width, 'i16')}")
        self.store(_vec(width, self.mty), x, ptr, lanes)

    def loop(self, lo, hi, body):
        """for i in range(lo, hi): body(i)   (lo, hi: i64 operands; the range may be empty)."""
        if isinstance(lo, int) and isinstance(hi, int) and hi <= lo:
            return
        head, inner, done = self.fresh("head"), self.fresh("body"), self.fresh("done")
        i, nxt, pre = self.fresh("i"), self.fresh("i"), self.block
        self.emit(f"br label {head}")
        self.label(head)
        phi = len(self.lines)
        self.lines.append(None)  # the phi, filled in once the latch block is known
        self.emit(f"br i1 {self(f'icmp slt i64 {i}, {hi}')}, label {inner}, label {done}")
        self.label(inner)
        body(i)
        self.emit(f"{nxt} = add nuw nsw i64 {i}, 1")
        self.emit(f"br label {head}")
        self.lines[phi] = f"  {i} = phi i64 [ {lo}, {pre} ], [ {nxt}, {self.block} ]"
        self.label(done)

    def text(self, header, attrs=""):
        return "\n".join([f"define {header} {attrs} {_ATTRS} {{", "entry:", *self.lines,
                          "  ret void", "}", ""])


def _scalar(ty):
    """The element type of IR type `ty` ("<16 x half>" -> "half")."""
    return ty[1:-1].split(" x ")[1] if ty.startswith("<") else ty


def _vec(width, elem):
    return elem if width is None else f"<{width} x {elem}>"


def _splat(width, value):
    """An i32 constant, splat over `width` lanes (None: a scalar)."""
    return f"{value}" if width is None else f"splat (i32 {value})"


def _tile(name, elems, vl, nr, rows, cols, lda, n, k, ldk=1):
    """`void name(ptr a, ptr b, ptr c, i64 kc, i1 add, i64 panels)`: for each of `panels`
    panels, C[rows x cols] = (C if add else 0) + A @ B over kc steps of k, where a is a
    sliver of A (rows x kc; A[r, kk] at a + r * lda + kk * ldk), b the first packed B
    panel (kc x NR, the next one k * NR further) and c the tile's first element (row
    stride n). The panel loop is here rather than in the caller so that LLVM does not
    unroll it into many calls."""
    (elem, mem), nv = elems, -(-cols // vl)
    f, vec = _Body(elem, mem), f"<{vl} x {elem}>"
    is_float = elem in ("float", "double")

    def panel(p):
        b, c, pre = f.gep("%b", f.mul(p, k * nr)), f.mgep("%c", f.mul(p, nr)), f.block
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
            x = f.load(elem, f.gep("%a", f.add(f.mul(kk, ldk), r * lda)))
            one = f(f"insertelement {vec} poison, {elem} {x}, i64 0")
            av = f(f"shufflevector {vec} {one}, {vec} poison, <{vl} x i32> zeroinitializer")
            for v in range(nv):
                if is_float:
                    f.emit(f"{nexts[r][v]} = call {vec} @llvm.fma.v{vl}{_SHORT[elem]}"
                           f"({vec} {av}, {vec} {bvec[v]}, {vec} {phis[r][v]})")
                else:  # wrapping integer arithmetic, as NumPy's
                    f.emit(f"{nexts[r][v]} = add {vec} {phis[r][v]}, {f(f'mul {vec} {av}, {bvec[v]}')}")
        f.emit(f"{knext} = add nuw nsw i64 {kk}, 1")
        f.emit(f"br i1 {f(f'icmp eq i64 {knext}, %kc')}, label {kdone}, label {loop}")
        f.label(kdone)
        acc = [[f(f"phi {vec} [ zeroinitializer, {pre} ], [ {x}, {loop} ]") for x in row]
               for row in nexts]
        fresh, add, out = f.fresh("fresh"), f.fresh("add"), f.fresh("out")
        f.emit(f"br i1 %add, label {add}, label {fresh}")

        for label, old in ((fresh, False), (add, True)):
            f.label(label)
            for r in range(rows):
                for v in range(nv):
                    x, ptr = acc[r][v], f.mgep(c, r * n + v * vl)
                    lanes = None if (v + 1) * vl <= cols else cols - v * vl  # narrow panel: masked
                    if old:
                        x = f(f"{'fadd' if is_float else 'add'} {vec} {f.mload(vl, ptr, lanes)}, {x}")
                    f.mstore(vl, x, ptr, lanes)
            f.emit(f"br label {out}")
        f.label(out)
    f.loop(0, "%panels", panel)
    return f.text(f"internal void @\"{name}\"(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %kc, "
                  "i1 %add, i64 %panels)", "noinline")  # inlined, it would be copied per call site


def call_tiles(f, stem, abuf, panels, k, c, n, nr, kc, add):
    """Call the register tiles `stem`x{cols} on n columns of C: the full nr-wide panels
    (B packed as k x nr panels from `panels`), then the remainder."""
    for p, cols, count in [(0, nr, n // nr), (n // nr, n % nr, 1)]:
        if cols and count:
            f.emit(f"call void @\"{stem}x{cols}\"(ptr {abuf}, ptr {f.gep(panels, p * k * nr)}, "
                   f"ptr {f.mgep(c, p * nr)}, i64 {kc}, i1 {add}, i64 {count})")


def over_rows(f, lo, hi, sizes, tile):
    """tile(size, row) over rows [lo, hi): as many tiles of each size in turn as fit."""
    i = lo
    for size in sizes:
        count = f(f"sdiv i64 {f(f'sub nsw i64 {hi}, {i}')}, {size}")
        f.loop(0, count, lambda t: tile(size, f.add(i, f.mul(t, size))))
        i = f.add(i, f.mul(count, size))


def _pack(symbol, elems, nr, batch, k, n, trans_b):
    """Copy B into zero-padded panels (of the compute type): per block of rows of B
    (PACK_BYTES, kept in L1) panel by panel, so that the writes go in order (row by row
    of B took 7x longer at 1024 x 1024 on AVX2). B stored transposed (n x k) is not
    blocked: NR loads per panel row, one from each of its rows of B^T, read in order."""
    f, npan, edge = _Body(*elems), -(-n // nr), n % nr
    vec = f"<{nr} x {f.elem}>"

    def panel_row(b, p, kk, cols):
        if trans_b:
            src = f.mgep("%b", f.add(f.mul(f.add(f.mul(b, n), f.mul(p, nr)), k), kk))
            x = "zeroinitializer"
            for j in range(cols):
                x = f(f"insertelement {vec} {x}, {f.elem} {f.mload(None, f.mgep(src, j * k))}, "
                      f"i64 {j}")
        else:
            src = f.mgep("%b", f.add(f.mul(f.add(f.mul(b, k), kk), n), f.mul(p, nr)))
            x = f.mload(nr, src, None if cols == nr else cols)
        f.store(vec, x, f.gep("%scratch", f.mul(f.add(f.mul(f.add(f.mul(b, npan), p), k), kk),
                                                nr)))

    rows = k if trans_b else max(1, PACK_BYTES // (max(n, 1) * _BYTES[f.mty]))

    def block(b, k0):
        k1 = f(f"call i64 @llvm.smin.i64(i64 {f.add(k0, rows)}, i64 {k})")
        f.loop(0, n // nr, lambda p: f.loop(k0, k1, lambda kk: panel_row(b, p, kk, nr)))
        if edge:
            f.loop(k0, k1, lambda kk: panel_row(b, npan - 1, kk, edge))
    if n and k:
        f.loop(0, batch, lambda b: f.loop(0, -(-k // rows), lambda j: block(b, f.mul(j, rows))))
    return f.text(f"void @\"{symbol}_pack\"(ptr noalias %b, ptr noalias %scratch)")


def _rows(symbol, elems, nr, sizes, kc_max, lda, batch, m, k, n, trans_a):
    """The row function: batches -> K blocks -> row tiles (each size in `sizes` in turn;
    the tile's A sliver is copied to the stack, rows lda apart, or read in place if lda is
    None) -> panels. With A stored transposed (k x m), the sliver's k steps are rows of
    A^T: the copy lays them out one after another, size elements each."""
    f, npan, abuf = _Body(*elems), -(-n // nr), "%abuf"
    elem = f.elem

    def clamp(fn, x, y):
        return f(f"call i64 @llvm.{fn}.i64(i64 {x}, i64 {y})")

    def batch_body(b, start, end):
        base = f.mul(b, m)
        lo = f(f"sub nsw i64 {clamp('smax', start, base)}, {base}")  # 0 <= lo < hi <= m
        hi = f(f"sub nsw i64 {clamp('smin', end, f.add(base, m))}, {base}")
        a, c = f.mgep("%a", f.mul(b, m * k)), f.mgep("%c", f.mul(b, m * n))
        s = f.gep("%scratch", f.mul(b, npan * k * nr))

        def k_block(kb):
            k0 = f.mul(kb, kc_max)
            kc, add = clamp("smin", f(f"sub nsw i64 {k}, {k0}"), kc_max), f(f"icmp ne i64 {kb}, 0")

            def row_tile(size, row):
                src = f.mgep(a, f.add(f.mul(k0, m), row) if trans_a else f.add(f.mul(row, k), k0))

                def copy(r, kk):
                    at = f.add(f.mul(kk, m), r) if trans_a else f.add(f.mul(r, k), kk)
                    to = f.add(f.mul(kk, size), r) if trans_a else f.add(f.mul(r, lda), kk)
                    f.store(elem, f.mload(None, f.mgep(src, at)), f.gep(abuf, to))
                if lda is not None and trans_a:
                    f.loop(0, kc, lambda kk: f.loop(0, size, lambda r: copy(r, kk)))
                elif lda is not None:
                    f.loop(0, size, lambda r: f.loop(0, kc, lambda kk: copy(r, kk)))
                call_tiles(f, f"{symbol}.{size}", src if lda is None else abuf,
                           f.gep(s, f.mul(k0, nr)), k, f.mgep(c, f.mul(row, n)), n, nr, kc, add)
            over_rows(f, lo, hi, sizes, row_tile)
        f.loop(0, max(1, -(-k // kc_max)), k_block)
    if m and n:
        if lda is not None:
            f.emit(f"{abuf} = alloca {elem}, i64 {sizes[0] * lda}, align 64")
        start, end = (clamp("smin", clamp("smax", x, 0), batch * m) for x in ("%start", "%end"))
        f.emit(f"br i1 {f(f'icmp slt i64 {start}, {end}')}, label %rows, label %exit")
        f.label("%rows")
        f.loop(f(f"udiv i64 {start}, {m}"), f(f"udiv i64 {f.add(end, m - 1)}, {m}"),
               lambda b: batch_body(b, start, end))
        f.emit("br label %exit")
        f.label("%exit")
    return f.text(f"void @\"{symbol}\"(ptr noalias %a, ptr noalias %scratch, ptr noalias %c, "
                  "i64 %start, i64 %end)")


def matmul_ir(symbol: str, batch: int, m: int, k: int, n: int, dtype,
              transpose_a: bool = False, transpose_b: bool = False) -> str:
    """LLVM IR text defining two functions:
      define void @<symbol>_pack(ptr noalias %b, ptr noalias %scratch)
          packs B (batch x k x n, row-major contiguous; batch x n x k if transpose_b, B being
          its transpose) into scratch (scratch_bytes long);
      define void @<symbol>(ptr noalias %a, ptr noalias %scratch, ptr noalias %c,
                            i64 %start, i64 %end)
          computes rows [start, end) of the flattened (batch*m) x n output C = A @ B
          (A: batch x m x k row-major contiguous; batch x k x m if transpose_a), reading
          packed B from scratch.
    The pack function is called once per call, then the row function once (or once per
    thread chunk, with disjoint row ranges, possibly concurrently). Out-of-range parts of
    [start, end) are clipped to [0, batch*m). Internal helpers are named <symbol>.<r>x<c>."""
    _check(batch, m, k, n)
    elem, vl, mr, nv = _geometry(dtype)
    nr, size = vl * nv, _BYTES[elem[0]]
    sizes = sorted({min(mr, m), min(4, m), 1}, reverse=True) if m else []
    widths = [nr] * (n >= nr) + [n % nr] * (n % nr > 0)
    kc = max(1, min(k, KC_BYTES // size))
    # With one panel each A element is read once: a copy of A would cost as much as the
    # tiles' reads, so A is read in place (unless it must be widened from half floats).
    in_place = n <= nr and elem[0] == elem[1]
    lda = kc + 64 // size  # +1 cache line: A rows 4 KB apart share L1 sets

    def strides(rows):      # (row, k step) strides of the A sliver a tile reads
        if transpose_a:
            return (1, m) if in_place else (1, rows)
        return (k, 1) if in_place else (lda, 1)
    tiles = [_tile(f"{symbol}.{r}x{w}", elem, vl, nr, r, w, strides(r)[0], n, k, strides(r)[1])
             for w in widths for r in sizes]
    return "\n".join([_pack(symbol, elem, nr, batch, k, n, transpose_b),
                      _rows(symbol, elem, nr, sizes, kc, None if in_place else lda, batch, m,
                            k, n, transpose_a), *tiles])
