"""Steady-state call times of tracer's llvm backend alone, for comparing two versions of the
code (run this file from each checkout in turn, alternating, on the same machine): rows of
the micro-benchmark (examples/bench_workloads.py) and steps of the real workloads
(examples/real_workloads.py), each after its compile: median and least of `--reps` calls (ms).

Run:  python examples/bench_steps.py [--only W5,W12,W15,W18,MM] [--reps 30]
      (MM: single matmuls of W5's and W18's steps and small ones; TRACER_NUM_THREADS=1 steadies them)
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


def micro(row, reps):
    args = row.args(np.random.default_rng(0))
    f = tracer.jit(row.tracer)
    block(f(*args))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        block(f(*args))
        times.append(time.perf_counter() - t0)
    return times


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
           "(512x1024)T@512x1024": ((512, 1024), (512, 1024), lambda a, b: a.T @ b)}


def matmuls(reps):
    rng, out = np.random.default_rng(0), []
    for name, (sa, sb, fn) in MATMULS.items():
        a, b = (rng.standard_normal(s).astype(np.float32) for s in (sa, sb))
        f = tracer.jit(fn)
        f(a, b)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            f(a, b)
            times.append(time.perf_counter() - t0)
        out.append(f"{name} {min(times) * 1e6:.0f} us")
    return " | ".join(out)


def real(workload, reps):
    run, state = workload.setup(real_workloads.tracer_lib(), np.random.default_rng(0))
    state, _ = run(state)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        state, value = run(state)
        float(value)
        times.append(time.perf_counter() - t0)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="W5,W12,W15,W18")
    p.add_argument("--reps", type=int, default=30)
    a = p.parse_args()
    os.environ["TRACER_BACKGROUND_COMPILE"] = "0"
    rows = {r.key: r for r in ROWS}
    works = {w.key: w for w in real_workloads.WORKLOADS}
    for key in a.only.split(","):
        if key == "MM":
            print(matmuls(a.reps), flush=True)
            continue
        t = micro(rows[key], a.reps) if key in rows else real(works[key], a.reps)
        print(f"{key} median {statistics.median(t) * 1e3:.3f} min {min(t) * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
