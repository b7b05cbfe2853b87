"""How the benchmark times things: interleaved rounds and medians, so a noisy shared
machine slows every column alike; tracer llvm per thread count; the copy bandwidth floor."""
import os
import resource
import statistics
import time

import numpy as np

from bench_workloads import jax
from lowering.settings import settings


def block(x):
    """Wait for x (jax dispatches asynchronously)."""
    if jax is not None and hasattr(x, "block_until_ready"):
        x.block_until_ready()
    elif isinstance(x, (tuple, list)):
        for y in x:
            block(y)
    return x


def time_interleaved(fns, args, rounds, budget=0.05, faults=None):
    """Median seconds per call of each fn, run round-robin; `faults`, a dict, gets each
    fn's median page faults per call (memory the call touched fresh: a result written
    into new pages costs ~1 us per 4 KB page, and allocators differ in when they reuse)."""
    for f in fns.values():
        block(f(*args))                       # compile / warm up
    inner = {}
    for name, f in fns.items():
        t0 = time.perf_counter()
        block(f(*args))
        inner[name] = max(1, int(budget / max(time.perf_counter() - t0, 1e-7)))
    samples, faulted = {name: [] for name in fns}, {name: [] for name in fns}
    for _ in range(rounds):
        for name, f in fns.items():
            f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
            for _ in range(inner[name]):
                block(f(*args))
            samples[name].append((time.perf_counter() - t0) / inner[name])
            faulted[name].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
                                 / inner[name])
            time.sleep(0.005)
    if faults is not None:
        faults.update({name: statistics.median(s) for name, s in faulted.items()})
    return {name: statistics.median(s) for name, s in samples.items()}


def copy_bandwidth(rounds):
    """Bytes per second of np.copyto on 256 MB (read + write counted), median of rounds."""
    src = np.ones(64 * 1024 * 1024, np.float32)
    dst = np.empty_like(src)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return 2 * src.nbytes / statistics.median(times)


def thread_counts():
    """1, 2, 4, ... up to the machine's cpus, and the cpu count itself."""
    n = os.cpu_count() or 1
    counts = [1 << k for k in range(n.bit_length()) if 1 << k < n]
    return counts + [n]


def thread_column(n):
    return "tracer llvm" if n == settings.num_threads else f"{n} thread{'s' * (n > 1)}"


def with_threads(make, args):
    """{'N threads': tracer llvm's callable compiled for TRACER_NUM_THREADS=N}, for each
    count but the default one (that is the 'tracer llvm' column)."""
    saved, out = os.environ.get("TRACER_NUM_THREADS"), {}
    try:
        for n in thread_counts():
            name = thread_column(n)
            if name != "tracer llvm":
                os.environ["TRACER_NUM_THREADS"] = str(n)
                out[name] = f = make()
                block(f(*args))                 # compiles now, with n threads
                _restore(saved)
    finally:
        _restore(saved)
    return out


def _restore(saved):
    os.environ.pop("TRACER_NUM_THREADS", None)
    if saved is not None:
        os.environ["TRACER_NUM_THREADS"] = saved
