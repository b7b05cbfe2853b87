"""Where a real workload's first call goes, as a timeline: tracing, lowering, each compile a
worker process runs (the matmul library's, the thread pool's, a background compile's: its
start, and LLVM's optimize and emit seconds), codegen's share_duplicates, then each
step (with the page faults the process took meanwhile). Run it with an empty cache to see what a new user waits for: which compile is
the last one the first step waits for, and how much the first step costs beyond a steady
one. The figures of the first-call commits of issue 23 (the library prefetched before
partitioning, the compile estimate) were read off this timeline.

Run:  TRACER_CACHE_DIR=$(mktemp -d) python examples/bench_first_call.py W18 [steps]
      (TRACER_BACKGROUND_COMPILE=0 to compile first)
"""
import contextlib
import os
import resource
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lowering import profile  # noqa: E402

T0 = time.perf_counter()
EVENTS = []         # (thread, what, start, end), seconds since T0
_phase = profile.phase


def _record(what, start):
    EVENTS.append((threading.current_thread().name, what, start - T0,
                   time.perf_counter() - T0))


@contextlib.contextmanager
def _timed_phase(name):
    start = time.perf_counter()
    with _phase(name):
        yield
    _record(name, start)


def _timed(owner, attr, label):
    """owner.attr, recording each call as an event `label(result)`."""
    fn = getattr(owner, attr)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        _record(label(args, out), start)
        return out
    setattr(owner, attr, timed)


def instrument():
    """Record the phases, the compile workers and codegen's parts (before tracer's layers
    import them by name)."""
    profile.phase = _timed_phase
    from lowering.llvm import codegen, compile_worker
    _timed(compile_worker.Worker, "__init__", lambda a, o: "worker start")
    _timed(compile_worker.Worker, "compile", lambda a, o: (
        f"worker compile, {len(a[1]) // 1000}k chars: optimize {o[1]:.2f} s, emit {o[2]:.2f} s"))
    _timed(codegen, "share_duplicates", lambda a, o: "codegen: share_duplicates")


def main(key, steps=3):
    instrument()
    import real_workloads
    workload = next(w for w in real_workloads.WORKLOADS if w.key == key)
    run, state = workload.setup(real_workloads.tracer_lib(), np.random.default_rng(0))
    for i in range(steps):
        start, faults = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        state, value = run(state)
        float(value)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        _record(f"step {i} ({faults} page faults in the process)", start)
    print(f"{key}: events in seconds since the script started (start, end, length, thread)")
    for thread, what, start, end in sorted(EVENTS, key=lambda e: e[2]):
        if end - start >= 0.01:
            print(f"{start:7.3f} {end:7.3f} {end - start:6.3f}  {thread[:24]:24s} {what}")


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
