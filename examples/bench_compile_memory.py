"""RSS over thousands of jit compiles of functions that are dropped and replaced.

    python examples/bench_compile_memory.py                  # 5,000 compiles
    python examples/bench_compile_memory.py --in-process     # every compile in this process

Each function is compiled for `--per-function` distinct shapes, then dropped and replaced
by another (a different constant, so nothing is reused). The disk cache is off and the
in-memory caches are small (8 entries), so what they hold is reached early; after that
RSS should stay flat. With --in-process every compile runs in this process, as before
compiles were handed to worker processes (lowering.llvm.compile_worker), which shows
llvmlite's leak per optimizer run.
"""
import argparse
import gc
import os
import sys
import time
import warnings

os.environ.update(TRACER_DISK_CACHE="0", TRACER_CODE_CACHE_SIZE="8", TRACER_JIT_CACHE_SIZE="8")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import tracer  # noqa: E402
from lowering.llvm import target  # noqa: E402


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiles", type=int, default=5000)
    ap.add_argument("--per-function", type=int, default=500)
    ap.add_argument("--in-process", action="store_true",
                    help="compile everything in this process (no worker processes)")
    opts = ap.parse_args()
    warnings.filterwarnings("ignore", message=r".*compiled for \d+ different signatures")
    if opts.in_process:
        target.IN_PROCESS = float("inf")
    print(f"{opts.compiles} compiles, {opts.per_function} shapes per function, "
          f"{'all in this process' if opts.in_process else 'workers after the first '}"
          f"{'' if opts.in_process else target.IN_PROCESS}")
    start, t0, done = rss_mib(), time.perf_counter(), 0
    for k in range(-(-opts.compiles // opts.per_function)):
        scale = 2.0 + k
        f = tracer.jit(lambda x: x * scale + 1.0)
        n = min(opts.per_function, opts.compiles - done)
        for size in range(2, n + 2):
            f(np.ones(size, np.float32))
        del f
        gc.collect()
        done += n
        print(f"{done:6d} compiles  RSS {rss_mib():7.1f} MiB ({rss_mib() - start:+6.1f})  "
              f"{(time.perf_counter() - t0) * 1000 / done:5.1f} ms a compile", flush=True)
    assert target.stats["compiled"] >= opts.compiles


if __name__ == "__main__":
    main()
