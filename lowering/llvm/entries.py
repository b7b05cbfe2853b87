"""The native entry points of a program's module: how Python and the thread pool call its
group functions (lowering.llvm.codegen).

A segment entry `i64 s<k>(ptr %tuple)` takes a tuple of NumPy array objects, reads their
data pointers, and calls its groups in order; a jitted call is one ctypes call per
segment, with one argument however many arrays there are (ctypes passes at most 1024).
A parallel step's functions are called by the thread pool (lowering.llvm.pool) through
entries `<g>.a(ptr %argv, i64 start, i64 end)`, %argv an array of the data pointers.
Functions with one call site are inlined into it.
"""
import ctypes

import numpy as np
from llvmlite import ir

from ir.errors import CodegenError
from lowering.llvm import irutil
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


def argv_entry(module, fn):
    """`<fn>.a(ptr %argv, i64 start, i64 end)` calling `fn` on the data pointers in the
    array %argv: how the thread pool (lowering.llvm.pool) calls a parallel step's
    functions, one signature for any number of buffers. `fn` is inlined into it."""
    entry = ir.Function(module, ir.FunctionType(I64, [PTR, I64, I64]), fn.name + ".a")
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    argv = entry.args[0]
    ptrs = [b.load(b.gep(argv, [i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
            for k in range(len(fn.args) - 2)]
    b.ret(b.call(fn, ptrs + list(entry.args[1:])))
    inline_into_caller(fn)


def _array_data(b, arrays, count):
    """The data pointers of the `count` NumPy arrays in the tuple object `arrays`."""
    def field(ptr, offset):
        return b.load(b.gep(ptr, [i64(offset)], inbounds=True, source_etype=irutil.I8), typ=PTR)
    return [field(field(arrays, ITEMS_OFFSET + 8 * k), DATA_OFFSET) for k in range(count)]


def emit_segment(module, name, calls, objects):
    """Entry `name(ptr %tuple)`, %tuple holding the arrays `objects`, running `calls` =
    [(function name, buffer positions into `objects`, work items)] in order, returning
    the first nonzero code."""
    fn = ir.Function(module, ir.FunctionType(I64, [PTR]), name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ptrs = _array_data(b, fn.args[0], len(objects))
    for callee, positions, items in calls:
        rc = b.call(module.globals[callee], [ptrs[p] for p in positions] + [i64(0), i64(items)])
        irutil.return_if_failed(b, rc)
    b.ret(i64(0))
