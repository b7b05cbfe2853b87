"""The first call of a jitted function whose compiled code the disk cache already holds
(W7's warm row), with and without the check that loads cached code at once.

Run:  python examples/bench_warm_start.py [--pairs 7]

Each sample is a fresh process timing the first call of W7's 64-op chain against a warm
cache; `skip` patches lowering.llvm.target.cached to say False, as before the check: a
graph over the background threshold then builds an interpreted program and a compile
thread to load cached code. Samples alternate, and medians are printed.
"""
import argparse
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


def first_call(mode, cache):
    code = CODE.format(here=os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True,
                         check=True, env=dict(os.environ, TRACER_CACHE_DIR=cache))
    return float(out.stdout)


def main(pairs):
    with tempfile.TemporaryDirectory() as cache:
        first_call("fill", cache)
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
    main(parser.parse_args().pairs)
