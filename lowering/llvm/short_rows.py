"""Sums, maxima and minima of many short rows (the last axis, a constant 2..256 items, e.g.
the rows of a thin matvec x @ w after rewrites.py), ROWS rows at a time.

Reducing one row alone ends in a horizontal reduction of its vector accumulator (a
shuffle and an op per halving) plus the loop's setup: ~35 cycles a 32-float row, more
than the row's own adds. Here ROWS rows accumulate side by side, each in a vector of
lanes (chunks of the row; the last one padded with the identity), and the ROWS vectors
are combined by a transpose tree: two vectors of G rows x P partial results become one
of 2G rows x P/2 (two shuffles and one op), so 8 rows of 16 lanes take 8 ops and 16
shuffles instead of 8 x 4 of each. The element reads are the usual scalar reads (fused
producers included) in a loop over a chunk's lanes, accumulated into one array per row:
LLVM's loop vectorizer runs that loop as one vector step (vector loads and producers)
and the arrays become vector registers. (Gathering the reads into vectors in the emitted
code instead took 2-3x the optimize time.) Accuracy is that of reductions.py's row path:
float32 sums (and float16/bfloat16, in float registers) add the row's items in float32
in some order, as its blocks of at most reductions.BLOCK do; max/min use
llvm.maximum/minimum (NaN propagates).
"""
from llvmlite import ir

from lowering.llvm import irutil
from lowering.llvm.cpu import CURRENT
from lowering.llvm.fusion import parallel_extent
from lowering.llvm.irutil import F32, F64, REDUCE_FAST, i64, kind, lltype
from lowering.llvm.transpose import NOT_UNROLLED

ROWS = 8                # rows reduced together: a power of two
LENGTHS = (2, 256)      # the row lengths taken: longer rows amortize their own reduction
KERNELS = ("reduce_sum", "reduce_max", "reduce_min")


def applies(kernel, x, axes):
    """Whether the reduction of aval x over `axes` runs here: the last axis alone, of a
    constant LENGTHS[0]..LENGTHS[1] items, float items (sum, max, min) or integer sums."""
    k = kind(x.dtype)
    return (kernel in KERNELS and tuple(axes) == (x.ndim - 1,) and x.ndim >= 2
            and LENGTHS[0] <= x.shape[-1] <= LENGTHS[1]
            and (k == "f" or (k in "iu" and kernel == "reduce_sum")))


def emit(ctx, kernel, x, out, identity, combine):
    """The rows of output `out` (reductions of x's last axis, starting from `identity`,
    combine(ctx, acc, item) the scalar step) in blocks of ROWS rows along the output's
    last axis. The last block's rows past the end repeat the last row (computed and
    stored again, the same value), so there is one code path, not a second per-row
    one for the rows left over."""
    b, shape = ctx.b, out.aval.shape
    scalar, vector = (lambda a, v: combine(ctx, a, v)), _vector_combine(ctx, kernel, combine)
    split_rows = parallel_extent(shape[:-1]) > 1
    with ctx.nest(shape[:-1], parallel=split_rows) as om:
        lo, hi = (i64(0), i64(shape[-1])) if split_rows else (ctx.start, ctx.end)
        blocks = b.udiv(b.add(b.sub(hi, lo), i64(ROWS - 1)), i64(ROWS))
        last = b.sub(hi, i64(1))
        with ctx.loop(0, blocks, "rowblk") as blk:
            first = b.add(lo, b.mul(blk, i64(ROWS), flags=("nuw", "nsw")), flags=("nuw", "nsw"))
            rows = [first] + [b.add(first, i64(r), flags=("nuw", "nsw")) for r in range(1, ROWS)]
            rows = [b.select(b.icmp_signed("<", row, last), row, last) for row in rows]
            sums = _block(ctx, x, om, rows, identity, scalar, vector)
            for row, value in zip(rows, sums):
                out.store(om + [row], value)


def lanes(dtype, n):
    """Lanes of a row's vector accumulator: a vector register's worth of `dtype` register
    values, no more than the row's length rounded up to a power of two."""
    width = CURRENT.vector_bytes // (8 if lltype(dtype) == F64 else 4)
    return min(width, 1 << (n - 1).bit_length())


def _block(ctx, x, om, rows, identity, scalar, vector):
    """The reductions of x's rows `rows` (output positions om + [row]), in row order."""
    b, n = ctx.b, x.aval.shape[-1]
    width = lanes(x.aval.dtype, n)
    vt, t = ir.VectorType(identity.type, width), identity.type
    item = 8 if t == F64 else 4 if t == F32 else t.width // 8     # the arrays' alignment
    start = ir.Constant(ir.ArrayType(identity.type, width), [identity.constant] * width)
    accs = [irutil.entry_slot(b, start) for _ in rows]
    for acc in accs:
        b.store(start, acc)

    def chunk(k0, count, hints=()):
        with ctx.loop(0, count, "lane", hints) as i:
            k = b.add(k0, i, flags=("nuw", "nsw"))
            for row, acc in zip(rows, accs):
                p = b.gep(acc, [i64(0), i], inbounds=True)
                b.store(scalar(b.load(p), x.read(om + [row, k])), p)
    if n // width:
        with ctx.loop(0, n // width, "chunk", NOT_UNROLLED) as c:
            chunk(b.mul(c, i64(width), flags=("nuw", "nsw")), width,
                  (("llvm.loop.vectorize.width", width),))
    if n % width:
        chunk(i64(n - n % width), n % width)
    sums = [b.load(b.bitcast(acc, vt.as_pointer()), align=item) for acc in accs]
    return _transpose_tree(b, sums, width, vector)


def _transpose_tree(b, vectors, width, combine):
    """The per-row results of `vectors`, each one row's `width` partial results: pairs
    of vectors of G rows x P partials (row-major lanes) become one of 2G rows x P/2 while
    P > 1 and vectors remain to pair; then each vector halves itself down to 1 partial."""
    groups, partials = 1, width
    while len(vectors) > 1 and partials > 1:
        vectors = [_halve(b, vectors[i], vectors[i + 1], groups, partials, combine)
                   for i in range(0, len(vectors), 2)]
        groups, partials = 2 * groups, partials // 2
    while partials > 1:
        vectors = [_halve(b, v, None, groups, partials, combine) for v in vectors]
        partials //= 2
    return [b.extract_element(v, i64(i)) for v in vectors for i in range(groups)]


def _halve(b, u, v, groups, partials, combine):
    """u (and v, if given), G rows x P partials each, as one vector of their rows with P/2
    partials each: the two halves of each row's partials combined lane by lane."""
    half, width = partials // 2, groups * partials
    sources = [g * partials for g in range(groups)]
    if v is not None:
        sources += [width + g * partials for g in range(groups)]
    low = [s + p for s in sources for p in range(half)]
    other = v if v is not None else ir.Constant(u.type, ir.Undefined)
    mask = lambda m: ir.Constant(ir.VectorType(ir.IntType(32), len(m)), m)
    return combine(b.shuffle_vector(u, other, mask(low)),
                   b.shuffle_vector(u, other, mask([i + half for i in low])))


def _vector_combine(ctx, kernel, combine):
    """fn(acc, v) combining vectors lane by lane as combine(ctx, acc, x) does scalars."""
    b = ctx.b
    if kernel == "reduce_sum":
        return lambda a, v: combine(ctx, a, v)
    base = "maximum" if kernel == "reduce_max" else "minimum"

    def extreme(a, v):
        name = f"llvm.{base}.v{a.type.count}{'f64' if a.type.element == F64 else 'f32'}"
        return b.call(irutil.intrinsic(b.module, name, a.type, [a.type, a.type]), [a, v],
                      fastmath=REDUCE_FAST)
    return extreme

