"""The collectives' kernels in a multi-process job: MPI collectives on the process's own
buffers, over the sub-communicator of the node's mesh axis.

A collective node traced inside a shard_map over a mesh of processes carries `mesh`, the
mesh's ((name, size), ...) pairs, besides its axis name; its NumPy kernel (registered here
by tracer.distributed.initialize) runs psum/pmax/pmin as Allreduce, all_gather as
Allgather, psum_scatter as Reduce_scatter_block, ppermute as Isend/Irecv pairs, all_to_all
as Alltoall, and axis_index reads the rank's coordinate. In compiled llvm programs psum,
pmax and pmin of a dtype MPI has a type for call MPI_Allreduce from the native code
(lowering.llvm.mpi_native), as do all_gather and psum_scatter MPI_Allgather and
MPI_Reduce_scatter_block where their layout is MPI's; the others, and every collective under
TRACER_CHECK_COLLECTIVES, run as a python step on the program's buffers. Every collective is a
blocking MPI call watched by a thread that aborts the job, naming the collective, when it
has waited longer than TRACER_COLLECTIVE_TIMEOUT (a rank that never arrives cannot hang
the job), naming the ranks of its axis that never reached it: each process counts the
collectives it enters in a one-number RMA window (native calls too), and the watchdog
reads the others' counts (a rank that does not answer within a second is named as not
answering). TRACER_CHECK_COLLECTIVES=1 first gathers every rank's description of the
collective (kernel, parameters, shape, dtype, sequence number on the axis) and raises on
a mismatch, naming both ranks'.
"""
import atexit
import ctypes
import os
import threading
import time

import numpy as np
from mpi4py import MPI

import registry
from ir.errors import KernelError
from lowering.llvm import mpi_native
from lowering.llvm.protocol import NumpyInProgram

_REDUCE_OPS = {"psum": MPI.SUM, "pmax": MPI.MAX, "pmin": MPI.MIN}
_NATIVE = set(mpi_native.DTYPES)
_DESCRIPTOR = 512       # bytes of one rank's description under TRACER_CHECK_COLLECTIVES


class _State:
    world = None
    check = False       # TRACER_CHECK_COLLECTIVES, read once by install()
    running = None      # (what, deadline, timeout) of the collective this process is in, or None
    arrivals = None     # int64[1] exposed in `window`: collectives this process entered
    window = None


_state = _State()


def run(call, what, timeout=None):
    """call() (a blocking MPI call) under the watchdog: past `timeout` seconds (default
    TRACER_COLLECTIVE_TIMEOUT) it aborts the whole job naming `what`, a string or the
    arguments of _describe (formatted only then, off the hot path)."""
    limit = timeout or _state.world.timeout
    _state.running = (what, time.monotonic() + limit, limit, int(_state.arrivals[0]))
    try:
        call()
    finally:
        _state.running = None


def _watch(tick):
    """The watchdog thread: MPI calls release the GIL, so it runs while one blocks. A
    native call (mpi_native.running: [site, arrival]) is timed from when it is first
    seen, so it aborts within a tick of the timeout."""
    native, since = None, 0.0
    while True:
        time.sleep(tick)
        running, now = _state.running, time.monotonic()
        site, arrival = (int(v) for v in mpi_native.running)
        if not site:
            native = None
        elif native != (site, arrival):
            native, since = (site, arrival), now
        elif now - since > _state.world.timeout:
            kernel, aval, attrs = mpi_native.sites[site]
            seq = int(_axis((attrs["mesh"], attrs["axis_name"]))[1][1])
            running = ((kernel, aval, attrs, seq), 0.0, _state.world.timeout, arrival)
        if running is not None and now > running[1]:
            what, _, limit, arrival = running
            late = "some rank of its axis never reached it" if isinstance(what, str) \
                else _missing(what[2], arrival)
            what = what if isinstance(what, str) else _describe(*what)
            _state.world.abort(f"{what} waited more than {limit:g} s "
                               f"(TRACER_COLLECTIVE_TIMEOUT): {late} (a rank-dependent "
                               f"branch, or a rank that ended or is stuck)")


def _missing(attrs, arrival):
    """Which ranks of the collective's axis never reached it: those whose count of
    collectives entered is below this rank's `arrival` (every rank of an SPMD job enters
    the same collectives), read from their windows; unanswered reads are named too."""
    comm = _state.world.axis_comm(attrs["mesh"], attrs["axis_name"])
    ranks = comm.Get_group().Translate_ranks(list(range(comm.Get_size())),
                                             _state.world.comm.Get_group())
    counts = {r: np.zeros(1, np.int64) for r in ranks if r != _state.world.rank}
    requests = {}
    for r, buf in counts.items():
        _state.window.Lock(r, MPI.LOCK_SHARED, MPI.MODE_NOCHECK)
        requests[r] = _state.window.Rget(buf, r)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and not all(q.Test() for q in requests.values()):
        time.sleep(0.01)
    late = [f"rank {r} (entered {int(buf[0])})" for r, buf in counts.items()
            if requests[r].Test() and buf[0] < arrival]
    late += [f"rank {r} (did not answer)" for r, q in requests.items() if not q.Test()]
    if not late:
        return "every rank of its axis reached it"
    return (f"missing {', '.join(late)}: {'they' if len(late) > 1 else 'it'} never "
            f"reached it (this rank entered {arrival} collectives, this one included)")


def _describe(kernel, x, attrs, seq):
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(attrs.items())
                       if k not in ("mesh", "axis_name", "axis_size"))
    shape = f"{np.dtype(x.dtype).name}{list(x.shape)}" if x is not None else "no operand"
    return (f"{kernel}({shape}{', ' + params if params else ''}) over axis "
            f"{attrs['axis_name']!r} (size {attrs['axis_size']}), collective #{seq} on it")


def _start(kernel, x, attrs):
    """The axis communicator and this call's description, after counting (and in check
    mode, comparing) the call."""
    comm, record = _axis((attrs["mesh"], attrs["axis_name"]))
    record[1] += 1
    seq = int(record[1])
    _state.arrivals[0] += 1
    what = (kernel, x, attrs, seq)
    if _state.check:
        _check(comm, _describe(*what))
    return comm, what


def _check(comm, what):
    """Gather every rank's description of this collective; raise if any differs."""
    mine = f"{_state.world.rank}|{what}".encode()[:_DESCRIPTOR]
    send = np.zeros(_DESCRIPTOR, np.uint8)
    send[:len(mine)] = np.frombuffer(mine, np.uint8)
    recv = np.empty((comm.Get_size(), _DESCRIPTOR), np.uint8)
    run(lambda: comm.Allgather(send, recv), f"the TRACER_CHECK_COLLECTIVES check of {what}")
    ranks = [bytes(r).rstrip(b"\0").decode().split("|", 1) for r in recv]
    other = next(((r, w) for r, w in ranks if w != what), None)
    if other is not None:
        raise KernelError(f"TRACER_CHECK_COLLECTIVES: ranks reached different collectives: "
                          f"rank {_state.world.rank} runs {what}, but rank {other[0]} runs "
                          f"{other[1]}; every rank of the axis must run the same "
                          f"collectives in the same order (no rank-dependent branch)")


def _axis(key):
    """The communicator of mesh axis `key` and its record (mpi_native.axis_record), which
    counts the collectives run over it by either path."""
    comm = _state.world.axis_comm(*key)
    return comm, mpi_native.axis_record(key, MPI._handleof(comm))


def _record(key):
    """The axis record if the axis's communicator exists (make_mesh splits them all)."""
    return _axis(key)[1] if key in _state.world.axis_comms else None


def _flat_bytes(x):
    return np.ascontiguousarray(x).reshape(-1).view(np.uint8)


def _reduction(kernel):
    def impl(x, **attrs):
        comm, what = _start(kernel, x, attrs)
        x = np.asarray(x)
        wide = x.dtype if x.dtype in _NATIVE else \
            np.dtype(np.int64 if x.dtype.kind in "biu" else np.float32)   # bool, f16, bf16
        send = np.ascontiguousarray(x, wide).reshape(-1)
        if kernel == "psum_scatter":
            return _scatter(comm, what, send.reshape(x.shape), attrs).astype(x.dtype)
        out = np.empty_like(send)
        run(lambda: comm.Allreduce(send, out, _REDUCE_OPS[kernel]), what)
        return out.reshape(x.shape).astype(x.dtype, copy=False)
    return impl


def _scatter(comm, what, x, attrs):
    """psum_scatter: block i (of the scatter dimension) of the sum goes to position i."""
    n, sd = attrs["axis_size"], attrs["scatter_dimension"]
    blocks = np.ascontiguousarray(np.moveaxis(x, sd, 0)).reshape((n, -1) + x.shape[:sd]
                                                                  + x.shape[sd + 1:])
    out = np.empty(blocks.shape[1:], x.dtype)
    run(lambda: comm.Reduce_scatter_block(blocks.reshape(-1), out.reshape(-1), MPI.SUM),
        what)
    return np.moveaxis(out, 0, sd) if attrs["tiled"] else out[0]


def _all_gather(x, **attrs):
    comm, what = _start("all_gather", x, attrs)
    x, n, axis = np.asarray(x), attrs["axis_size"], attrs["axis"]
    out = np.empty((n,) + x.shape, x.dtype)
    run(lambda: comm.Allgather(_flat_bytes(x), out.reshape(-1).view(np.uint8)), what)
    if attrs["tiled"]:
        out = np.moveaxis(out, 0, axis)
        return out.reshape(x.shape[:axis] + (-1,) + x.shape[axis + 1:])
    return np.moveaxis(out, 0, axis)


def _all_to_all(x, **attrs):
    """Block j of split_axis goes to position j; the blocks received, in order of
    their senders, join along concat_axis."""
    comm, what = _start("all_to_all", x, attrs)
    x, n = np.asarray(x), attrs["axis_size"]
    s, c = attrs["split_axis"], attrs["concat_axis"]
    send = np.ascontiguousarray(np.moveaxis(x, s, 0))       # (n*k, rest...)
    recv = np.empty_like(send)
    run(lambda: comm.Alltoall(_flat_bytes(send), recv.reshape(-1).view(np.uint8)), what)
    if not attrs["tiled"]:                                  # (n, rest...): n is new axis c
        return np.moveaxis(recv, 0, c)
    recv = recv.reshape((n, -1) + send.shape[1:])           # (j, k, rest...)
    y = np.moveaxis(recv, 1, s + 1)                         # (j, x's shape with k at s)
    y = np.moveaxis(y, 0, c)
    return y.reshape(y.shape[:c] + (-1,) + y.shape[c + 2:])


def _ppermute(x, **attrs):
    comm, what = _start("ppermute", x, attrs)
    x, me = np.asarray(x), comm.Get_rank()
    out = np.zeros_like(x)
    requests = [comm.Isend(_flat_bytes(x), dest=d) for s, d in attrs["perm"] if s == me]
    requests += [comm.Irecv(out.reshape(-1).view(np.uint8), source=s)
                 for s, d in attrs["perm"] if d == me]
    if requests:
        run(lambda: MPI.Request.Waitall(requests), what)
    return out


def _free_window():
    """Free the arrivals window before mpi4py finalizes MPI (a window left open at
    MPI_Finalize leaks the transport's registrations, and some transports end the process
    with an error). Freeing is collective: a rank that ends early waits here for the
    others, as it would in MPI_Finalize, until they end too or the job aborts."""
    window, _state.window, _state.arrivals = _state.window, None, None
    if window is not None:
        window.Free()


def _axis_index(**attrs):
    mesh = attrs["mesh"]
    here = _state.world.coordinates(mesh)
    return np.array(here[[n for n, _ in mesh].index(attrs["axis_name"])], np.int32)


KERNELS = {"psum": _reduction("psum"), "pmax": _reduction("pmax"),
           "pmin": _reduction("pmin"), "psum_scatter": _reduction("psum_scatter"),
           "all_gather": _all_gather, "all_to_all": _all_to_all, "ppermute": _ppermute,
           "axis_index": _axis_index}
_IN_PROGRAM = NumpyInProgram("an MPI collective on the program's buffers")


def install(world):
    """Run the collectives over `world`'s communicators (tracer.distributed's)."""
    _state.world = world
    _state.check = os.environ.get("TRACER_CHECK_COLLECTIVES", "0") not in ("", "0")
    _state.window = MPI.Win.Allocate(8, comm=world.comm)     # on one node: shared memory
    _state.arrivals = np.frombuffer(_state.window.tomemory(), np.int64)
    _state.arrivals[0] = 0
    atexit.register(_free_window)
    threading.Thread(target=_watch, args=(min(0.25, world.timeout / 8),), daemon=True,
                     name="tracer-collective-watchdog").start()
    if not _state.check and len({MPI._sizeof(t) for t in (MPI.Comm, MPI.Datatype,
                                                           MPI.Op)}) == 1:
        library = ctypes.CDLL(MPI.__file__)     # (dlsym searches its libmpi too)
        mpi_native.bind(
            [ctypes.cast(getattr(library, f), ctypes.c_void_p).value
             for f in mpi_native.FUNCTIONS],
            [int(MPI.IN_PLACE), MPI._handleof(MPI.BYTE)]
            + [MPI._handleof(_REDUCE_OPS[k]) for k in mpi_native.OPS]
            + [MPI._handleof(MPI._typedict[t.char]) for t in mpi_native.DTYPES],
            MPI._sizeof(MPI.Comm), _state.arrivals, _record)
    for kernel, impl in KERNELS.items():
        registry.register_kernel(kernel, "numpy", impl)
        registry.register_kernel(kernel, "llvm", mpi_native.Collective(kernel)
                                 if kernel in mpi_native.CALLS else _IN_PROGRAM)
