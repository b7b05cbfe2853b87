"""psum, pmax and pmin as a call from compiled code into the MPI library: MPI_Allreduce
on the program's own buffers, with no step back into Python.

Nothing of the job is baked into module text, which the disk cache may hand to another
job: the code reads every MPI handle at run time from tables it links against by name
(llvm.add_symbol binds each name to this process's memory). `tracer_mpi_handles` holds
MPI_IN_PLACE, the ops and the datatypes at fixed positions; each mesh axis has a record
`tracer_mpi_axis_<digest of (mesh, axis name)>` of [communicator handle, collectives run
over it], the count lowering/mpi.py's python path advances too. Before the call the code
bumps the arrivals counter the other ranks read (lowering/mpi.py's RMA window) and writes
[site, arrival] to `tracer_mpi_running`, where `site` names the node (a digest of its
kernel, type and attributes; `sites` maps it back), and clears it after: the watchdog
thread polls it to abort a collective stuck past TRACER_COLLECTIVE_TIMEOUT, naming it.
"""
import ctypes
import hashlib

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from lowering.llvm.irutil import I32, I64, PTR, intrinsic
from lowering.llvm.protocol import KernelEmitter

OPS = ("psum", "pmax", "pmin")
DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128,
                                     np.int8, np.int16, np.int32, np.int64, np.uint8,
                                     np.uint16, np.uint32, np.uint64))
_IN_PLACE, _FIRST_OP, _FIRST_DTYPE = 0, 1, 1 + len(OPS)
_CALL = "tracer_mpi_allreduce"       # bound to the loaded library's MPI_Allreduce


class _Bound:
    handle_type = None          # the MPI handles' C integer type; None: not bound
    record = None
    handles = (ctypes.c_int64 * (_FIRST_DTYPE + len(DTYPES)))()
    running = np.zeros(2, np.int64)     # [site or 0, arrival] of the native call in flight
    records = {}                # (mesh, axis name) -> int64[2] [handle, collectives run]
    sites = {}                  # site -> (kernel, operand aval, attrs), for the watchdog


_bound = _Bound()
sites, running = _bound.sites, _bound.running


def bind(allreduce, in_place, ops, dtypes, handle_bytes, arrivals, record):
    """Make the tables' symbols resolve in this process: `allreduce` the address of
    MPI_Allreduce, the handles (ints) of MPI_IN_PLACE, OPS and DTYPES, `handle_bytes` the
    size of an MPI handle, `arrivals` the int64 array counting collectives entered,
    `record(key)` the axis_record of a mesh axis whose communicator exists, else None."""
    _bound.record = record
    _bound.handles[:] = [_signed(v) for v in [in_place] + list(ops) + list(dtypes)]
    for symbol, address in ((_CALL, allreduce), ("tracer_mpi_handles",
                                                 ctypes.addressof(_bound.handles)),
                            ("tracer_mpi_running", _bound.running.ctypes.data),
                            ("tracer_mpi_arrivals", arrivals.ctypes.data)):
        llvm.add_symbol(symbol, address)
    _bound.handle_type = ir.IntType(8 * handle_bytes)


def _signed(handle):
    """A handle as int64 (mpi4py gives a negative C int as its unsigned 64-bit value)."""
    return handle - (1 << 64) if handle >= 1 << 63 else handle


def _symbol(key):
    return "tracer_mpi_axis_" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]


def axis_record(key, handle):
    """The record [communicator handle, collectives run] of mesh axis `key`, made on
    first use; compiled code reads and advances it."""
    record = _bound.records.get(key)
    if record is None:
        record = _bound.records[key] = np.array([_signed(handle), 0], np.int64)
        llvm.add_symbol(_symbol(key), record.ctypes.data)
    return record


def _global(module, name, typ):
    g = module.globals.get(name)
    if g is None:
        g = ir.GlobalVariable(module, typ, name)
        g.linkage = "external"
    return g


def _allreduce(ctx, ins, outs, *, kernel, mesh, axis_name, **attrs):
    b, aval, hty = ctx.b, ins[0].aval, _bound.handle_type
    module = b.module
    record = _global(module, _symbol((mesh, axis_name)), ir.ArrayType(I64, 2))
    handles = _global(module, "tracer_mpi_handles", ir.ArrayType(I64, len(_bound.handles)))
    arrivals = _global(module, "tracer_mpi_arrivals", I64)
    slots = _global(module, "tracer_mpi_running", ir.ArrayType(I64, 2))

    def at(table, i):
        return b.gep(table, [I32(0), I32(i)], inbounds=True)

    def handle(table, i):
        value = b.load(at(table, i))
        return b.trunc(value, hty) if hty.width < 64 else value
    attrs = dict(attrs, mesh=mesh, axis_name=axis_name)
    site = int(hashlib.sha256(repr((kernel, aval.dtype.str, aval.shape, sorted(
        attrs.items()))).encode()).hexdigest()[:15], 16) + 1
    sites[site] = (kernel, aval, attrs)
    b.store(b.add(b.load(at(record, 1)), I64(1)), at(record, 1))
    arrival = b.add(b.load(arrivals), I64(1))
    b.store(arrival, arrivals)
    b.store(arrival, at(slots, 1))
    b.store(I64(site), at(slots, 0))
    src, dst = ins[0].ptr, outs[0].ptr
    same = b.icmp_unsigned("==", b.ptrtoint(src, I64), b.ptrtoint(dst, I64))
    send = b.select(same, b.inttoptr(b.load(at(handles, _IN_PLACE)), PTR), src)
    call = intrinsic(module, _CALL, I32, [PTR, PTR, I32, hty, hty, hty])
    rc = b.call(call, [
        send, dst, I32(aval.size), handle(handles, _FIRST_DTYPE + DTYPES.index(aval.dtype)),
        handle(handles, _FIRST_OP + OPS.index(kernel)), handle(record, 0)])
    b.store(I64(0), at(slots, 0))
    ctx.fail_if(b.icmp_signed("!=", rc, I32(0)),
                f"{kernel}: MPI_Allreduce of {aval.dtype.name}{list(aval.shape)} over axis "
                f"{axis_name!r} failed (the MPI library returned an error code)")


class Allreduce(KernelEmitter):
    """MPI_Allreduce from compiled code, for an operand of a dtype MPI has a type for,
    once bound (not under TRACER_CHECK_COLLECTIVES) and the axis's communicator exists;
    other nodes run the NumPy kernel as a python step, on purpose."""

    def __init__(self, kernel):
        super().__init__(lambda ctx, ins, outs, **attrs: _allreduce(ctx, ins, outs,
                                                                    kernel=kernel, **attrs),
                         fuse_inputs=False)
        self.kernel = kernel

    def native(self, node):
        aval = node.inputs[0].aval
        return _bound.handle_type is not None and aval.dtype in DTYPES and \
            aval.size < 2 ** 31 and \
            _bound.record((node.attrs["mesh"], node.attrs["axis_name"])) is not None

    def __repr__(self):
        return f"Allreduce({self.kernel!r})"
