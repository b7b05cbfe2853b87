"""Two real processes (`mpiexec -n 2`) against the one-process oracle: every collective
and its gradient (eagerly and jitted, numpy and llvm backends), data-parallel training,
and the job's end on a fault (a raising rank, a stuck collective, ranks reaching
different collectives under TRACER_CHECK_COLLECTIVES=1)."""
import importlib.util
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import tracer

pytest.importorskip("mpi4py", reason="the multi-process tests need mpi4py (the [mpi] extra)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
JOB = os.path.join(HERE, "distributed_mpi_job.py")
_spec = importlib.util.spec_from_file_location("distributed_mpi_job", JOB)
job = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(job)


def run_job(*args, timeout=60, **env):
    launcher = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    launcher = launcher if os.path.exists(launcher) else shutil.which("mpiexec")
    if launcher is None:
        pytest.skip("mpiexec is not next to the Python executable nor on PATH")
    full = dict(os.environ, PYTHONPATH=ROOT, **env)
    start = time.monotonic()
    out = subprocess.run([launcher, "-n", "2", sys.executable] + list(args),
                         capture_output=True, text=True, timeout=timeout, env=full, cwd=ROOT)
    return out, time.monotonic() - start


def test_collectives_and_gradients_match_the_one_process_oracle(tmp_path):
    # (no interpreted first calls while compiling: the jitted llvm results must be the
    # native program's)
    out, _ = run_job(JOB, "collectives", str(tmp_path), TRACER_BACKGROUND_COMPILE="0")
    assert out.returncode == 0, out.stderr[-3000:]
    mesh = tracer.sharding.Mesh(*job.MESH)      # simulated: the oracle
    x = job.global_input()
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(job.N)]
    for r in ranks:     # jitted llvm: the reductions MPI has types for run natively
        for name in job.NATIVE + job.FALLBACK:
            steps = int(r[f"{name}/jit-llvm/python_steps"])
            assert (steps == 0) == (name in job.NATIVE), (name, steps)
    for name, (body, differentiable) in job.CASES.items():
        want = {"value": np.asarray(job.mapped(mesh, body)(x))}
        if differentiable:
            want["grad"] = np.asarray(tracer.grad(job.loss(mesh, body))(x))
        for what, w in want.items():
            for mode in ("eager-numpy", "eager-llvm", "jit-numpy", "jit-llvm"):
                got = np.concatenate([r[f"{name}/{mode}/{what}"] for r in ranks])
                if got.dtype.kind == "V":           # .npz keeps bfloat16 as raw 2 bytes
                    got = got.view(w.dtype)
                assert got.dtype == w.dtype, (name, mode, what)
                np.testing.assert_allclose(got.astype(np.float64), w.astype(np.float64),
                                           rtol=1e-5, atol=1e-6,
                                           err_msg=f"{name} {mode} {what}")


def test_a_program_from_the_disk_cache_uses_this_jobs_communicator(tmp_path):
    """Module text names its communicator by mesh axis, never by handle: a job whose
    handles differ loads the first job's object file and still reduces over its own."""
    env = dict(TRACER_DISK_CACHE="1", TRACER_CACHE_DIR=str(tmp_path / "cache"))
    jobs = []
    for spare in (0, 3):
        (tmp_path / str(spare)).mkdir()
        out, _ = run_job(JOB, "cache", str(tmp_path / str(spare)), str(spare), **env)
        assert out.returncode == 0, out.stderr[-3000:]
        jobs.append([np.load(tmp_path / str(spare) / f"rank{r}.npz") for r in range(job.N)])
    for first, second in zip(*jobs):
        assert first["handle"] != second["handle"]
        assert second["disk_hits"] > 0      # (the first job's ranks may share one too)
        for got in (first, second):
            np.testing.assert_array_equal(got["psum"], np.full(3, 3.0, np.float32))


def test_a_raising_rank_ends_the_job_naming_it():
    out, took = run_job(JOB, "raise")
    assert out.returncode != 0 and took < 10
    assert "rank 1 of 2: raised ValueError" in out.stderr
    assert "a failure on one rank" in out.stderr


def test_a_stuck_collective_aborts_after_the_timeout_naming_it_and_the_missing_ranks():
    out, took = run_job(JOB, "stuck", TRACER_COLLECTIVE_TIMEOUT="2")
    assert out.returncode != 0 and took < 10, (took, out.stderr[-2000:])
    assert "rank 0 of 2: psum(float32[3]) over axis 'x' (size 2), collective #2 on it " \
           "waited more than 2 s (TRACER_COLLECTIVE_TIMEOUT): missing rank 1 (entered 1): " \
           "it never reached it (this rank entered 2 collectives" in out.stderr, \
        (out.returncode, took, out.stdout[-2000:], out.stderr[-2000:])


def test_check_collectives_reports_a_mismatch_naming_both_ranks():
    out, took = run_job(JOB, "mismatch", TRACER_CHECK_COLLECTIVES="1")
    assert out.returncode != 0 and took < 10, out.stderr[-2000:]
    assert "ranks reached different collectives" in out.stderr
    assert "psum(float32[3]) over axis 'x' (size 2), collective #2" in out.stderr
    assert "psum(float32[4]) over axis 'x' (size 2), collective #2" in out.stderr


def test_data_parallel_training_matches_one_process(tmp_path):
    example = os.path.join(ROOT, "examples", "data_parallel.py")
    args = [example, "--steps", "15", "--save"]
    out, _ = run_job(*args, str(tmp_path / "two.npz"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "2 process(es), global batch 64" in out.stdout and "step  14  loss" in out.stdout
    one = subprocess.run([sys.executable] + args + [str(tmp_path / "one.npz")],
                         capture_output=True, text=True, timeout=60, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert one.returncode == 0, one.stderr[-3000:]
    two, one = np.load(tmp_path / "two.npz"), np.load(tmp_path / "one.npz")
    assert len(one.files) == 6
    for k in one.files:
        np.testing.assert_allclose(two[k], one[k], rtol=1e-4, atol=1e-6)
