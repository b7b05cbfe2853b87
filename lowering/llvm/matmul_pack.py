"""The matmul library's pack function (lowering.llvm.matmul): B copied into the panels
its register tiles read, from B as it is stored or stored transposed, the latter
transposed in registers a VL x VL block at a time."""
from lowering.llvm.irtext import Body


def pack_function(symbol, elems, nr, vl):
    """`<symbol>.pack`: copy B into zero-padded panels (of the compute type), items
    [start, end) of matmul.pack_plan, %rows rows of B a block: per block of rows of B
    panel by panel, so that the writes go in order (row by row of B took 7x longer at
    1024 x 1024 on AVX2). B stored
    transposed (n x k, %trans_b) is one block, read in order: VL steps of k of each of a
    full panel's NR rows of B^T at once, each VL x VL block transposed in registers
    (_transposed: a 6-row product with B^T 1,024 x 1,024 took 1.0-1.4 ms on one thread,
    mostly this pack, when each panel row was NR loads of one element; 0.41-0.52 ms now,
    examples/bench_steps.py MM); the last steps of k and the narrower last panel element
    by element. Both storages are branches of one function. LLVM does not unroll its
    loops: 854 -> 529 optimized lines, as fast (698 with the transposes)."""
    f, (batch, k, n) = Body(*elems, unrolled=False), ("%batch", "%k", "%n")
    full, npan, edge = f.div(n, nr), f.div(n, nr, up=True), f(f"urem i64 {n}, {nr}")
    vec = f"<{nr} x {f.elem}>"

    def packed(b, p, kk):       # row kk of panel p of batch b in the scratch buffer
        return f.gep("%scratch", f.mul(f.add(f.mul(f.add(f.mul(b, npan), p), k), kk), nr))

    def transposed(b, p, kk):   # B^T[b, p * NR, kk]: row p * NR of batch b's B^T, at kk
        return f.mgep("%b", f.add(f.mul(f.add(f.mul(b, n), f.mul(p, nr)), k), kk))

    def panel_row(trans_b, b, p, kk, cols):
        dst = packed(b, p, kk)
        if trans_b:
            src = transposed(b, p, kk)
            if cols != nr:      # the last, narrower panel: element by element
                f.store(vec, "zeroinitializer", dst)
                f.loop(0, cols, lambda j: f.store(f.elem, f.mload(None, f.mgep(src, f.mul(j, k))),
                                                  f.gep(dst, j)))
                return
            x = "zeroinitializer"
            for j in range(nr):
                x = f(f"insertelement {vec} {x}, {f.elem} {f.mload(None, f.mgep(src, f.mul(j, k)))}, "
                      f"i64 {j}")
        else:
            src = f.mgep("%b", f.add(f.mul(f.add(f.mul(b, k), kk), n), f.mul(p, nr)))
            x = f.mload(nr, src, f.mask(nr, cols))
        f.store(vec, x, dst)

    def transposed_rows(b, p, kk):
        """Panel rows kk .. kk + VL - 1 of full panel p, B stored transposed."""
        src, dst = transposed(b, p, kk), packed(b, p, kk)
        for g in range(nr // vl):
            block = [f.mload(vl, f.mgep(src, f.mul(g * vl + j, k))) for j in range(vl)]
            for t, x in enumerate(_transposed(f, block, vl)):
                f.store(f"<{vl} x {f.elem}>", x, f.gep(dst, t * nr + g * vl))

    def full_panel(trans_b, b, p, k0, k1):
        whole = k0
        if trans_b and vl <= TRANSPOSED_LANES:
            steps = f.div(f(f"sub nsw i64 {k1}, {k0}"), vl)
            f.loop(0, steps, lambda q: transposed_rows(b, p, f.add(k0, f.mul(q, vl))))
            whole = f.add(k0, f.mul(steps, vl))
        f.loop(whole, k1, lambda kk: panel_row(trans_b, b, p, kk, nr))

    def nest(trans_b):
        rows = "%rows"
        blocks = f.div(k, rows, up=True)

        def block(q):       # items q * npan + [0, npan) of [start, end): (batch, block) q
            b, k0 = f.div(q, blocks), f.mul(f(f"urem i64 {q}, {blocks}"), rows)
            k1, first = f.clamp("smin", f.add(k0, rows), k), f.mul(q, npan)
            lo = f.clamp("smax", f(f"sub nsw i64 {start}, {first}"), 0)
            hi = f.clamp("smin", f(f"sub nsw i64 {end}, {first}"), npan)
            f.loop(lo, f.clamp("smin", hi, full), lambda p: full_panel(trans_b, b, p, k0, k1))
            f.loop(f.clamp("smax", lo, full), hi,
                   lambda p: f.loop(k0, k1, lambda kk: panel_row(trans_b, b, p, kk, edge)))
        items = f.mul(f.mul(batch, blocks), npan)
        start, end = (f.clamp("smin", f.clamp("smax", x, 0), items) for x in ("%start", "%end"))
        packing, packed = f.fresh("packing"), f.fresh("packed")
        f.emit(f"br i1 {f(f'icmp slt i64 {start}, {end}')}, label {packing}, label {packed}")
        f.label(packing)
        f.loop(f.div(start, npan), f.div(end, npan, up=True), block)
        f.emit(f"br label {packed}")
        f.label(packed)
    f.branches("%trans_b", nest)
    return f.text(f"void @\"{symbol}.pack\"(ptr noalias %b, ptr noalias %scratch, i64 %batch, "
                  "i64 %k, i64 %n, i64 %rows, i64 %start, i64 %end, i1 %trans_b)", "noinline")


TRANSPOSED_LANES = 16   # wider vectors (int8 from AVX2 on, int16 with AVX-512) pack element
                        # by element: a 32 x 32 transpose is 160 shuffles


def _transposed(f, rows, vl):
    """The VL x VL block whose rows are the vectors `rows`, transposed: log2(VL) rounds,
    round b swapping the off-diagonal b x b blocks of every 2b x 2b block (b = 1, 2, ..,
    VL/2), each two shuffles of two rows (unpacks, shuffles and 128-bit permutes on x86)."""
    rows, ty, b = list(rows), f"<{vl} x {f.elem}>", 1
    while b < vl:
        for i in (i for i in range(vl) if not i & b):
            pair = f"{ty} {rows[i]}, {ty} {rows[i + b]}"
            for r, mask in ((i, [m if not m & b else vl + m - b for m in range(vl)]),
                            (i + b, [m + b if not m & b else vl + m for m in range(vl)])):
                rows[r] = f(f"shufflevector {pair}, <{vl} x i32> "
                            f"<{', '.join(f'i32 {x}' for x in mask)}>")
        b *= 2
    return rows
