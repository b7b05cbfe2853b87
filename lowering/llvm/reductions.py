"""Reductions (sum/prod/max/min over any axes) and argmax/argmin, with their elementwise
producers fused into the read of each element.

Reducing the innermost axis: one output element per work item, the reduced axes are
inner loops whose accumulator is the only op carrying `reassoc` (so LLVM vectorizes it),
and float32 sums are blocked (float32 partial sums over runs of at most BLOCK elements,
added into a float64 total), as accurate as NumPy's pairwise sum. Keeping the innermost
axis: whole rows are accumulated (contiguous, vectorized across the row), float32 sums
in a float64 scratch row (float16/bfloat16 too, from their float registers, rounded once
at the store as the numpy kernels round them). max/min use
llvm.maximum/minimum, which propagate NaN as NumPy does; argmax/argmin return the first
NaN's index if there is one, else the first extreme. Unsigned integers compare unsigned.
"""
import contextlib

import numpy as np
from llvmlite import ir

from ir import ShapedArray
from lowering.llvm import short_rows
from lowering.llvm.emit import Buffer, row_hints
from lowering.llvm.fusion import parallel_extent
from lowering.llvm.irutil import F32, F64, REDUCE_FAST, const, i64, kind, lltype, typed_intrinsic
from lowering.llvm.protocol import Index, KernelEmitter
from lowering.llvm.scalars import arith
from lowering.llvm.transpose import NOT_UNROLLED
from lowering.settings import settings

BLOCK = 4096
# A reduction to one element of at least SPLIT_AT items runs as chunks of CHUNK items (a
# multiple of BLOCK), each chunk's partial result computed by the kernel's prepare step
# (split across threads) and the partials combined in order by its one work item: one
# thread read W3's 64 MB sum(x*x) at 11 GB/s on a Zen 3 core, half the copy bandwidth.
# The chunks do not depend on the thread count, so neither do the results.
SPLIT_AT, CHUNK = 1 << 19, 1 << 16
READ_NS = 0.1   # a chunked reduction's estimate: one core's read (~10 GB/s on Zen 3), per
# byte. The default estimate counts arithmetic only (a second thread added no bandwidth to
# a copy on Zen 5); on Zen 3 two threads took W3 from 5.4-6.2 to 3.5-4.8 ms (`python
# examples/benchmark.py --only W3`, alternating with the parent).
CHEAP = 4       # a float32 sum of elements read from memory that cost at most this is bound
# by memory, and its loop keeps two accumulators: LLVM's four (each unrolled 4x) made sum(x*x)
# over 64 MB 1.80 ms with 512-bit vectors on Zen 5, against 1.40 ms for sum(x) (two: 1.41 ms;
# AVX2 code ~1.5 ms either way). Costlier elements (sum(exp(x)): 8% slower with two) and
# row-local inputs (in L1, bound by the adds' latency) keep LLVM's choice.
_MEMORY_BOUND = (("llvm.loop.interleave.count", 2),)

_INIT = {"reduce_sum": 0, "reduce_prod": 1}
# Sums and products may reassociate, but not ignore signed zeros (REDUCE_FAST's nsz, kept
# for max/min): with it LLVM folds the 0.0 start away (0.0 + x -> x), so a sum of -0.0s
# gave -0.0 where NumPy, JAX and the numpy backend give 0.0.
SUM_FAST = ("reassoc",)
# max/min over an innermost axis of at least SPLIT_MIN items run as settings.reduce_splits
# chains (see _split_extreme) where vector registers are many (AVX-512's 32): LLVM unrolled a 1,024-float
# row max there into one chain of 64 vector maxima (~250 cycles a row), which the rest of
# W2's row waits on: W2 one thread 1.62 -> 1.25 ms, two 822 -> 655 us. AVX2 code already
# had several chains, and four more spilled its 16 registers (W2 1.88 -> 2.24 ms).
SPLIT_MIN = 64
# The innermost reduced axis is the input's last; a short one (a constant ROLLED[0]..ROLLED[1]
# items) keeps its loop (unroll.disable), so LLVM vectorizes along the row: unrolled fully,
# it left the loop over output elements innermost and vectorized that one instead, with a
# gather per reduced item, e.g. the rows of a (2000, 32) @ (32,) matvec: 100 -> 20 us a call.
# Longer loops are never unrolled fully; shorter ones are narrower than a vector.
ROLLED = (8, 256)
# A column reduction into a short output row (at most ROLLED[1] items) keeps its reduced loop
# scalar (vectorize.width 1): LLVM then unrolls the row loop inside it and holds the row in
# vector registers; else it vectorized the reduced loop, with a gather per column of the
# row: (2000,) @ (2000, 32) took 104 us, now 13 (W9's 64-wide rows: unchanged).
_SCALAR = (("llvm.loop.vectorize.width", 1),)


def _identity(kernel, dtype):
    dt = np.dtype(dtype)
    if kernel in _INIT:
        return const(_INIT[kernel], dt)
    big = kernel == "reduce_min"          # max starts at the lowest value, min at the highest
    if kind(dt) == "f":
        return const(np.inf if big else -np.inf, dt)
    if dt.kind == "b":
        return const(big, dt)
    info = np.iinfo(dt)
    return const(info.max if big else info.min, dt)


def _combine(kernel, dtype):
    """fn(ctx, acc, x) -> acc' (reassoc on float accumulators)."""
    dt = np.dtype(dtype)
    if kind(dt) == "f":
        if kernel in ("reduce_max", "reduce_min"):
            base = "maximum" if kernel == "reduce_max" else "minimum"
            return lambda ctx, a, x: ctx.b.call(typed_intrinsic(ctx.b, base, a.type, 2), [a, x],
                                                fastmath=REDUCE_FAST)
        method = "fadd" if kernel == "reduce_sum" else "fmul"
        return lambda ctx, a, x: getattr(ctx.b, method)(a, x, flags=SUM_FAST)
    op = {"reduce_sum": "add", "reduce_prod": "mul", "reduce_max": "max",
          "reduce_min": "min"}[kernel]
    return arith(op, dt)


def _positions(out_multi, red_multi, axes, ndim):
    """The input position from output coordinates and reduced-axis coordinates."""
    it_out, it_red = iter(out_multi), iter(red_multi)
    return [next(it_red) if d in axes else next(it_out) for d in range(ndim)]


def _columns(x, axes):
    """Reduce by accumulating whole output rows (input rows stream contiguously) when the
    innermost axis is kept and longer than one element, instead of one strided
    reduction per output element."""
    return bool(axes) and axes[-1] != x.ndim - 1 and x.shape[-1] > 1


def _reduce(kernel):
    def body(ctx, ins, outs, *, axes):
        x, out = ins[0], outs[0]
        red = [x.aval.shape[a] for a in axes]
        if _chunks(x.aval, out.aval, axes):
            _combine_partials(ctx, kernel, x, out, axes)
        elif _columns(x.aval, axes):
            _reduce_columns(ctx, kernel, x, out, axes, red)
        else:
            _reduce_rows(ctx, kernel, x, out, axes)
    body.__name__ = kernel
    return body


def _reduce_rows(ctx, kernel, x, out, axes):
    """One output element per work item; its reduced axes are the inner loops (many short
    rows: several at a time, short_rows.py)."""
    if short_rows.applies(kernel, x.aval, axes):
        return short_rows.emit(ctx, kernel, x, out, _identity(kernel, x.aval.dtype),
                               _combine(kernel, x.aval.dtype))
    with ctx.nest(out.aval.shape, parallel=True) as om:
        out.store(om, reduce_at(ctx, kernel, x, om, axes))


def reduce_at(ctx, kernel, x, om, axes):
    """The reduction of operand x over `axes` at output position `om` (emitted loops)."""
    b, dtype, red = ctx.b, x.aval.dtype, [x.aval.shape[a] for a in axes]
    if _f32_sum(kernel, dtype) and red and red[-1] > 1:
        total = ctx.slot(ir.Constant(F64, 0.0))
        with ctx.nest(red[:-1]) as rm:
            _blocked_row(ctx, x, om, rm, axes, red[-1], total)
        return b.fptrunc(b.load(total), F32)
    combine = _combine(kernel, dtype)
    if kernel in ("reduce_max", "reduce_min") and settings.reduce_splits > 1 and red \
            and red[-1] >= SPLIT_MIN:
        return _split_extreme(ctx, kernel, combine, x, om, axes, red)
    slot = ctx.slot(_identity(kernel, dtype))
    with _reduced(ctx, red, _rolled(red[-1]) if red else ()) as rm:
        v = x.read(_positions(om, rm, axes, x.aval.ndim))
        b.store(combine(ctx, b.load(slot), v), slot)
    return b.load(slot)


def _rolled(n):
    """Loop hints of an innermost reduced loop of n items (see ROLLED)."""
    return NOT_UNROLLED if ROLLED[0] <= n <= ROLLED[1] else ()


@contextlib.contextmanager
def _reduced(ctx, red, hints, outer=()):
    """ctx.nest(red) with LLVM loop hints `outer`, its innermost loop with `hints`."""
    if not hints or red[-1] == 1:
        with ctx.nest(red, hints=outer) as rm:
            yield rm
        return
    with ctx.nest(red[:-1], hints=outer) as rm, ctx.loop(0, red[-1], "k", hints) as k:
        yield rm + [k]


def _split_extreme(ctx, kernel, combine, x, om, axes, red):
    """max/min of the innermost reduced axis as settings.reduce_splits running results over
    contiguous parts of it, combined at the end: the same value in any order (NaN and signed zeros
    included), and that many chains of vector maxima instead of one."""
    b, n, ndim = ctx.b, red[-1], x.aval.ndim
    splits = settings.reduce_splits
    part = n // splits
    slots = [ctx.slot(_identity(kernel, x.aval.dtype)) for _ in range(splits)]

    def take(slot, rm, k):
        v = x.read(_positions(om, list(rm) + [k], axes, ndim))
        b.store(combine(ctx, b.load(slot), v), slot)
    with ctx.nest(red[:-1]) as rm:
        with ctx.loop(0, part, "k") as k:
            for s, slot in enumerate(slots):
                take(slot, rm, b.add(k, i64(s * part), flags=("nuw", "nsw")))
        with ctx.loop(splits * part, n, "k") as k:
            take(slots[0], rm, k)
    acc = b.load(slots[0])
    for slot in slots[1:]:
        acc = combine(ctx, acc, b.load(slot))
    return acc


def _reduce_columns(ctx, kernel, x, out, axes, red):
    """For each reduced position, combine a whole input row into the output row (float32
    sums accumulate in a float64 scratch row); work items are outer output rows, or the
    columns themselves when there is a single output row."""
    b, dtype, shape = ctx.b, x.aval.dtype, out.aval.shape
    wide = _wide_columns(kernel, x.aval, axes)
    acc = Buffer(b, ShapedArray(shape, np.float64), ctx.scratch) if wide else out
    combine = _combine(kernel, np.float64 if wide else dtype)
    split_rows = parallel_extent(shape[:-1]) > 1
    outer, row = row_hints(shape)
    with ctx.nest(shape[:-1], parallel=split_rows, hints=outer) as pm:
        lo, hi = (0, shape[-1]) if split_rows else (ctx.start, ctx.end)
        with ctx.loop(lo, hi, "j", row) as j:
            acc.store(pm + [j], _identity(kernel, np.float64 if wide else dtype))
        # the reduced loops stay loops around the (vectorized) row: LLVM unrolled short ones
        # fully, a copy of the row's loop per item, e.g. a sum (16, 64, 128) -> (64, 128) to
        # ~1,550 optimized lines (227 rolled, the row still held in vector registers)
        inner = (_SCALAR if shape[-1] <= ROLLED[1] else ()) + NOT_UNROLLED
        with _reduced(ctx, red, inner, NOT_UNROLLED) as rm:
            with ctx.loop(lo, hi, "j", row) as j:
                v = x.read(_positions(pm + [j], rm, axes, x.aval.ndim))
                v = b.fpext(v, F64) if wide else v
                acc.store(pm + [j], combine(ctx, acc.load(pm + [j]), v))
        if wide:
            with ctx.loop(lo, hi, "j", row) as j:
                out.store(pm + [j], b.fptrunc(acc.load(pm + [j]), F32))


def _wide_columns(kernel, x, axes):
    """Column sums in float registers accumulate in float64, except float32 sums of at
    most BLOCK rows: those stay in float32 (the blocked error bound of the row path; NumPy
    adds such rows naively in float32), which keeps a 64-wide accumulator row in AVX2's 16
    registers instead of spilling it (W9's v @ w)."""
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return _f32_sum(kernel, x.dtype) and (x.dtype != np.float32 or count > BLOCK)


def _f32_sum(kernel, dtype):
    """Sums in float registers: float32, float16, bfloat16."""
    return kernel == "reduce_sum" and kind(dtype) == "f" and lltype(dtype) == F32


def _blocked_row(ctx, x, om, rm, axes, n, total):
    """total += sum of the innermost reduced axis, in float32 runs of <= BLOCK."""
    _blocked(ctx, lambda j: x.read(_positions(om, list(rm) + [j], axes, x.aval.ndim)),
             i64(0), i64(n), total, _memory_bound(x), _rolled(n))


def _memory_bound(x):
    cost, memory = x.read_profile()
    return memory and cost <= CHEAP


def _blocked(ctx, read, start, end, total, memory_bound, hints=()):
    """total += the float32 sum of read(j) over j in [start, end) (i64 values), in float32
    runs of <= BLOCK items added into the float64 slot `total`."""
    b, known = ctx.b, isinstance(start, ir.Constant) and isinstance(end, ir.Constant)
    if known:                   # a whole row: its blocks and the last one's length known
        n = end.constant - start.constant
        nblocks, clamp = -(-n // BLOCK), n % BLOCK != 0
    else:
        nblocks, clamp = b.udiv(b.add(b.sub(end, start), i64(BLOCK - 1)), i64(BLOCK)), True
    with ctx.loop(0, nblocks, "blk") as blk:
        lo = b.mul(blk, i64(BLOCK), flags=("nuw", "nsw"))
        lo = lo if known and start.constant == 0 else b.add(start, lo, flags=("nuw", "nsw"))
        hi = b.add(lo, i64(BLOCK), flags=("nuw", "nsw"))
        hi = b.select(b.icmp_signed("<", hi, end), hi, end) if clamp else hi
        part = ctx.slot(ir.Constant(F32, 0.0))
        with ctx.loop(lo, hi, "j", (_MEMORY_BOUND if memory_bound else ()) + hints) as j:
            b.store(b.fadd(b.load(part), read(j), flags=SUM_FAST), part)
        b.store(b.fadd(b.load(total), b.fpext(b.load(part), F64)), total)


def _chunks(x, out, axes):
    """Chunks of CHUNK items a reduction of `x` runs in (see SPLIT_AT), or 0."""
    if out.size != 1 or x.size < SPLIT_AT or np.dtype(x.dtype).kind not in "biuf":
        return 0
    return -(-x.size // CHUNK)


def _partial_dtype(kernel, dtype):
    """What a chunk's partial result is kept as: float64 for the float32-register sums (their
    blocked total), else the operand's own dtype."""
    return np.dtype(np.float64) if _f32_sum(kernel, dtype) else np.dtype(dtype)


def _partials(kernel):
    """The prepare step of a chunked reduction: work item c reduces the items [c * CHUNK,
    (c + 1) * CHUNK) of x in C order into partial c (the scratch)."""
    def prepare(ctx, ins, outs, *, axes):
        x, b = ins[0], ctx.b
        dtype, shape = x.aval.dtype, x.aval.shape
        n, size = shape[-1], x.aval.size
        parts = _partials_buffer(ctx, kernel, x, outs[0], axes)
        f32 = _f32_sum(kernel, dtype)
        combine = _combine(kernel, dtype)
        with ctx.loop(ctx.start, ctx.end, "c") as c:
            first = b.mul(c, i64(CHUNK), flags=("nuw", "nsw"))
            last = b.add(first, i64(CHUNK), flags=("nuw", "nsw"))
            last = b.select(b.icmp_signed("<", last, i64(size)), last, i64(size))
            acc = ctx.slot(ir.Constant(F64, 0.0) if f32 else _identity(kernel, dtype))
            rows = (b.udiv(first, i64(n)), b.udiv(b.add(last, i64(n - 1)), i64(n)))
            with ctx.loop(*rows, "r") as r:
                base = b.mul(r, i64(n))
                lo, hi = b.sub(first, base), b.sub(last, base)      # clipped to the row:
                lo = b.select(b.icmp_signed(">", lo, i64(0)), lo, i64(0))
                hi = b.select(b.icmp_signed("<", hi, i64(n)), hi, i64(n))
                outer = Index(b, shape[:-1], flat=r).multi

                def read(j):
                    return x.read(outer + [j])
                if f32:
                    _blocked(ctx, read, lo, hi, acc, _memory_bound(x))
                else:
                    with ctx.loop(lo, hi, "j") as j:
                        b.store(combine(ctx, b.load(acc), read(j)), acc)
            parts.store([c], b.load(acc))
    prepare.__name__ = f"{kernel}_partials"
    return prepare


def _partials_buffer(ctx, kernel, x, out, axes):
    """The chunks' partial results: the scratch, as an array."""
    return Buffer(ctx.b, ShapedArray((_chunks(x.aval, out.aval, axes),),
                                     _partial_dtype(kernel, x.aval.dtype)), ctx.scratch)


def _combine_partials(ctx, kernel, x, out, axes):
    """The chunked reduction's one work item: its partials combined in order."""
    b, dtype = ctx.b, x.aval.dtype
    parts = _partials_buffer(ctx, kernel, x, out, axes)
    pdt = parts.aval.dtype
    combine = _combine(kernel, pdt)
    acc = ctx.slot(_identity(kernel, pdt))
    with ctx.loop(0, parts.aval.shape[0], "c") as c:
        b.store(combine(ctx, b.load(acc), parts.load([c])), acc)
    value = b.load(acc)
    out.store([i64(0)] * out.aval.ndim, b.fptrunc(value, F32) if pdt != dtype else value)


def _arg(kernel):
    def body(ctx, ins, outs, *, axis):
        x, out, b = ins[0], outs[0], ctx.b
        n, ndim = x.aval.shape[axis], x.aval.ndim
        k = kind(x.aval.dtype)
        op = ">" if kernel == "argmax" else "<"
        with ctx.nest(out.aval.shape, parallel=True) as om:
            best = ctx.slot(x.read(_positions(om, [i64(0)], (axis,), ndim)))
            where = ctx.slot(i64(0))
            with ctx.loop(1, n) as j:
                v, cur = x.read(_positions(om, [j], (axis,), ndim)), b.load(best)
                if k == "f":
                    better = b.or_(b.fcmp_ordered(op, v, cur), b.and_(
                        b.fcmp_unordered("uno", v, v), b.fcmp_ordered("ord", cur, cur)))
                elif k in "bu":
                    better = b.icmp_unsigned(op, v, cur)
                else:
                    better = b.icmp_signed(op, v, cur)
                b.store(b.select(better, v, cur), best)
                b.store(b.select(better, j, b.load(where)), where)
            out.store(om, b.load(where))
    body.__name__ = kernel
    return body


def _items(in_avals, out_avals, axes):
    shape = out_avals[0].shape
    if _columns(in_avals[0], axes) and parallel_extent(shape[:-1]) == 1:
        return shape[-1]
    return parallel_extent(shape)


def _scratch(kernel):
    """The partials of a chunked reduction; a float64 accumulator row for float32 sums done
    by columns."""
    def scratch(in_avals, out_avals, axes):
        chunks = _chunks(in_avals[0], out_avals[0], axes)
        if chunks:
            return chunks * _partial_dtype(kernel, in_avals[0].dtype).itemsize
        wide = kernel == "reduce_sum" and _columns(in_avals[0], axes) and _wide_columns(
            kernel, in_avals[0], axes)
        return out_avals[0].size * 8 if wide else None
    return scratch


def _chunk_items(in_avals, out_avals, axes):
    return _chunks(in_avals[0], out_avals[0], axes)


def _work(in_avals, out_avals, axes):
    """A chunked reduction's estimated time: its bytes read (None: the default)."""
    x = in_avals[0]
    return x.size * x.dtype.itemsize * READ_NS if _chunks(x, out_avals[0], axes) else None


def _outputs(in_avals, out_avals, **attrs):
    return parallel_extent(out_avals[0].shape)


KERNELS = {k: KernelEmitter(_reduce(k), parallel=_items, scratch=_scratch(k),
                            prepare=_partials(k), prepare_items=_chunk_items, work=_work)
           for k in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min")}
KERNELS.update({k: KernelEmitter(_arg(k), parallel=_outputs) for k in ("argmax", "argmin")})
