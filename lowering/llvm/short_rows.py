"""Sums, maxima and minima of many short rows (the last axis, a constant 2..256 items,
e.g. the rows of a thin matvec x @ w after rewrites.py), ROWS rows at a time.

Reducing one row alone ends in a horizontal reduction of its vector accumulator (a
shuffle and an op per halving) plus the loop's setup: ~35 cycles a 32-float row, more
than the row's own adds. Here ROWS rows accumulate side by side, each in a vector of
lanes (chunks of the row; the last one padded with the identity), and the ROWS vectors
are combined by a transpose tree: two vectors of G rows x P partial results become one
of 2G rows x P/2 (two shuffles and one op), so 8 rows of 16 lanes take 8 ops and 16
shuffles instead of 8 x 4 of each. The element reads are the usual scalar reads (fused
producers included) gathered into vectors, which LLVM's SLP vectorizer turns into vector
loads and vector producers. Accuracy is that of reductions.py's row path: float32 sums
(and float16/bfloat16, in float registers) add the row's items in float32 in some order,
as its blocks of at most reductions.BLOCK do; max/min use llvm.maximum/minimum (NaN
propagates).
"""
from llvmlite import ir

from lowering.llvm import irutil
from lowering.llvm.cpu import CURRENT
from lowering.llvm.fusion import parallel_extent
from lowering.llvm.irutil import F64, REDUCE_FAST, i64, kind, lltype
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


def emit(ctx, kernel, x, out, identity, combine, one_row):
    """The rows of output `out` (reductions of x's last axis, starting from `identity`,
    combine(ctx, acc, item) the scalar step): blocks of ROWS rows along the output's last
    axis, the rows left over each by one_row(multi-index)."""
    b, shape = ctx.b, out.aval.shape
    combine = _vector_combine(ctx, kernel, combine)
    split_rows = parallel_extent(shape[:-1]) > 1
    with ctx.nest(shape[:-1], parallel=split_rows) as om:
        lo, hi = (i64(0), i64(shape[-1])) if split_rows else (ctx.start, ctx.end)
        blocks = b.udiv(b.sub(hi, lo), i64(ROWS))
        with ctx.loop(0, blocks, "rowblk") as blk:
            first = b.add(lo, b.mul(blk, i64(ROWS), flags=("nuw", "nsw")), flags=("nuw", "nsw"))
            rows = [b.add(first, i64(r), flags=("nuw", "nsw")) for r in range(ROWS)]
            sums = _block(ctx, x, om, rows, identity, combine)
            for row, value in zip(rows, sums):
                out.store(om + [row], value)
        with ctx.loop(b.add(lo, b.mul(blocks, i64(ROWS))), hi, "rowrest") as j:
            out.store(om + [j], one_row(om + [j]))


def lanes(dtype, n):
    """Lanes of a row's vector accumulator: a vector register's worth of `dtype` register
    values, no more than the row's length rounded up to a power of two."""
    width = CURRENT.vector_bytes // (8 if lltype(dtype) == F64 else 4)
    return min(width, 1 << (n - 1).bit_length())


def _block(ctx, x, om, rows, identity, combine):
    """The reductions of x's rows `rows` (output positions om + [row]), in row order."""
    b, n = ctx.b, x.aval.shape[-1]
    width = lanes(x.aval.dtype, n)
    vt = ir.VectorType(identity.type, width)
    start = ir.Constant(vt, [identity.constant] * width)
    accs = [irutil.slot(b, start) for _ in rows]

    def chunk(k0, count):
        for row, acc in zip(rows, accs):
            v = start
            for i in range(count):
                at = b.add(k0, i64(i), flags=("nuw", "nsw")) if i else k0
                v = b.insert_element(v, x.read(om + [row, at]), i64(i))
            b.store(combine(b.load(acc), v), acc)
    if n // width:
        with ctx.loop(0, n // width, "chunk", NOT_UNROLLED) as c:
            chunk(b.mul(c, i64(width), flags=("nuw", "nsw")), width)
    if n % width:
        chunk(i64(n - n % width), n % width)
    return _transpose_tree(b, [b.load(acc) for acc in accs], width, combine)


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

