"""The benchmark's compile-time workloads: trace + compile + first run of structures no
cache has seen (W7, W10, W11), the warm disk cache in a fresh process, and the
`--profile-compile` phase table."""
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import tracer
import tracer.numpy as tnp
from bench_workloads import chain, fori, jax, jnp, scan_loss
from bench_timing import block


@contextlib.contextmanager
def empty_disk_cache():
    """Compile-time figures must not be served by an earlier run's disk cache."""
    saved = os.environ.get("TRACER_CACHE_DIR")
    with tempfile.TemporaryDirectory() as d:
        os.environ["TRACER_CACHE_DIR"] = d
        try:
            yield
        finally:
            os.environ.pop("TRACER_CACHE_DIR")
            if saved is not None:
                os.environ["TRACER_CACHE_DIR"] = saved


@empty_disk_cache()
def compile_latency(rounds):
    """W7: trace + compile + first run of a fresh 64-op chain (a structure no cache has
    seen, each round); then a warm disk cache in a fresh process (median of 2)."""
    x = np.ones(1000, np.float32)
    res = {}
    cold = []
    for i in range(rounds):
        f = tracer.jit(chain(tnp, salt=1 + i))
        t0 = time.perf_counter()
        f(x)
        cold.append(time.perf_counter() - t0)
    res["tracer llvm"] = statistics.median(cold)
    if jax:
        times = []
        for i in range(rounds):
            g = jax.jit(chain(jnp, salt=1 + i))
            t0 = time.perf_counter()
            block(g(x))
            times.append(time.perf_counter() - t0)
        res["jax.jit"] = statistics.median(times)
    code = ("import time, numpy as np, tracer, tracer.numpy as tnp, sys\n"
            f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
            "from bench_workloads import chain\n"
            "x = np.ones(1000, np.float32); f = tracer.jit(chain(tnp))\n"
            "t0 = time.perf_counter(); f(x); print(time.perf_counter() - t0)\n")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TRACER_CACHE_DIR=d)
        warm = [float(subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                     capture_output=True, check=True).stdout)
                for _ in range(3)][1:]
    res["warm"] = statistics.median(warm)
    return res


PHASES = ["trace", "passes", "partition", "llvm-optimize", "llvm-emit", "load"]


@empty_disk_cache()
def profile_compile(sizes):
    """--profile-compile: where the trace + compile + first run of a fresh chain goes
    (plain, and under grad), phase by phase, beside jax.jit's whole time."""
    from lowering.profile import recording
    x = np.ones(1000, np.float32)
    print(f"\ncompile profile, fresh structures (ms)\n| ops | mode | total | "
          f"{' | '.join(PHASES)} | jax.jit |\n|" + " --- |" * (len(PHASES) + 4))
    for salt, (n, mode) in enumerate((n, m) for n in sizes for m in ("plain", "grad")):
        def make(lib, grad):
            f = chain(lib, n, salt + 1)
            return grad(lambda v: lib.sum(f(v))) if mode == "grad" else f
        f = tracer.jit(make(tnp, tracer.grad))
        t0 = time.perf_counter()
        with recording() as phases:
            f(x)
        total = time.perf_counter() - t0
        jax_time = None
        if jax:
            g = jax.jit(make(jnp, jax.grad))
            t0 = time.perf_counter()
            block(g(x))
            jax_time = time.perf_counter() - t0
        cells = [f"{phases.get(p, 0) * 1e3:.1f}" for p in PHASES]
        print(f"| {n} | {mode} | {total * 1e3:.1f} | {' | '.join(cells)} | "
              f"{'-' if jax_time is None else f'{jax_time * 1e3:.1f}'} |", flush=True)


@empty_disk_cache()
def loop_compile(rounds):
    """W10: trace + compile + first run of W9's loop; W11: the same for jit(grad) of a
    1,000-step scan. Each round is a structure no cache has seen."""
    x, w = np.ones(64, np.float32), np.eye(64, dtype=np.float32) * 0.5
    out = {}
    for key, make in (("W10", lambda lib, lax, s: fori(lib, lax, s)),
                      ("W11", lambda lib, lax, s: scan_loss(lib, lax, s))):
        res = {}
        for name, jit, lib, lax, grad in [("tracer llvm", tracer.jit, tnp, tracer.lax,
                                           tracer.grad)] + (
                [("jax.jit", jax.jit, jnp, jax.lax, jax.grad)] if jax else []):
            times = []
            for r in range(rounds):
                f = make(lib, lax, 1 + r + 1000 * (key == "W11"))
                g = jit(grad(f) if key == "W11" else f)
                t0 = time.perf_counter()
                block(g(x, w))
                times.append(time.perf_counter() - t0)
            res[name] = statistics.median(times)
        out[key] = res
    return out
