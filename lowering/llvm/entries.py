"""The native entry points of a program's module: how Python and the thread pool call its
group functions (lowering.llvm.codegen).

Every group function is called through its entry `<g>.a(ptr %argv, i64 start, i64 end)`,
%argv an array of its buffers' data pointers: one signature for any number of buffers.
A parallel step's entries are called by the thread pool (lowering.llvm.pool); a
segment's, in order, by the runner `run(ptr %tuple)` (one per process), %tuple holding
the segment's table of (entry, work items, buffer positions) and then its NumPy arrays:
a jitted call is one ctypes call per segment, with one argument however many arrays
there are. A segment of any length is one loop over its table, so a module grows with
its distinct group bodies, not with its calls: a 400-layer MLP's step, written as one
straight-line call sequence per call, was 64,609 lines of IR and 3.9 s of LLVM time.
"""
import ctypes

import numpy as np
from llvmlite import ir

from ir.errors import CodegenError
from lowering.llvm import target
from lowering.llvm.irutil import I64, PTR, i64


def _probe(what, cases):
    """The offset at which each object of `cases` [(object, [pointer, ...])] holds its
    pointers, consecutively (probed, not assumed: it depends on the Python build)."""
    for off in range(8, 80, 8):
        if all(ctypes.c_void_p.from_address(id(obj) + off + 8 * k).value == p
               for obj, want in cases for k, p in enumerate(want)):
            return off
    raise CodegenError(f"cannot locate {what}")


_a, _b = np.empty(3), np.empty(5)
DATA_OFFSET = _probe("the data pointer in numpy array objects",
                     [(_a, [_a.ctypes.data]), (_b, [_b.ctypes.data])])
ITEMS_OFFSET = _probe("the items of a tuple object", [((_a, _b), [id(_a), id(_b)])])
del _a, _b


def inline_into_caller(fn):
    """`fn` has one call site, in this module: LLVM inlines it before optimizing, so the
    caller is optimized once instead of each function on its own and then again (W10's
    loop: LLVM's optimizer 21 -> 12 ms, the same code)."""
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")


def argv_entry(module, fn, items=None):
    """`<fn>.a(ptr %argv, i64 start, i64 end)` calling `fn` on the data pointers in the
    array %argv (the runner's and the thread pool's way in), on items [start, end), or
    on [0, `items`) if given: LLVM then knows its loops' trip counts (with bounds read at
    run time, the 64-op chain's module took 1.7x the LLVM time). `fn` is inlined into it."""
    entry = ir.Function(module, ir.FunctionType(I64, [PTR, I64, I64]), fn.name + ".a")
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    argv = entry.args[0]
    ptrs = [b.load(b.gep(argv, [i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
            for k in range(len(fn.args) - 2)]
    bounds = list(entry.args[1:]) if items is None else [i64(0), i64(items)]
    b.ret(b.call(fn, ptrs + bounds))
    inline_into_caller(fn)


# IR text of a function giving the data pointer of the NumPy array at item k of a tuple
ARRAY_DATA_IR = f"""
define private ptr @array_data(ptr %tuple, i64 %k) alwaysinline {{
  %k8 = mul i64 %k, 8
  %io = add i64 %k8, {ITEMS_OFFSET}
  %itemp = getelementptr inbounds i8, ptr %tuple, i64 %io
  %obj = load ptr, ptr %itemp, align 8
  %datap = getelementptr inbounds i8, ptr %obj, i64 {DATA_OFFSET}
  %data = load ptr, ptr %datap, align 8
  ret ptr %data
}}
"""
# the runner's module, compiled once per process (`runner`)
RUNNER_IR = ARRAY_DATA_IR + """
; arrays[0] is the table: calls, most buffers of one, then per call its entry, work items,
; buffers and their positions in arrays (minsize: LLVM would unroll its loops, 200 lines)
define i64 @run(ptr %arrays) minsize optsize {
entry:
  %table = call ptr @array_data(ptr %arrays, i64 0)
  %ncalls = load i64, ptr %table, align 8
  %mostp = getelementptr inbounds i64, ptr %table, i64 1
  %most = load i64, ptr %mostp, align 8
  %argv = alloca ptr, i64 %most, align 8
  br label %next
next:
  %c = phi i64 [ 0, %entry ], [ %c1, %called ]
  %w = phi i64 [ 2, %entry ], [ %w1, %called ]
  %more = icmp ult i64 %c, %ncalls
  br i1 %more, label %call, label %done
call:
  %fnp = getelementptr inbounds i64, ptr %table, i64 %w
  %fn = load ptr, ptr %fnp, align 8
  %itemsp = getelementptr inbounds i64, ptr %fnp, i64 1
  %items = load i64, ptr %itemsp, align 8
  %nargsp = getelementptr inbounds i64, ptr %fnp, i64 2
  %nargs = load i64, ptr %nargsp, align 8
  %pos = getelementptr inbounds i64, ptr %fnp, i64 3
  br label %gather
gather:
  %k = phi i64 [ 0, %call ], [ %k1, %arg ]
  %left = icmp ult i64 %k, %nargs
  br i1 %left, label %arg, label %run
arg:
  %posk = getelementptr inbounds i64, ptr %pos, i64 %k
  %p = load i64, ptr %posk, align 8
  %data = call ptr @array_data(ptr %arrays, i64 %p)
  %argk = getelementptr inbounds ptr, ptr %argv, i64 %k
  store ptr %data, ptr %argk, align 8
  %k1 = add i64 %k, 1
  br label %gather
run:
  %rc = call i64 %fn(ptr %argv, i64 0, i64 %items)
  %bad = icmp ne i64 %rc, 0
  br i1 %bad, label %failed, label %called
called:
  %c1 = add i64 %c, 1
  %w3 = add i64 %w, 3
  %w1 = add i64 %w3, %nargs
  br label %next
failed:
  ret i64 %rc
done:
  ret i64 0
}
"""


_runner = []        # (its loaded module, the runner's ctypes function), once loaded


def runner():
    """The runner `run(ptr %tuple)`, compiled once per process (and disk-cached): it calls
    the entries listed in the table (`segment_table`) that is the tuple's first item, in
    order, on the arrays of the tuple, returning the first nonzero code. (A copy in every
    module took the 64-op chain's LLVM time from 25 to 37 ms.)"""
    if not _runner:
        loaded = target.load(RUNNER_IR)
        _runner.append((loaded, loaded.function("run", ctypes.c_int64, ctypes.c_void_p)))
    return _runner[0][1]


def segment_table(calls, address):
    """The runner's table (int64 words) for `calls` [(function, positions of its buffers
    among the segment's arrays, work items)], `address(function)` the address of its
    entry: the runner's tuple holds it, then the arrays."""
    words = [len(calls), max((len(pos) for _, pos, _ in calls), default=0)]
    for f, pos, items in calls:
        words += [address(f + ".a"), items, len(pos), *(k + 1 for k in pos)]
    return np.array(words, np.int64)
