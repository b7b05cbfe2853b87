"""Jobs that tests/tracer/test_distributed_mpi.py runs under `mpiexec -n 2`:

    python distributed_mpi_job.py collectives OUT_DIR   every CASE on this rank's block,
        eagerly and jitted, on both backends, and its gradient; saved to OUT_DIR/rank<r>.npz
    python distributed_mpi_job.py raise                 rank 1 raises after a collective
    python distributed_mpi_job.py stuck                 rank 1 never reaches a psum
    python distributed_mpi_job.py mismatch              the ranks psum different shapes
    python distributed_mpi_job.py cache OUT_DIR K       a jitted psum after K spare
        communicators (so its axis's handle differs with K); its axis's handle, result and
        object files loaded from the disk cache saved to OUT_DIR/rank<r>.npz

The test imports CASES and `global_input` to compute the one-process oracle.
"""
import os
import sys
import time

import ml_dtypes
import numpy as np

import registry
import tracer
from tracer import lax
from tracer import numpy as tnp

N = 2   # positions of the mesh axis "x"

# name -> (the body of a shard_map over MESH, in_specs P("x"), out_specs P("x");
#          differentiable)
CASES = {
    "psum": (lambda b: lax.psum(b, "x"), True),
    "pmean": (lambda b: lax.pmean(b, "x"), True),
    "pmax": (lambda b: lax.pmax(b, "x"), False),
    "pmin": (lambda b: lax.pmin(b, "x"), False),
    "psum_tree": (lambda b: lax.psum({"a": b, "b": b * 2}, "x")["b"], True),
    "all_gather": (lambda b: lax.all_gather(b, "x", axis=1), True),
    "all_gather_tiled": (lambda b: lax.all_gather(b, "x", axis=1, tiled=True), True),
    "all_gather_0": (lambda b: lax.all_gather(b, "x"), True),
    "all_gather_0_tiled": (lambda b: lax.all_gather(b, "x", tiled=True), True),
    "all_gather_unit": (lambda b: lax.all_gather(b[None], "x", axis=1), True),
    "bool_all_gather": (lambda b: lax.all_gather(b > 0, "x"), False),
    "psum_scatter": (lambda b: lax.psum_scatter(b, "x"), True),
    "psum_scatter_tiled": (lambda b: lax.psum_scatter(b, "x", scatter_dimension=1,
                                                       tiled=True), True),
    "ppermute": (lambda b: lax.ppermute(b, "x", [(0, 1), (1, 0)]), True),
    "ppermute_partial": (lambda b: lax.ppermute(b, "x", [(0, 1)]), True),
    "all_to_all": (lambda b: lax.all_to_all(b, "x", 0, 1), True),
    "all_to_all_tiled": (lambda b: lax.all_to_all(b, "x", 1, 0, tiled=True), True),
    "axis_index": (lambda b: b * (lax.axis_index("x") + 1).astype(b.dtype), True),
    "int_psum": (lambda b: lax.psum((b * 10).astype(np.int32), "x"), False),
    "half_psum": (lambda b: lax.psum(b.astype(np.float16), "x"), False),
    "bfloat16_psum": (lambda b: lax.psum(b.astype(ml_dtypes.bfloat16), "x"), False),
    "bool_psum": (lambda b: lax.psum(b > 0, "x"), False),
    "psum_two_axes": (lambda b: lax.psum(b, ("r", "x")), True),
    "axis_index_two_axes": (lambda b: b * (lax.axis_index("x") + lax.psum(
        lax.axis_index("r") + 3, "r")).astype(b.dtype), True),
}
MESH = ((N, 1), ("x", "r"))     # a second axis "r" of one position
# the cases whose jitted llvm program calls MPI itself (no python step runs the NumPy
# kernel of their psum, pmax, pmin, all_gather or psum_scatter), and those that keep the
# python step on purpose (MPI has no type for bool, float16, bfloat16; a gathered or
# scattered axis after a non-unit one is not MPI's layout)
NATIVE = ("psum", "pmean", "pmax", "pmin", "psum_tree", "int_psum", "psum_two_axes",
          "axis_index_two_axes", "all_gather_0", "all_gather_0_tiled", "all_gather_unit",
          "bool_all_gather", "psum_scatter")
FALLBACK = ("half_psum", "bfloat16_psum", "bool_psum", "all_gather", "all_gather_tiled",
            "psum_scatter_tiled")
_python_steps = {"count": 0}


def count_python_steps():
    """From now on count the calls of the NumPy kernels of the collectives that compiled
    code may call MPI for."""
    for kernel in ("psum", "pmax", "pmin", "all_gather", "psum_scatter"):
        impl = registry.get_kernel(kernel, "numpy")
        registry.register_kernel(kernel, "numpy", lambda *a, _impl=impl, **k: (
            _python_steps.__setitem__("count", _python_steps["count"] + 1), _impl(*a, **k))[1])


def global_input():
    return np.random.default_rng(0).standard_normal((2 * N, 6)).astype(np.float32)


def mapped(mesh, body):
    return tracer.shard_map(body, mesh, in_specs=tracer.P("x"), out_specs=tracer.P("x"))


def loss(mesh, body):
    return lambda x: tnp.sum(tnp.sin(mapped(mesh, body)(x)))


def collectives(out_dir):
    mesh = tracer.make_mesh(*MESH)
    r = tracer.distributed.process_index()
    block = np.split(global_input(), N)[r]
    saved = {}
    count_python_steps()
    for name, (body, differentiable) in CASES.items():
        for mode in ("eager-numpy", "eager-llvm", "jit-numpy", "jit-llvm"):
            kind, backend = mode.split("-")
            tracer.set_backend(backend if kind == "eager" else "numpy")
            wrap = (lambda f: f) if kind == "eager" else \
                (lambda f: tracer.jit(f, backend=backend))
            before = _python_steps["count"]
            saved[f"{name}/{mode}/value"] = np.asarray(wrap(mapped(mesh, body))(block))
            if differentiable:
                saved[f"{name}/{mode}/grad"] = np.asarray(
                    wrap(tracer.grad(loss(mesh, body)))(block))
            saved[f"{name}/{mode}/python_steps"] = np.array(_python_steps["count"] - before)
    np.savez(os.path.join(out_dir, f"rank{r}.npz"), **saved)


def faults(mode):
    mesh = tracer.make_mesh((N,), ("x",))
    r = tracer.distributed.process_index()
    f = tracer.jit(mapped(mesh, lambda b: lax.psum(b, "x")), backend="llvm")
    count_python_steps()
    f(np.ones((3,), np.float32))
    native = os.environ.get("TRACER_CHECK_COLLECTIVES", "0") in ("", "0")
    assert (_python_steps["count"] == 0) == native, "the native psum fell back to Python"
    if mode == "raise" and r == 1:
        raise ValueError("a failure on one rank")
    if mode == "stuck" and r == 1:
        time.sleep(60)      # stuck elsewhere: rank 0's timeout ends the job first
        return
    f(np.ones((3 + r * (mode == "mismatch"),), np.float32))
    mapped(mesh, lambda b: lax.psum(b, "x"))(np.ones((2,), np.float32))


def cache(out_dir, spare):
    from mpi4py import MPI
    from lowering.llvm import mpi_native, target
    kept = [MPI.COMM_WORLD.Dup() for _ in range(spare)]
    mesh = tracer.make_mesh((N,), ("x",))
    r = tracer.distributed.process_index()
    got = tracer.jit(mapped(mesh, lambda b: lax.psum(b, "x")), backend="llvm")(
        np.full((3,), r + 1.0, np.float32))
    (handle, _), = mpi_native._bound.records.values()
    np.savez(os.path.join(out_dir, f"rank{r}.npz"), handle=handle, psum=np.asarray(got),
             disk_hits=target.stats["disk_hits"], spare=len(kept))


if __name__ == "__main__":
    tracer.distributed.initialize()
    if sys.argv[1] == "collectives":
        collectives(sys.argv[2])
    elif sys.argv[1] == "cache":
        cache(sys.argv[2], int(sys.argv[3]))
    else:
        faults(sys.argv[1])
