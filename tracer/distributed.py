"""The process group of a multi-process job, as jax.distributed and jax.process_index.

`initialize()` in a script started by `mpiexec -n N` joins the MPI job (mpi4py's
COMM_WORLD; mpi4py is imported here only then): `make_mesh` then has one process per
position, `shard_map` runs its body once per process on the process's own block, and the
collectives inside run as MPI collectives (lowering/mpi.py). Without a launcher (or with
one rank) the world has one process and mesh positions are simulated in it.

Faults end the whole job instead of hanging it: after `initialize()` in a job of several
ranks, an uncaught exception on any rank prints the rank and its traceback and aborts
every rank (MPI_Abort), and a collective waiting longer than TRACER_COLLECTIVE_TIMEOUT
seconds (default 300) aborts naming itself.
"""
import os
import sys
import time

from ir.errors import ArgumentError
from lowering.settings import settings

# rank-count variables set by MPI launchers (MPICH/Hydra, Open MPI, Slurm)
_LAUNCHER_SIZES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
DEFAULT_TIMEOUT = 300.0
_FORWARD_SECONDS = 0.5    # for the launcher to forward an aborting rank's message


class _World:
    """This process's place in the job: COMM_WORLD once joined (several ranks), its rank
    and size, the collective timeout and the mesh axes' sub-communicators."""
    comm = None
    rank, size = 0, 1
    timeout = DEFAULT_TIMEOUT

    def __init__(self):
        self.axis_comms = {}     # (mesh key, axis name) -> communicator

    def coordinates(self, mesh_key, rank=None):
        """The mesh coordinates of `rank` (default: this process), row-major over the
        mesh key's ((name, size), ...) pairs."""
        rank = self.rank if rank is None else rank
        out = []
        for _, size in reversed(mesh_key):
            rank, c = divmod(rank, size)
            out.append(c)
        return tuple(reversed(out))

    def axis_comm(self, mesh_key, name):
        """The communicator of the processes that differ from this one only along mesh
        axis `name`, ranked by their coordinate on it: COMM_WORLD.Split, which every
        process reaches together (make_mesh makes them all)."""
        comm = self.axis_comms.get((mesh_key, name))
        if comm is None:
            here = self.coordinates(mesh_key)
            j, color = [n for n, _ in mesh_key].index(name), 0
            for i, (_, size) in enumerate(mesh_key):
                color = color if i == j else color * size + here[i]
            comm = self.axis_comms[(mesh_key, name)] = self.comm.Split(color, here[j])
        return comm

    def abort(self, message):
        """End every rank of the job with `message`, printed by this rank."""
        sys.stderr.flush()
        os.write(2, f"tracer.distributed: rank {self.rank} of {self.size}: {message}; "
                    f"aborting the job\n".encode())     # one write: not interleaved
        # MPI_Abort can tear the job down before the launcher has forwarded what this
        # rank just wrote (Hydra lost it in ~1 of 30 runs); give it a moment
        time.sleep(_FORWARD_SECONDS)
        self.comm.Abort(1)


world = _World()


def _launched_size():
    for v in _LAUNCHER_SIZES:
        n = os.environ.get(v, "").strip()
        if n.isdigit() and int(n) > 1:
            return int(n)
    return 1


def _seconds(what, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        value = -1.0
    if not value > 0:
        raise ArgumentError(f"distributed.initialize: {what} must be a positive number of "
                            f"seconds, got {value!r}")
    return value


def initialize(*, timeout=None):
    """Join the MPI job this process was started in (waiting at most `timeout` seconds
    for every rank to join); without a launcher, a one-process world."""
    if timeout is not None:
        timeout = _seconds("timeout", timeout)
    if world.comm is not None or _launched_size() == 1:
        return
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(f"distributed.initialize: this process was started by an MPI "
                          f"launcher but mpi4py is not importable ({e}); install the [mpi] "
                          f"extra: pip install 'tracer[mpi]'") from None
    world.timeout = settings.collective_timeout
    world.comm, world.rank, world.size = MPI.COMM_WORLD, MPI.COMM_WORLD.Get_rank(), \
        MPI.COMM_WORLD.Get_size()
    sys.excepthook = _abort_on_exception
    from lowering import mpi
    mpi.install(world)
    mpi.run(world.comm.Barrier, "initialize (every rank joining the job)", timeout)


def _abort_on_exception(kind, value, tb):
    """Print this rank's traceback, then end every rank of the job (no hang)."""
    import traceback
    text = "".join(traceback.format_exception(kind, value, tb))
    world.abort(f"raised {kind.__name__}\n{text}")


def process_index():
    """This process's index in the job (0 in the one-process world)."""
    return world.rank


def process_count():
    """The number of processes in the job (1 in the one-process world)."""
    return world.size
