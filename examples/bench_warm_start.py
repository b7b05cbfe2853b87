"""The first call of a jitted function whose compiled code the disk cache already holds
(W7's warm row), with and without the check that loads cached code at once.

Run:  python examples/bench_warm_start.py [--pairs 7] [--phases]

Each sample is a fresh process timing the first call of W7's 64-op chain against a warm
cache; `skip` patches lowering.llvm.target.cached to say False, as before the check: a
graph over the background threshold then builds an interpreted program and a compile
thread to load cached code. Samples alternate, and medians are printed. With --phases,
each sample instead reads the warm call's thread CPU time (less disturbed by a busy host
than wall time) in each phase: tracing, the passes, the graph cache's key and lookup,
linking the libraries, loading the code, the background policy's size and interpreted
cost; the medians over `pairs` processes are printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CODE = """
import sys, time, numpy as np
import tracer, tracer.numpy as tnp
from lowering.llvm import target
if sys.argv[1] == "skip":
    target.cached = lambda text: False
sys.path.insert(0, {here!r})
from bench_workloads import chain
x = np.ones(1000, np.float32)
f = tracer.jit(chain(tnp))
t0 = time.perf_counter(); f(x); print(time.perf_counter() - t0)
if sys.argv[1] == "fill":
    f.lower(x)          # waits for a background compile, so its object reaches the cache
"""


PHASES = """
import importlib, json, time
from lowering.llvm import graph_cache, program, target
from tracer import background_compile
T = {{}}


def wrap(owner, name, label):
    fn = getattr(owner, name)

    def timed(*a, **k):
        t0 = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            T[label] = T.get(label, 0.0) + time.thread_time() - t0
    setattr(owner, name, timed)


for owner, name, label in [(importlib.import_module("tracer.jit").Jitted, "_trace", "trace"),
                           (program, "optimize", "passes"), (graph_cache, "key_of", "key"),
                           (graph_cache, "lookup", "lookup"), (target, "_link", "link"),
                           (target.Loaded, "__init__", "load"),
                           (background_compile, "size", "size"),
                           (background_compile, "interpreted_cost", "interpreted cost")]:
    wrap(owner, name, label)
sys.path.insert(0, {here!r})
from bench_workloads import chain
x = np.ones(1000, np.float32)
f = tracer.jit(chain(tnp))
t0 = time.thread_time(); f(x); T["total"] = time.thread_time() - t0
print(json.dumps(T))
"""


def phases(cache, samples):
    """Median thread CPU ms of each phase of the warm first call over `samples` processes."""
    code = "import sys, numpy as np\nimport tracer, tracer.numpy as tnp\n" + PHASES.format(
        here=os.path.dirname(os.path.abspath(__file__)))
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                      text=True, check=True,
                                      env=dict(os.environ, TRACER_CACHE_DIR=cache)).stdout)
            for _ in range(samples)]
    return {k: statistics.median(r.get(k, 0.0) for r in runs) * 1e3 for k in runs[0]}


def first_call(mode, cache):
    code = CODE.format(here=os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True,
                         check=True, env=dict(os.environ, TRACER_CACHE_DIR=cache))
    return float(out.stdout)


def main(pairs, by_phase):
    with tempfile.TemporaryDirectory() as cache:
        first_call("fill", cache)
        if by_phase:
            print(" | ".join(f"{k} {v:.2f}" for k, v in phases(cache, pairs).items()),
                  f"ms of thread CPU, medians over {pairs} processes")
            return
        times = {"check": [], "skip": []}
        for _ in range(pairs):
            for mode in times:
                times[mode].append(first_call(mode, cache))
    for mode, ts in times.items():
        print(f"{mode}: median {statistics.median(ts) * 1e3:.2f} ms over {pairs} "
              f"(min {min(ts) * 1e3:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--phases", action="store_true", help="thread CPU time per phase")
    args = parser.parse_args()
    main(args.pairs, args.phases)
