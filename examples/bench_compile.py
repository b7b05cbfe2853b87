"""The benchmark's compile-time workloads: trace + compile + first run of structures no
cache has seen (W7, W10, W11), the warm disk cache in a fresh process, and the
`--profile-compile` phase table with rows of the real workloads' graphs. Run alone,
`python examples/bench_compile.py [rounds]` prints W10's and W11's times beside jax.jit's
with tracer's compile phases; `python examples/bench_compile.py real` the real rows."""
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
def fresh_compiles():
    """Compile-time figures must not be served by an earlier run's disk cache, and time
    the compile itself, not calls served meanwhile by the interpreter (tracer.background_compile)."""
    saved = {k: os.environ.get(k) for k in ("TRACER_CACHE_DIR", "TRACER_BACKGROUND_COMPILE")}
    with tempfile.TemporaryDirectory() as d:
        os.environ.update(TRACER_CACHE_DIR=d, TRACER_BACKGROUND_COMPILE="0")
        try:
            yield
        finally:
            for k, v in saved.items():
                os.environ.pop(k)
                if v is not None:
                    os.environ[k] = v


@fresh_compiles()
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


JAX_MAX_OPS = 1000      # jax.jit of a 2,000-op chain ran out of memory (24 GB) here
COMPILE_SIZES = (64, 250, 1000, 2000)
PHASES = ["trace", "passes", "partition", "schedule", "codegen", "llvm-optimize", "llvm-emit",
          "load"]
HEADER = (f"| ops | mode | tracer | jax.jit | vs jax | {' | '.join(PHASES)} | target | verdict "
          f"| first result, compiling in the background |\n|" + " --- |" * (len(PHASES) + 8))
# issue 13's targets: (ops, mode) -> (label, check(tracer s, jax s or None, {row: s}) ->
# True, False, or None when a time it needs is missing)
CHAIN_TARGETS = {
    (64, "plain"): ("<= 0.5x jax", lambda t, j, rows: None if j is None else t <= 0.5 * j),
    (1000, "grad"): ("<= 1x jax", lambda t, j, rows: None if j is None else t <= j),
    (2000, "grad"): ("<= 2.2x 1000 grad", lambda t, j, rows: None if (1000, "grad") not in rows
                     else t <= 2.2 * rows[1000, "grad"]),
}


def _chain(lib, grad, n, mode, salt):
    f = chain(lib, n, salt)
    return grad(lambda v: lib.sum(f(v))) if mode == "grad" else f


@fresh_compiles()
def profile_compile(sizes=COMPILE_SIZES, rounds=3):
    """The compile table: trace + compile + first run of fresh chains of each size (plain,
    and under grad) beside jax.jit's, the median of `rounds` structures, with tracer's
    phases (of its median round) and issue 13's targets. One small chain of each mode is
    compiled first (each system's one-time costs: tracer's math library, which the disk
    cache then serves to later processes, and jax's warm-up)."""
    x = np.ones(1000, np.float32)
    for mode in ("plain", "grad"):
        tracer.jit(_chain(tnp, tracer.grad, 64, mode, 0.5))(x)
        if jax:
            block(jax.jit(_chain(jnp, jax.grad, 64, mode, 0.5))(x))
    print(f"\ncompile table, fresh structures, median of {rounds} (ms; phases are tracer's)\n"
          + HEADER)
    rows, salt = {}, 20_000       # salts no other row of the benchmark uses
    for n, mode in ((n, m) for n in sizes for m in ("plain", "grad")):
        ours, theirs = [], []
        for _ in range(rounds):
            salt += 1
            ours.append(_first_call(tracer.jit(_chain(tnp, tracer.grad, n, mode, salt)), x))
            if jax and n <= JAX_MAX_OPS:
                theirs.append(_first_call(jax.jit(_chain(jnp, jax.grad, n, mode, salt)), x)[0])
        rows[n, mode], phases = sorted(ours, key=lambda r: r[0])[len(ours) // 2]
        jax_time = statistics.median(theirs) if theirs else None
        label, check = CHAIN_TARGETS.get((n, mode), ("", lambda *_: None))
        verdict = {True: "met", False: "missed", None: "-"}[check(rows[n, mode], jax_time, rows)]
        cells = [f"{phases.get(p, 0) * 1e3:.1f}" for p in PHASES]
        ratio = "-" if jax_time is None else f"{rows[n, mode] / jax_time:.2f}x"
        salt += 1
        first = _first_result(tracer.jit(_chain(tnp, tracer.grad, n, mode, salt)), x)
        print(f"| {n} | {mode} | {rows[n, mode] * 1e3:.1f} | "
              f"{'-' if jax_time is None else f'{jax_time * 1e3:.1f}'} | {ratio} | "
              f"{' | '.join(cells)} | {label} | {verdict} | {first * 1e3:.1f} |", flush=True)
    real_rows()


def real_rows():
    """Compile-table rows of the real workloads' graphs (examples/real_workloads.py, W17
    on): each one's first call (trace + compile + run) in a fresh process with an empty
    disk cache, compiling first, beside jax.jit's (issue 23's target: <= 1x jax), with
    tracer's phases; and its first result with background compiles on (the default)."""
    from bench_real import RUNS, real_workloads, spawn
    for w in real_workloads.WORKLOADS:
        ours = spawn(w.key, RUNS["tracer, compile first"], 1)
        theirs = spawn(w.key, RUNS["jax.jit"], 1) if jax else None
        default = spawn(w.key, RUNS["tracer"], 1)
        if ours is None:
            continue
        def ms(run):
            return "-" if run is None else f"{run['first'] * 1e3:.1f}"
        t, j = ours["first"], theirs and theirs["first"]
        cells = [f"{ours['phases'].get(p, 0) * 1e3:.1f}" for p in PHASES]
        verdict = "-" if j is None else "met" if t <= j else "missed"
        print(f"| {w.key} graph | first step | {ms(ours)} | {ms(theirs)} | "
              f"{'-' if j is None else f'{t / j:.2f}x'} | {' | '.join(cells)} | <= 1x jax | "
              f"{verdict} | {ms(default)} |", flush=True)


def _first_call(f, *args):
    """(seconds, {phase: seconds}) of f(*args), the call that traces and compiles."""
    from lowering.profile import recording
    t0 = time.perf_counter()
    with recording() as phases:
        block(f(*args))
    return time.perf_counter() - t0, phases


def _first_result(f, x):
    """Seconds to f's first result with background compiles on (the default), waiting
    for the compile to end before returning (it would slow the next measurement)."""
    saved = os.environ.pop("TRACER_BACKGROUND_COMPILE")
    try:
        t0 = time.perf_counter()
        block(f(x))
        seconds = time.perf_counter() - t0
        f.lower(x)
    finally:
        os.environ["TRACER_BACKGROUND_COMPILE"] = saved
    return seconds


@fresh_compiles()
def loop_compile(rounds):
    """W10: trace + compile + first run of W9's loop; W11: the same for jit(grad) of a
    1,000-step scan. Each round is a structure no cache has seen. Each row also holds
    "phases", tracer's compile phases of its median round."""
    x, w = np.ones(64, np.float32), np.eye(64, dtype=np.float32) * 0.5
    out = {}
    for key, make in (("W10", lambda lib, lax, s: fori(lib, lax, s)),
                      ("W11", lambda lib, lax, s: scan_loss(lib, lax, s))):
        res = {}
        for name, jit, lib, lax, grad in [("tracer llvm", tracer.jit, tnp, tracer.lax,
                                           tracer.grad)] + (
                [("jax.jit", jax.jit, jnp, jax.lax, jax.grad)] if jax else []):
            rows = []
            for r in range(rounds):
                f = make(lib, lax, 1 + r + 1000 * (key == "W11"))
                rows.append(_first_call(jit(grad(f) if key == "W11" else f), x, w))
            res[name], phases = sorted(rows, key=lambda row: row[0])[len(rows) // 2]
            if name == "tracer llvm":
                res["phases"] = phases
        out[key] = res
    return out


def phase_table(rows):
    """Markdown lines: loop_compile's rows with tracer's compile phases (ms)."""
    lines = [f"| row | tracer | jax.jit | {' | '.join(PHASES)} |",
             "|" + " --- |" * (len(PHASES) + 3)]
    for key, t in rows.items():
        theirs = f"{t['jax.jit'] * 1e3:.1f}" if "jax.jit" in t else "-"
        cells = " | ".join(f"{t['phases'].get(p, 0) * 1e3:.1f}" for p in PHASES)
        lines.append(f"| {key} | {t['tracer llvm'] * 1e3:.1f} | {theirs} | {cells} |")
    return lines


if __name__ == "__main__":      # python examples/bench_compile.py [rounds | real]
    if sys.argv[1:] == ["real"]:    # the compile table's rows of the real workloads
        print(HEADER)
        real_rows()
    else:                           # W10/W11 with their phases
        print("\n".join(phase_table(loop_compile(int(sys.argv[1]) if sys.argv[1:] else 5))))
