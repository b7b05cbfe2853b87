"""psum, pmax, pmin, all_gather and psum_scatter as calls from compiled code into the MPI
library (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block) on the program's own
buffers, with no step back into Python.

Nothing of the job is baked into module text, which the disk cache may hand to another
job: the code reads every MPI handle at run time from tables it links against by name
(llvm.add_symbol binds each name to this process's memory). `tracer_mpi_handles` holds
MPI_IN_PLACE, MPI_BYTE, the ops and the datatypes at fixed positions; each mesh axis has
a record `tracer_mpi_axis_<digest of (mesh, axis name)>` of [communicator handle,
collectives run over it], the count lowering/mpi.py's python path advances too. Before
the call the code bumps the arrivals counter the other ranks read (lowering/mpi.py's RMA
window) and writes [site, arrival] to `tracer_mpi_running`, where `site` names the node
(a digest of its kernel, type and attributes; `sites` maps it back), and clears it after:
the watchdog thread polls it to abort a collective stuck past TRACER_COLLECTIVE_TIMEOUT,
naming it.
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
_IN_PLACE, _BYTE, _FIRST_OP = 0, 1, 2
_FIRST_DTYPE = _FIRST_OP + len(OPS)
# bound as tracer_<name>
FUNCTIONS = ("MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block")


class _Bound:
    handle_type = None          # the MPI handles' C integer type; None: not bound
    record = None
    handles = (ctypes.c_int64 * (_FIRST_DTYPE + len(DTYPES)))()
    running = np.zeros(2, np.int64)     # [site or 0, arrival] of the native call in flight
    records = {}                # (mesh, axis name) -> int64[2] [handle, collectives run]
    sites = {}                  # site -> (kernel, operand aval, attrs), for the watchdog


_bound = _Bound()
sites, running = _bound.sites, _bound.running


def bind(functions, handles, handle_bytes, arrivals, record):
    """Make the tables' symbols resolve in this process: `functions` the addresses of
    FUNCTIONS, `handles` those (ints) of MPI_IN_PLACE, MPI_BYTE, OPS and DTYPES,
    `handle_bytes` the size of an MPI handle, `arrivals` the int64 array counting
    collectives entered, `record(key)` the axis_record of a mesh axis whose communicator
    exists, else None."""
    _bound.record = record
    _bound.handles[:] = [_signed(v) for v in handles]
    for name, address in zip(FUNCTIONS, functions):
        llvm.add_symbol("tracer_" + name, address)
    for symbol, address in (("tracer_mpi_handles", ctypes.addressof(_bound.handles)),
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


class _Tables:
    """The module's view of the tables, for one node's code."""

    def __init__(self, b, key):
        self.b, self.hty = b, _bound.handle_type
        self.record = self.table(_symbol(key), 2)
        self.handles = self.table("tracer_mpi_handles", len(_bound.handles))
        self.arrivals = self.table("tracer_mpi_arrivals", 1)
        self.running = self.table("tracer_mpi_running", 2)

    def table(self, name, n):
        g = self.b.module.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.b.module, ir.ArrayType(I64, n), name)
            g.linkage = "external"
        return g

    def at(self, table, i):
        return self.b.gep(table, [I32(0), I32(i)], inbounds=True)

    def handle(self, table, i):
        value = self.b.load(self.at(table, i))
        return self.b.trunc(value, self.hty) if self.hty.width < 64 else value

    def call(self, name, args):
        """tracer_<name>(args) (pointers, int counts and handles), its int result."""
        fn = intrinsic(self.b.module, "tracer_" + name, I32, [a.type for a in args])
        return self.b.call(fn, args)


def _allreduce(t, src, dst, aval, kernel, attrs):
    b = t.b
    same = b.icmp_unsigned("==", b.ptrtoint(src, I64), b.ptrtoint(dst, I64))
    send = b.select(same, b.inttoptr(b.load(t.at(t.handles, _IN_PLACE)), PTR), src)
    return "MPI_Allreduce", [
        send, dst, I32(aval.size), t.handle(t.handles, _FIRST_DTYPE + DTYPES.index(aval.dtype)),
        t.handle(t.handles, _FIRST_OP + OPS.index(kernel)), t.handle(t.record, 0)]


def _allgather(t, src, dst, aval, kernel, attrs):
    """Rank r's block is bytes [r * n, (r + 1) * n) of the output: all_gather's layout
    when the gathered axis has only unit axes before it (`native`)."""
    count, byte = I32(aval.size * aval.dtype.itemsize), t.handle(t.handles, _BYTE)
    return "MPI_Allgather", [src, count, byte, dst, count, byte, t.handle(t.record, 0)]


def _reduce_scatter(t, src, dst, aval, kernel, attrs):
    """Rank r keeps the sum of block r of the operand's bytes: psum_scatter's layout when
    the scattered axis has only unit axes before it (`native`)."""
    return "MPI_Reduce_scatter_block", [
        src, dst, I32(aval.size // attrs["axis_size"]),
        t.handle(t.handles, _FIRST_DTYPE + DTYPES.index(aval.dtype)),
        t.handle(t.handles, _FIRST_OP + OPS.index("psum")), t.handle(t.record, 0)]


def _emit(ctx, ins, outs, *, kernel, mesh, axis_name, **attrs):
    """Count the call (the axis record, the arrivals), show it to the watchdog, call
    MPI, clear; a nonzero return code raises after the program's step."""
    b, aval = ctx.b, ins[0].aval
    t = _Tables(b, (mesh, axis_name))
    attrs = dict(attrs, mesh=mesh, axis_name=axis_name)
    site = int(hashlib.sha256(repr((kernel, aval.dtype.str, aval.shape, sorted(
        attrs.items()))).encode()).hexdigest()[:15], 16) + 1
    sites[site] = (kernel, aval, attrs)
    b.store(b.add(b.load(t.at(t.record, 1)), I64(1)), t.at(t.record, 1))
    arrival = b.add(b.load(t.at(t.arrivals, 0)), I64(1))
    b.store(arrival, t.at(t.arrivals, 0))
    b.store(arrival, t.at(t.running, 1))
    b.store(I64(site), t.at(t.running, 0))
    name, args = CALLS[kernel](t, ins[0].ptr, outs[0].ptr, aval, kernel, attrs)
    rc = t.call(name, args)
    b.store(I64(0), t.at(t.running, 0))
    ctx.fail_if(b.icmp_signed("!=", rc, I32(0)),
                f"{kernel}: {name} of {aval.dtype.name}{list(aval.shape)} over axis "
                f"{axis_name!r} failed (the MPI library returned an error code)")


CALLS = {"psum": _allreduce, "pmax": _allreduce, "pmin": _allreduce,
          "all_gather": _allgather, "psum_scatter": _reduce_scatter}


class Collective(KernelEmitter):
    """A collective called from compiled code once bound (not under
    TRACER_CHECK_COLLECTIVES) and its axis's communicator exists: the reductions of a
    dtype MPI has a type for (psum_scatter with unit axes before the scattered one),
    all_gather with unit axes before the gathered one; other nodes run the NumPy kernel
    as a python step, on purpose."""

    def __init__(self, kernel):
        super().__init__(lambda ctx, ins, outs, **attrs: _emit(ctx, ins, outs,
                                                               kernel=kernel, **attrs),
                         fuse_inputs=False)
        self.kernel = kernel

    def native(self, node):
        aval, attrs = node.inputs[0].aval, node.attrs
        if _bound.handle_type is None or \
                _bound.record((attrs["mesh"], attrs["axis_name"])) is None:
            return False
        if self.kernel == "all_gather":
            return aval.size * aval.dtype.itemsize < 2 ** 31 and \
                all(d == 1 for d in aval.shape[:attrs["axis"]])
        unit = all(d == 1 for d in aval.shape[:attrs.get("scatter_dimension", 0)])
        return aval.dtype in DTYPES and aval.size < 2 ** 31 and unit

    def __repr__(self):
        return f"Collective({self.kernel!r})"
