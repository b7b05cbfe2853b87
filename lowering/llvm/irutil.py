"""Small llvmlite.ir helpers shared by the code generator and the kernel impls: dtype <->
LLVM type, constants, counted loops, intrinsics, and the fast-math flag sets.

Values live in registers as i1 (bool), i8, i16, i32, i64 (signed and unsigned alike: the
ops say which), float, double. float16 and bfloat16 live in float registers (issue 11
allows it): loads widen them exactly, `round_to` rounds a result to their precision as
NumPy and ml_dtypes round each op's result, and stores round to nearest even (NaN stays
NaN). Bools are stored in memory as one byte (NumPy's layout).
"""
import contextlib

import numpy as np
from llvmlite import ir

from ir.errors import CodegenError
from ir.types import BFLOAT16 as BF16, dtype_kind as kind

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()
# The fast-math flags of user arithmetic (scalars.py, ctx.FAST): none, so that each + - * /
# sqrt rounds once as NumPy's ufuncs do (`contract` would fuse a*b+c into one fma, `nsz`
# fold x + 0.0 into x, `arcp` turn x / y into x * (1 / y), `afn` approximate sqrt). The
# math library's functions keep their own flags (mathir.FAST_MATH; they are ulp-tested).
FAST = ()
REDUCE_FAST = ("reassoc", "nsz")                     # only on reduction accumulators
HALF = np.dtype(np.float16)

_TYPES = {np.dtype(np.bool_): I1, **{np.dtype(t): ir.IntType(8 * np.dtype(t).itemsize) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)},
    HALF: F32, BF16: F32, np.dtype(np.float32): F32, np.dtype(np.float64): F64}
_MEMTYPES = {np.dtype(np.bool_): I8, HALF: F16, BF16: I16}


def lltype(dtype):
    """Register type of a NumPy dtype."""
    try:
        return _TYPES[np.dtype(dtype)]
    except KeyError:
        raise CodegenError(f"llvm backend: dtype {np.dtype(dtype)} is not supported") from None


def memtype(dtype):
    """In-memory element type (bool is a byte, float16 a half, bfloat16 its 16 bits)."""
    return _MEMTYPES.get(np.dtype(dtype)) or lltype(dtype)


def is_float(dtype):
    return kind(np.dtype(dtype)) == "f"


def const(value, dtype):
    """A register constant of `dtype` (floats are exact: llvmlite prints them in hex;
    unsigned values are given as their two's-complement bits)."""
    dt = np.dtype(dtype)
    v = np.asarray(value).astype(dt)[()]
    if kind(dt) == "f":
        return ir.Constant(lltype(dt), float(v))
    t, v = lltype(dt), int(v)
    return ir.Constant(t, v - (1 << t.width) if dt.kind == "u" and v >> t.width - 1 else v)


def _bf16_bits(b, x):
    """The float x rounded to bfloat16 (nearest even), in the high half of an i32; a NaN
    is made quiet, as ml_dtypes does."""
    bits = b.bitcast(x, I32)
    odd = b.and_(b.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
    rounded = b.add(bits, b.add(odd, ir.Constant(I32, 0x7FFF)))
    return b.select(b.fcmp_unordered("uno", x, x), b.or_(bits, ir.Constant(I32, 0x400000)),
                    rounded)


def round_to(b, x, dtype):
    """The float register value x rounded to float16/bfloat16 precision (others: x)."""
    dt = np.dtype(dtype)
    if dt == HALF:
        return b.fpext(b.fptrunc(x, F16), F32)
    if dt == BF16:
        return b.bitcast(b.and_(_bf16_bits(b, x), ir.Constant(I32, -65536)), F32)
    return x


def i64(n):
    return ir.Constant(I64, int(n))


# A native function returns 0 or a failure code: (error table index + 1) << VALUE_BITS,
# plus an offending value in the low bits for range checks (saturated to fit).
VALUE_BITS = 48
MAX_ERRORS = (1 << 63 - VALUE_BITS) - 1         # so that codes stay positive
_VALUE_MIN, _VALUE_MAX = -1 << VALUE_BITS - 1, (1 << VALUE_BITS - 1) - 1


def failure(errors, rc):
    """(exception class, message) of failure code rc, given the module's error table of
    (class, message); '{value}' in the message becomes the value."""
    error, message = errors[(rc >> VALUE_BITS) - 1]
    value = (rc & (1 << VALUE_BITS) - 1) - ((rc >> VALUE_BITS - 1 & 1) << VALUE_BITS)
    shown = (f">= {value}" if value == _VALUE_MAX else f"<= {value}" if value == _VALUE_MIN
             else str(value))
    return error, message.replace("{value}", shown)


def fold_range_checks(module, name, checks):
    """Before each `ret` of function `name`, fold `checks` [(lo slot, hi slot, n, code)]
    (running min and max of values that must lie in [0, n)) into the returned code."""
    b = ir.IRBuilder()
    for block in module.globals[name].blocks if checks else ():
        ret = block.terminator
        if not isinstance(ret, ir.Ret):
            continue
        b.position_before(ret)
        rc = ret.return_value
        smin, smax = (typed_intrinsic(b, f, I64, 2) for f in ("smin", "smax"))
        for lo, hi, n, code in checks:
            lo, hi = b.load(lo), b.load(hi)
            above = b.icmp_signed(">=", hi, i64(n))
            value = b.call(smin, [b.call(smax, [b.select(above, hi, lo), i64(_VALUE_MIN)]),
                                  i64(_VALUE_MAX)])
            packed = b.or_(b.and_(value, i64((1 << VALUE_BITS) - 1)), i64(code << VALUE_BITS))
            rc = b.select(b.or_(above, b.icmp_signed("<", lo, i64(0))), packed, rc)
        ret.replace_usage(ret.return_value, rc)


def from_memory(b, v, dtype):
    """The register value of `v`, a value of dtype's memory type (memtype)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    if dt == HALF:
        return b.fpext(v, F32)
    if dt == BF16:
        return b.bitcast(b.shl(b.zext(v, I32), ir.Constant(I32, 16)), F32)
    return v


def to_memory(b, value, dtype):
    """Register value `value` of `dtype` as its memory type (memtype) holds it."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return b.zext(value, I8)
    if dt == HALF:
        return b.fptrunc(value, F16)
    if dt == BF16:
        return b.trunc(b.lshr(_bf16_bits(b, value), ir.Constant(I32, 16)), I16)
    return value


def load(b, ptr, flat, dtype):
    """Element `flat` of a buffer of `dtype`, as a register value."""
    mt = memtype(dtype)
    return from_memory(b, b.load(b.gep(ptr, [flat], inbounds=True, source_etype=mt), typ=mt),
                       dtype)


def store(b, ptr, flat, value, dtype):
    b.store(to_memory(b, value, dtype),
            b.gep(ptr, [flat], inbounds=True, source_etype=memtype(dtype)))


def return_if_failed(b, rc):
    """Return failure code rc (nonzero) from the current function."""
    with b.if_then(b.icmp_unsigned("!=", rc, i64(0)), likely=False):
        b.ret(rc)


def intrinsic(module, name, ret, args):
    """Declare (once) and return intrinsic/external function `name`."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name)
    return fn


def typed_intrinsic(b, base, value_type, nargs):
    """`llvm.<base>.<f32|f64|i32|i64>` taking `nargs` values of `value_type`."""
    suffix = {F32: "f32", F64: "f64", I8: "i8", I16: "i16", I32: "i32", I64: "i64",
              I1: "i1"}[value_type]
    return intrinsic(b.module, f"llvm.{base}.{suffix}", value_type, [value_type] * nargs)


@contextlib.contextmanager
def loop(b, start, end, name="i", hints=()):
    """`for (i = start; i < end; i++)`: yields i with the builder inside the body; on exit
    the builder sits after the loop. Trip counts of zero are handled (guarded). `hints`
    are LLVM loop metadata: flag names (e.g. "llvm.loop.unroll.disable") or (name, i32
    value) pairs (e.g. ("llvm.loop.interleave.count", 1))."""
    start = start if isinstance(start, ir.Value) else i64(start)
    end = end if isinstance(end, ir.Value) else i64(end)
    pre = b.block
    body = b.append_basic_block(f"{name}.body")
    exit_ = b.append_basic_block(f"{name}.exit")
    b.cbranch(b.icmp_signed("<", start, end), body, exit_)
    b.position_at_end(body)
    i = b.phi(I64, name=name)
    i.add_incoming(start, pre)
    yield i
    nxt = b.add(i, i64(1), name=f"{name}.next", flags=("nuw", "nsw"))
    i.add_incoming(nxt, b.block)
    latch = b.cbranch(b.icmp_signed("<", nxt, end), body, exit_)
    if hints:
        m = b.module
        loop_id = m.add_metadata([None] + [m.add_metadata(
            [ir.MetaDataString(m, h)] if isinstance(h, str) else
            [ir.MetaDataString(m, h[0]), ir.Constant(ir.IntType(32), h[1])]) for h in hints])
        loop_id.operands = (loop_id,) + loop_id.operands[1:]   # a loop id names itself
        latch.set_metadata("llvm.loop", loop_id)
    b.position_at_end(exit_)


def entry_slot(b, init):
    """A mutable local initialized in the entry block: an accumulator across all the
    loops of a function (promoted to registers by mem2reg)."""
    with b.goto_entry_block():
        p = b.alloca(init.type)
        b.store(init, p)
    return p


def slot(b, init):
    """A mutable local (alloca in the entry block, promoted to a register by mem2reg),
    initialized to `init` at the current position: loop accumulators without phis."""
    with b.goto_entry_block():
        p = b.alloca(init.type)
    b.store(init, p)
    return p
