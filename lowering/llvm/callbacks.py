"""debug_callback and pure_callback as calls from compiled code back into Python, so a
callback inside a compiled loop or branch runs there, once per iteration or branch taken.

A callback node is a whole kernel (a group of its own, one work item, never split across
threads) whose code calls `tracer_host_callback(i64 site, ptr ins, ptr outs)`: `ins` and
`outs` are arrays of pointers to the node's input and output buffers. The symbol is bound
(llvm.add_symbol) to a ctypes trampoline of this process, and nothing else about the
callback is in the module text: `site` is the node's number among the module's callback
sites in the order codegen emitted them (ModuleBuilder.callbacks, kept in the artifact as
`callbacks`: (callable, input avals, output avals) per site). The disk cache may hand the
same text to another process, or this process may load it for another graph of equal text
with other callables: either way the Program that runs it supplies its own table, pushed
for the calling thread while it runs (`running`), and the trampoline reads the calling
thread's innermost table. So two threads calling programs at once each reach their own
callables. Graphs holding callbacks are never graph-cached (their attrs are Python
objects; graph_cache gives up on them), so a Program's table always comes from the
codegen of its own graph.

The trampoline copies the inputs into fresh NumPy arrays (a callback may keep them),
calls `callable(arrays, output (shape, dtype) pairs)` (tracer.callbacks.HostCallback:
it calls the user's function and checks its results) and copies the results into the
output buffers. If that raises, the exception is kept for the calling thread, the call
returns 1, the kernel's failure code stops the program (a loop stops at the failing
iteration), and Program raises the kept exception itself; later callbacks of the same
program run are not called. The callables run on the thread that called the program
(ctypes takes the GIL for them): regions run single-threaded and a callback's group is
one work item, so no callback runs on the thread pool.
"""
import ctypes
import threading

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from ir.errors import KernelError
from lowering.llvm import irutil
from lowering.llvm.irutil import I32, I64, PTR, i64
from lowering.llvm.protocol import KernelEmitter

SYMBOL = "tracer_host_callback"
_TRAMPOLINE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p,
                               ctypes.c_void_p)


class _Running(threading.local):
    def __init__(self):
        self.tables = []        # the site tables of the programs this thread runs, innermost last
        self.failure = None     # the exception a callback raised, until Program raises it


_running = _Running()


class running:
    """Context manager: `table` (a Program's callback sites) is the calling thread's
    innermost table while the block runs."""
    __slots__ = ("table",)

    def __init__(self, table):
        self.table = table

    def __enter__(self):
        _running.tables.append((self.table, _running.failure))
        _running.failure = None

    def __exit__(self, *exc):
        _running.failure = _running.tables.pop()[1]     # (one Program did not raise: dropped)


def take_failure():
    """The exception a callback raised in this thread's program run (once), or None."""
    failure, _running.failure = _running.failure, None
    return failure


def _array(address, aval):
    """A fresh array holding the buffer at `address` of type `aval`."""
    n = aval.size * aval.dtype.itemsize
    if n == 0:
        return np.empty(aval.shape, aval.dtype)
    raw = (ctypes.c_char * n).from_address(address)
    return np.frombuffer(raw, aval.dtype).reshape(aval.shape).copy()


def _call(site, ins, outs):
    try:
        if _running.failure is not None:     # an earlier callback of this run failed
            return 1
        if not _running.tables:
            raise KernelError("a host callback was called from compiled code outside the "
                              "thread running its program")
        fn, in_avals, out_avals = _running.tables[-1][0][site]
        n_in, n_out = len(in_avals), len(out_avals)
        in_ptrs = (ctypes.c_void_p * max(n_in, 1)).from_address(ins) if n_in else ()
        arrays = [_array(p, a) for p, a in zip(in_ptrs, in_avals)]
        results = fn(arrays, tuple((a.shape, a.dtype) for a in out_avals))
        if n_out:
            out_ptrs = (ctypes.c_void_p * n_out).from_address(outs)
            for p, a, r in zip(out_ptrs, out_avals, results):
                n = a.size * a.dtype.itemsize
                if n:
                    ctypes.memmove(p, np.ascontiguousarray(r, a.dtype).ctypes.data, n)
        return 0
    except BaseException as e:       # (nothing may unwind through compiled code)
        _running.failure = e
        return 1


_trampoline = _TRAMPOLINE(_call)        # kept alive for the process
llvm.add_symbol(SYMBOL, ctypes.cast(_trampoline, ctypes.c_void_p).value)


def _site(mb, callback, ins, outs):
    """The module's site number of this callback node (one per callable and types)."""
    entry = (callback, tuple(x.aval for x in ins), tuple(o.aval for o in outs))
    for k, known in enumerate(mb.callbacks):
        if known[0] is entry[0] and known[1:] == entry[1:]:
            return k
    mb.callbacks.append(entry)
    return len(mb.callbacks) - 1


def _pointers(b, ptrs):
    """An entry-block array holding `ptrs` (stored here), as a pointer; null if none."""
    if not ptrs:
        return ir.Constant(PTR, None)
    with b.goto_entry_block():
        table = b.alloca(ir.ArrayType(PTR, len(ptrs)))
    for k, p in enumerate(ptrs):
        b.store(p, b.gep(table, [I32(0), I32(k)], inbounds=True))
    return table


def _operand(b, op):
    """An input's buffer pointer; a literal (a 0-d value, no buffer) is stored in a local."""
    if op.ptr is not None:
        return op.ptr
    value = op.read([])
    with b.goto_entry_block():
        slot = b.alloca(irutil.memtype(op.aval.dtype))
    b.store(irutil.to_memory(b, value, op.aval.dtype), slot)
    return slot


def _emit(ctx, ins, outs, *, callback, **attrs):
    b = ctx.b
    site = _site(ctx.mb, callback, ins, outs)
    fn = irutil.intrinsic(b.module, SYMBOL, I32, [I64, PTR, PTR])
    rc = b.call(fn, [i64(site), _pointers(b, [_operand(b, x) for x in ins]),
                     _pointers(b, [o.ptr for o in outs])])
    ctx.fail_if(b.icmp_signed("!=", rc, I32(0)), "a host callback failed")


class HostCall(KernelEmitter):
    """The llvm impl of debug_callback and pure_callback (see the module doc)."""

    def __init__(self, kernel):
        super().__init__(_emit, fuse_inputs=False)
        self.kernel = kernel

    def __repr__(self):
        return f"HostCall({self.kernel!r})"


KERNELS = {"debug_callback": HostCall("debug_callback"),
           "pure_callback": HostCall("pure_callback")}
