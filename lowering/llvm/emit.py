"""The emit context that kernel emitters build on: `Ctx` (what a kernel impl gets,
documented in lowering.llvm.protocol), `Operand` and `Buffer` (a whole kernel's inputs
and outputs), `Values` (graph values emitted at a position, fused producers inlined),
`group_function` (a group's function and its ctx), `emit_kernel` (a whole-kernel group)
and `row_hints`. codegen and the group emitters (rows, epilogues) import it; it imports
none of them.

A group function is `i64 g<k>(ptr noalias %buf..., i64 %start, i64 %end)`: its leaves'
buffers, then its outputs', then the slice [start, end) of its parallel work items.
Every function returns 0 or a failure code (irutil.failure decodes it): the error table
entry of the check that fired and, for a range check, an offending value. Range checks
(`Ctx.check_range`) keep a running min and max of the checked values, which vectorize, and
test them once before each return: recording offending values in the loop would not.
"""
import contextlib
import functools

import numpy as np
from llvmlite import ir

from ir import Literal
from ir.errors import CodegenError, KernelError
from lowering.llvm import irutil, mathlib, transpose
from lowering.llvm.irutil import FAST, I64, PTR, const, i64, lltype
from lowering.llvm.protocol import Index
from lowering.llvm.scalars import convert_value
from lowering.settings import settings


@functools.lru_cache(maxsize=None)
def _math_declaration(name, dtype):
    """mathlib's (symbol, IR text), generated once per process per function and dtype."""
    return mathlib.declare(name, dtype)



class Ctx:
    """What kernel impls get (documented in lowering.llvm.protocol)."""
    FAST = FAST

    def __init__(self, mb, b, name, start, end, err, scratch, range_checks):
        self.mb, self.b, self.name, self._err = mb, b, name, err
        self.start, self.end, self.scratch = start, end, scratch
        self._range_checks = range_checks       # shared by the function's node ctxs
        self.in_avals, self.out_avals, self.source = (), (), None

    def for_node(self, node):
        c = object.__new__(Ctx)
        c.__dict__.update(self.__dict__)
        c.in_avals = tuple(x.aval for x in node.inputs)
        c.out_avals = tuple(o.aval for o in node.outputs)
        c.source = node.source
        return c

    in_dtypes = property(lambda self: tuple(a.dtype for a in self.in_avals))
    out_dtype = property(lambda self: self.out_avals[0].dtype)
    out_aval = property(lambda self: self.out_avals[0])

    def const(self, value, dtype=None):
        return const(value, self.out_dtype if dtype is None else dtype)

    def math(self, name, *xs):
        t = xs[0].type
        dtype = np.float32 if t == irutil.F32 else np.float64
        symbol, text = _math_declaration(name, dtype)
        fn = self.mb.external(symbol, t, [t] * len(xs), text)
        return self.b.call(fn, list(xs), fastmath=FAST)

    def external(self, symbol, ret, args, text):
        return self.mb.external(symbol, ret, args, text)

    def unique(self, stem):
        return f"{self.name}.{stem}"

    def intrinsic(self, base, *xs):
        fn = irutil.typed_intrinsic(self.b, base, xs[0].type, len(xs))
        is_float = xs[0].type in (irutil.F32, irutil.F64)
        return self.b.call(fn, list(xs), fastmath=FAST if is_float else ())

    def convert(self, x, src, dst):
        return convert_value(self.b, x, src, dst)

    def fail_if(self, cond, message, error=KernelError):
        """After this kernel returns, raise error(message) if cond was ever true."""
        code = i64(self.mb.error_code(error, message) << irutil.VALUE_BITS)
        b = self.b
        b.store(b.select(cond, code, b.load(self._err)), self._err)

    def finish(self):
        """End the function: return its failure code (0 if no check fired)."""
        self.b.ret(self.b.load(self._err))

    def check_range(self, value, n, message, error=KernelError):
        """After this kernel returns, raise error(message) if the i64 `value` was ever
        outside [0, n); '{value}' in the message becomes such a value (the least or the
        greatest seen). Clamp so the kernel stays in bounds meanwhile."""
        b, code = self.b, self.mb.error_code(error, message)
        lo, hi = (irutil.entry_slot(b, i64(v)) for v in ((1 << 63) - 1, -1 << 63))
        b.store(b.call(irutil.typed_intrinsic(b, "smin", I64, 2), [b.load(lo), value]), lo)
        b.store(b.call(irutil.typed_intrinsic(b, "smax", I64, 2), [b.load(hi), value]), hi)
        self._range_checks.append((lo, hi, n, code))

    def loop(self, start, end, name="i", hints=()):
        return irutil.loop(self.b, start, end, name, hints)

    @contextlib.contextmanager
    def nest(self, shape, parallel=False, hints=(), inner=None):
        """Loops over `shape` yielding the multi-index (axes of extent 1 get no loop).
        With parallel=True the outermost axis of extent > 1 runs over [start, end). Its
        loops get LLVM loop `hints`, the innermost `inner` if given."""
        with contextlib.ExitStack() as stack:
            multi, first = [], parallel
            for axis, d in enumerate(shape):
                if d == 1:
                    multi.append(i64(0))
                    continue
                lo, hi = (self.start, self.end) if first else (0, d)
                first = False
                last = inner is not None and axis == len(shape) - 1
                multi.append(stack.enter_context(self.loop(lo, hi, hints=inner if last else hints)))
            yield multi

    def index(self, shape, flat=None, multi=None):
        return Index(self.b, shape, flat=flat, multi=multi)

    def slot(self, init):
        return irutil.slot(self.b, init)


class Operand:
    """An input of a whole kernel: `read(multi)` emits its value (fused producers
    inlined); `ptr` is its buffer when it is materialized (None for fused/literal)."""

    def __init__(self, values, x, ptr):
        self._values, self._x, self.aval, self.ptr = values, x, x.aval, ptr

    def read(self, multi):
        return self._values.value(self._x, Index(self._values.ctx.b, self.aval.shape,
                                                 multi=multi), {})

    def read_flat(self, flat):
        return self._values.value(self._x, Index(self._values.ctx.b, self.aval.shape,
                                                 flat=flat), {})

    def read_profile(self):
        """(per-element cost of a read: the fused producers' protocol costs, an add 1, a
        transcendental ~20, plus 1 per load; whether it loads from a buffer in memory
        rather than only from row-local ones, rows.py's, which stay in L1)."""
        values, todo, cost, memory = self._values, [self._x], 0, False
        while todo:
            x = todo.pop()
            if isinstance(x, Literal):
                continue
            n = values.part.producer.get(id(x)) if id(x) not in values.buffers else None
            if n is None:
                cost, memory = cost + 1, memory or id(x) not in values.rowwise
            else:
                cost += values.part.impls[id(n)].cost
                todo.extend(n.inputs)
        return cost, memory


class Buffer:
    """An output buffer of a whole kernel (contiguous, row-major)."""

    def __init__(self, b, aval, ptr):
        self.b, self.aval, self.ptr = b, aval, ptr

    def _flat(self, multi):
        return Index(self.b, self.aval.shape, multi=multi).flat

    def load(self, multi):
        return irutil.load(self.b, self.ptr, self._flat(multi), self.aval.dtype)

    def store(self, multi, value):
        irutil.store(self.b, self.ptr, self._flat(multi), value, self.aval.dtype)

    def store_flat(self, flat, value):
        irutil.store(self.b, self.ptr, flat, value, self.aval.dtype)


class Values:
    """Emits graph values at positions inside one function: loads of materialized
    leaves, or the fused producers' code (memoized per position within one element)."""

    def __init__(self, ctx, part, buffers, rowwise=None):
        self.ctx, self.part, self.buffers = ctx, part, buffers
        self.rowwise = rowwise or {}    # id -> "row" | "one": row-local buffers (rows.py)
        self.tiles = {}     # id -> (index key, stack tile, offset): a tiled loop's staged reads

    def value(self, x, index, memo):
        if isinstance(x, Literal):
            return const(x.value, x.aval.dtype)
        key = (id(x), index.key)
        v = memo.get(key)
        if v is not None:
            return v
        tile = self.tiles.get(id(x))
        if tile is not None and tile[0] == index.key:
            v = memo[key] = irutil.load(self.ctx.b, tile[1], tile[2], x.aval.dtype)
            return v
        ptr = self.buffers.get(id(x))
        if ptr is not None:
            local = self.rowwise.get(id(x))
            flat = (index.multi[-1] if local == "row" else i64(0) if local or x.aval.size == 1
                    else index.flat)
            v = irutil.load(self.ctx.b, ptr, flat, x.aval.dtype)
        else:
            n = self.part.producer[id(x)]
            impl, ctx = self.part.impls[id(n)], self.ctx.for_node(n)
            if impl.kind == "scalar":
                v = impl.emit(ctx, *[self.value(y, index, memo) for y in n.inputs], **n.attrs)
            else:
                v = impl.emit(ctx, index, lambda i, idx: self.value(n.inputs[i], idx, memo),
                              **n.attrs)
            want = lltype(x.aval.dtype)
            if getattr(v, "type", None) != want:
                raise CodegenError(f"llvm impl {impl!r} of kernel {n.kernel!r} returned "
                                   f"{getattr(v, 'type', v)}, expected {want} for "
                                   f"{x.aval.dtype} output")
        memo[key] = v
        return v


def group_function(mb, name, grp, scratch, base):
    """`i64 name(ptr leaves..., ptr outputs..., [ptr scratch,] i64 start, i64 end)`; the
    ctx's unique() names derive from the group's `base` name."""
    nbuf = len(grp.leaves) + len(grp.roots) + (scratch is not None)
    fn = ir.Function(mb.module, ir.FunctionType(I64, [PTR] * nbuf + [I64, I64]), name)
    fn.attributes.add("nounwind")
    for arg in fn.args[:nbuf]:
        arg.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    err = irutil.slot(b, i64(0))
    scratch_arg = fn.args[nbuf - 1] if scratch is not None else None
    ctx = Ctx(mb, b, base, fn.args[-2], fn.args[-1], err, scratch_arg,
              mb.range_checks.setdefault(name, []))
    return fn, ctx


def emit_kernel(mb, part, grp, launch, name):
    """A whole-kernel group: its function, and its prepare step's."""
    n = grp.node
    impl = part.impls[id(n)]
    for fname, emit in [(name, impl.emit)] + [(name + ".prep", impl.prepare)] * bool(launch.prepare):
        fn, ctx = group_function(mb, fname, grp, launch.scratch, name)
        values = Values(ctx, part, {id(x): a for x, a in zip(grp.leaves, fn.args)})
        outs = fn.args[len(grp.leaves):len(grp.leaves) + len(grp.roots)]
        ins = [Operand(values, x, values.buffers.get(id(x))) for x in n.inputs]
        emit(ctx.for_node(n), ins, [Buffer(ctx.b, o.aval, p) for o, p in zip(n.outputs, outs)],
             **n.attrs)
        ctx.finish()


# LLVM runs this many vector iterations of a hinted loop side by side (a long row here, a
# long costly flat loop in codegen).
INTERLEAVED = 4
# A row loop of more than settings.long_row items (its bounds are constants once a group is inlined
# into its caller) was vectorized and then fully unrolled by LLVM, and the loops around it
# too: a column sum (16, 64, 512) -> (512) grew to ~9,300 optimized lines, a broadcast copy
# 128x512 -> 16x128x512 to ~7,300, for no speed (such a row does not fit in registers). The
# row stays a loop of four vectors an iteration, and the loops around it stay loops. So do
# the loops around a short row when the row and the loop around it hold more than
# long_row items: LLVM unrolled both fully, a copy of the row per item of the loop, e.g. a
# transpose (64, 28, 28) -> (28, 28, 64) of a CNN's weight gradient into 1,792 scalar
# loads and inserts (1.0 s of a 2.8 s compile on AVX2; 0.16 s as loops).


def row_hints(shape):
    """(hints of the loops around the row loop of a nest over `shape`, hints of the row)."""
    n = shape[-1] if shape else 1
    hold = transpose.NOT_UNROLLED
    around = hold if n * (shape[-2] if len(shape) > 1 else 1) > settings.long_row else ()
    if n <= settings.long_row:
        return around, ()
    return hold, (("llvm.loop.interleave.count", INTERLEAVED),) + hold
