"""Scans (cumsum, cumprod) as whole kernels: one sequential pass along the axis per work
item (the other axes), with the input's elementwise producers fused into the read.

Accumulation is strictly in order and in the kernel's dtype, without reassociation, so
results are NumPy's bit for bit (NumPy's cumsum is sequential too). float16/bfloat16
accumulate in double, as the numpy kernels do: a float32 sum in order stalls past 2**24
steps (1e-2 steps of float16 grow it by 5 float32 ulps each from 16,384 on, where each
should be 5.12). Each output is rounded to float32, then to its dtype (rounding double
to float16 once takes ~10 more instructions an element).

argsort is a bottom-up merge sort of (value, index) pairs per row (stable; NaN after
every number, as NumPy sorts), branch-free inside each merge, ping-ponging between the
output and scratch buffers.
"""
import numpy as np
from llvmlite import ir

from ir import ShapedArray
from lowering.llvm.emit import Buffer
from lowering.llvm.irutil import BF16, HALF, I64, const, i64, kind
from lowering.llvm.protocol import KernelEmitter

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
_OPS = {"cumsum": {"f": "fadd", "i": "add", "u": "add", "b": "or_"},
        "cumprod": {"f": "fmul", "i": "mul", "u": "mul", "b": "and_"}}


def _others(shape, axis):
    return shape[:axis] + shape[axis + 1:]


def _scan(kernel):
    def body(ctx, ins, outs, *, axis):
        x, out, b = ins[0], outs[0], ctx.b
        dtype = x.aval.dtype
        wide, narrow = (F64, F32) if dtype in (HALF, BF16) else (dtype, dtype)
        combine = getattr(b, _OPS[kernel][kind(dtype)])
        # -0.0 is the float sum's identity (-0.0 + 0.0 == 0.0): NumPy starts at x[0]
        init = const({"cumsum": -0.0 if kind(dtype) == "f" else 0, "cumprod": 1}[kernel], wide)
        with ctx.nest(_others(x.aval.shape, axis), parallel=True) as om:
            acc = ctx.slot(init)
            with ctx.loop(0, x.aval.shape[axis]) as j:
                pos = om[:axis] + [j] + om[axis:]
                b.store(combine(b.load(acc), ctx.convert(x.read(pos), dtype, wide)), acc)
                out.store(pos, ctx.convert(b.load(acc), wide, narrow))  # store rounds
    body.__name__ = kernel
    return body


def _items(in_avals, out_avals, *, axis):
    return next((d for d in _others(in_avals[0].shape, axis) if d != 1), 1)


def _less(b, k, u, v):
    """u sorts strictly before v (NaN last); k is the dtype's kind."""
    if k == "f":
        return b.or_(b.fcmp_ordered("<", u, v),
                     b.and_(b.fcmp_unordered("uno", v, v), b.fcmp_ordered("ord", u, u)))
    return (b.icmp_signed if k == "i" else b.icmp_unsigned)("<", u, v)


def _argsort(ctx, ins, outs, *, axis):
    """Merge (value, index) pairs, so that a merge step reads its operands sequentially."""
    x, out, b = ins[0], outs[0], ctx.b
    n, dtype, shape = x.aval.shape[axis], x.aval.dtype, out.aval.shape
    size = out.aval.size

    def scratch(offset, dt):
        ptr = b.gep(ctx.scratch, [i64(offset)], source_etype=ir.IntType(8))
        return Buffer(b, ShapedArray(shape, dt), ptr)
    idx = [out, scratch(0, np.int64)]
    val = [scratch(size * 8, dtype), scratch(size * (8 + dtype.itemsize), dtype)]
    passes = max(n - 1, 0).bit_length()             # widths 1, 2, 4, ... < n
    with ctx.nest(_others(x.aval.shape, axis), parallel=True) as om:
        def at(j):
            return om[:axis] + [j] + om[axis:]
        s = passes % 2                               # the last pass writes idx[0]: out
        with ctx.loop(0, n) as j:
            idx[s].store(at(j), j)
            val[s].store(at(j), x.read(at(j)))
        for p in range(passes):
            w, d = 1 << p, 1 - s
            with ctx.loop(0, -(-n // (2 * w))) as blk:
                lo = b.mul(blk, i64(2 * w))
                mid, hi = _min(b, b.add(lo, i64(w)), n), _min(b, b.add(lo, i64(2 * w)), n)
                last = b.sub(hi, i64(1))
                i, j = ctx.slot(lo), ctx.slot(mid)
                with ctx.loop(lo, hi) as t:
                    iv, jv = b.load(i), b.load(j)
                    pi, pj = at(_min(b, iv, last)), at(_min(b, jv, last))
                    vi, vj = val[s].load(pi), val[s].load(pj)
                    right = b.and_(b.icmp_signed("<", jv, hi), b.or_(
                        b.icmp_signed(">=", iv, mid), _less(b, kind(dtype), vj, vi)))
                    idx[d].store(at(t), b.select(right, idx[s].load(pj), idx[s].load(pi)))
                    val[d].store(at(t), b.select(right, vj, vi))
                    step = b.zext(right, I64)
                    b.store(b.add(jv, step), j)
                    b.store(b.add(iv, b.sub(i64(1), step)), i)
            s = d


def _min(b, v, n):
    n = n if not isinstance(n, int) else i64(n)
    return b.select(b.icmp_signed("<", v, n), v, n)


def _scratch(in_avals, out_avals, *, axis):
    """An index buffer and two value buffers of the output's size."""
    return out_avals[0].size * (8 + 2 * in_avals[0].dtype.itemsize)


KERNELS = {k: KernelEmitter(_scan(k), parallel=_items) for k in ("cumsum", "cumprod")}
def _sort_work(in_avals, out_avals, *, axis):
    """~2 ns per element and merge pass (decides splitting across threads)."""
    return 2.0 * in_avals[0].size * max(in_avals[0].shape[axis] - 1, 1).bit_length()


KERNELS["argsort"] = KernelEmitter(_argsort, fuse_inputs=False, parallel=_items,
                                   scratch=_scratch, work=_sort_work)
