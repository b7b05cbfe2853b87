"""When each LLVM compile of a real workload's first call starts and ends, on which thread
and with how many lines of module text: which compile is the first call's critical path
(a matmul library beside the step module on an idle core, or one after the other on a
busy host; a module cut into parts, lowering.llvm.split). One fresh process, compiling
first, disk cache off; the host's load is printed, since it decides what runs at once.

Run:  python examples/compile_timeline.py W18 [steps]
"""
import os
import sys
import threading
import time

os.environ.update(TRACER_BACKGROUND_COMPILE="0", TRACER_DISK_CACHE="0")

import numpy as np  # noqa: E402

import real_workloads  # noqa: E402
from lowering import host  # noqa: E402
from lowering.llvm import target  # noqa: E402

_start = [time.perf_counter()]


def _timed(fn):
    def timed(key, text):
        began = time.perf_counter() - _start[0]
        try:
            return fn(key, text)
        finally:
            print(f"{began:7.3f} -> {time.perf_counter() - _start[0]:7.3f} s  "
                  f"{threading.current_thread().name:22} {text.count(chr(10)):6} lines")
    return timed


def main(key, steps=1):
    workload = next(w for w in real_workloads.WORKLOADS if w.key == key)
    run, state = workload.setup(real_workloads.tracer_lib(), np.random.default_rng(0))
    print(f"{key}: load {os.getloadavg()[0]:.1f} on {host.cores()} cpus, "
          f"{host.idle_cores()} idle beside this thread")
    target._compile = _timed(target._compile)
    _start[0] = time.perf_counter()
    for i in range(steps):
        began = time.perf_counter()
        state, value = run(state)
        float(value)
        print(f"step {i}: {time.perf_counter() - began:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
