"""Steady-state call times of tracer's llvm backend alone, for comparing two versions of the
code (run this file from each checkout in turn, alternating, on the same machine): rows of
the micro-benchmark (examples/bench_workloads.py) and steps of the real workloads
(examples/real_workloads.py), each after its compile: median and least of `--reps` calls (ms).

Run:  python examples/bench_steps.py [--only W5,W12,W15,W18,MM] [--reps 30] [--cpu] [--peer jax]
      (MM: single matmuls of W5's and W18's steps and small ones, each beside NumPy's;
      TRACER_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 compare one core's code)
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_workloads  # noqa: E402
from bench_timing import block  # noqa: E402
from bench_workloads import ROWS  # noqa: E402

import tracer  # noqa: E402


def _times(call, reps):
    """Seconds of each of `reps` calls of `call` after a first one, on CLOCK."""
    call()
    return [_once(call) for _ in range(reps)]


def _once(call):
    t0 = CLOCK[0]()
    call()
    return CLOCK[0]() - t0


CLOCK = [time.perf_counter]     # --cpu: time.process_time (less disturbed by a busy host)


def micro(row, reps):
    args = row.args(np.random.default_rng(0))
    f = tracer.jit(row.tracer)
    return _times(lambda: block(f(*args)), reps)


# matmuls of W5's and W18's steps and small ones: "MM" in --only times each (least of --reps calls)
MATMULS = {"256x784@784x512": ((256, 784), (784, 512), lambda a, b: a @ b),
           "256x512@512x10": ((256, 512), (512, 10), lambda a, b: a @ b),
           "256x10@(512x10)T": ((256, 10), (512, 10), lambda a, b: a @ b.T),
           "(256x784)T@256x512": ((256, 784), (256, 512), lambda a, b: a.T @ b),
           "(256x512)T@256x10": ((256, 512), (256, 10), lambda a, b: a.T @ b),
           "64x64@64x64": ((64, 64), (64, 64), lambda a, b: a @ b),
           "8x33@33x20": ((8, 33), (33, 20), lambda a, b: a @ b),
           # W18's layer: forward, and the two products of its gradient
           "512x1024@1024x1024": ((512, 1024), (1024, 1024), lambda a, b: a @ b),
           "512x1024@(1024x1024)T": ((512, 1024), (1024, 1024), lambda a, b: a @ b.T),
           "(512x1024)T@512x1024": ((512, 1024), (512, 1024), lambda a, b: a.T @ b),
           # a few rows: mostly the pack of B, as is and stored transposed
           "6x1024@1024x1024": ((6, 1024), (1024, 1024), lambda a, b: a @ b),
           "6x1024@(1024x1024)T": ((6, 1024), (1024, 1024), lambda a, b: a @ b.T)}


def matmuls(reps, peer="numpy"):
    """Each matmul's least time, and its median ratio to NumPy's (BLAS) or jax.jit's on
    the same operands, the two called in turn: the ratio holds still where a shared
    host's speed drifts between processes (OPENBLAS_NUM_THREADS=1 with
    TRACER_NUM_THREADS=1)."""
    rng, out = np.random.default_rng(0), []
    for name, (sa, sb, fn) in MATMULS.items():
        a, b = (rng.standard_normal(s).astype(np.float32) for s in (sa, sb))
        f = tracer.jit(fn)
        if peer == "jax":
            import jax
            g, ja, jb = jax.jit(fn), jax.numpy.asarray(a), jax.numpy.asarray(b)
            theirs = lambda: g(ja, jb).block_until_ready()      # noqa: E731
        else:
            theirs = lambda: fn(a, b)                           # noqa: E731
        f(a, b), theirs()
        pairs = [(_once(lambda: f(a, b)), _once(theirs)) for _ in range(reps)]
        ratio = statistics.median(ours / t for ours, t in pairs)
        out.append(f"{name} {min(p[0] for p in pairs) * 1e6:.0f} us ({ratio:.2f}x {peer})")
    return " | ".join(out)


def real(workload, reps):
    return _times(workload.stepper(real_workloads.tracer_lib()), reps)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="W5,W12,W15,W18")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--peer", choices=["numpy", "jax"], default="numpy",
                   help="whose matmuls MM's ratios are to")
    p.add_argument("--cpu", action="store_true", help="process CPU time instead of wall time "
                   "(with TRACER_NUM_THREADS=1: the work itself, on a busy host)")
    a = p.parse_args()
    if a.cpu:
        CLOCK[0] = time.process_time
    os.environ["TRACER_BACKGROUND_COMPILE"] = "0"
    rows = {r.key: r for r in ROWS}
    works = {w.key: w for w in real_workloads.WORKLOADS}
    for key in a.only.split(","):
        if key == "MM":
            print(matmuls(a.reps, a.peer), flush=True)
            continue
        t = micro(rows[key], a.reps) if key in rows else real(works[key], a.reps)
        print(f"{key} median {statistics.median(t) * 1e3:.3f} min {min(t) * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
