"""The process group of a multi-process job, as jax.distributed and jax.process_index.

This build has the one-process world only: `initialize()` joins nothing and every
process is process 0 of 1, so `make_mesh` positions are simulated in this process and
`shard_map` batches over them. Started by a launcher with several ranks (mpiexec -n 2),
`initialize()` raises instead of letting each rank compute the whole job as if alone.
"""
import os

from ir.errors import ArgumentError

# rank-count variables set by MPI launchers (MPICH/Hydra, Open MPI, Slurm)
_LAUNCHER_SIZES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")


def initialize(*, timeout=None):
    """Join the job this process was started in; without a launcher, a one-process world."""
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ArgumentError(f"distributed.initialize: timeout must be a positive number of "
                            f"seconds, got {timeout!r}")
    ranks = [(v, os.environ[v]) for v in _LAUNCHER_SIZES
             if os.environ.get(v, "1").strip() not in ("", "1")]
    if ranks:
        raise NotImplementedError(
            f"distributed.initialize: this process was started as one of several ranks "
            f"({ranks[0][0]}={ranks[0][1]}), but this build runs the one-process world "
            f"only; run the script without mpiexec (shard_map then simulates every mesh "
            f"position in one process)")


def process_index():
    """This process's index in the job (0 in the one-process world)."""
    return 0


def process_count():
    """The number of processes in the job (1 in the one-process world)."""
    return 1
