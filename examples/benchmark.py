"""The project's benchmark: the performance issues' workloads, as a table.

Each workload is timed for tracer's `llvm` backend, tracer's `numpy` backend, eager NumPy,
and jax.jit when JAX is importable (it is not a dependency). Implementations are run
round-robin (interleaved) and the table shows the median per-call time over the rounds,
so a noisy, shared machine affects all columns alike. Compare ratios within one run only.
Ratios are times (tracer llvm / peer: 0.5x means twice as fast), each row ends with its
target's verdict, and a second table shows tracer llvm's time per thread count.

The header names the ISA the llvm backend compiled for. TRACER_CPU=avx2 generates AVX2
code on any x86 host (see lowering/llvm/cpu.py); when that is below the host's ISA the
script re-executes itself with NumPy, OpenBLAS, XLA and glibc capped at it too (see
bench_isa.py; the header lists the caps and what was checked), unless --peers-on-host.

The rows live in examples/bench_workloads.py (ROWS; add a workload there), the compile-time
rows in bench_compile.py, the timing harness in bench_timing.py.

Run:  [TRACER_CPU=avx2] python examples/benchmark.py [--rounds 15] [--only W1,W3,compile]
      [--peers-on-host]
      python examples/benchmark.py --real [--only W17,W19]: the real workloads (W17 on:
      bench_real.py, each in fresh processes beside jax.jit)
"""
import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import tracer  # noqa: E402
from bench_compile import compile_latency, loop_compile, profile_compile  # noqa: E402
from bench_isa import isa_lines, restrict_peers  # noqa: E402
from bench_timing import (copy_bandwidth, thread_column, thread_counts,  # noqa: E402
                          time_interleaved, with_threads)
from bench_workloads import COMPILE_TARGETS, ROWS, _ratio, jax  # noqa: E402
from lowering.llvm import cpu  # noqa: E402

TARGETS = {**{row.key: row.targets for row in ROWS}, **COMPILE_TARGETS}
COLS = ["tracer llvm", "tracer numpy", "numpy", "jax.jit"]


def verdict(key, t):
    """'met', 'missed (<= 0.5x jax)', or '-' if a peer needed to judge is missing."""
    results = [(label, check(t)) for label, check in TARGETS[key]]
    missed = [label for label, ok in results if ok is False]
    if missed:
        return f"missed ({', '.join(missed)})"
    return "-" if any(ok is None for _, ok in results) else "met"


def implementations(row):
    """{column: callable} of a row, and a maker of tracer llvm's callable."""
    fns = {"tracer llvm": tracer.jit(row.tracer),
           "tracer numpy": tracer.jit(row.tracer, backend="numpy")}
    if row.numpy is not None:
        fns["numpy"] = row.numpy
    if jax is not None and row.jax is not None:
        fns["jax.jit"] = jax.jit(row.jax())
    return fns, lambda: tracer.jit(row.tracer)


def fmt(seconds):
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default="")
    ap.add_argument("--profile-compile", default="64,250,1000,2000", metavar="SIZES",
                    help="chain sizes of the compile table (printed unless --only leaves "
                         "out 'compile')")
    ap.add_argument("--peers-on-host", action="store_true",
                    help="keep NumPy, OpenBLAS, XLA and glibc on the host's ISA when "
                         "TRACER_CPU asks for a lower one")
    ap.add_argument("--real", action="store_true",
                    help="the real workloads instead (W17 on, examples/bench_real.py)")
    opts = ap.parse_args()
    if opts.real:
        import bench_real
        return bench_real.main(["--only", opts.only])
    host = cpu.Cpu("host")
    if not opts.peers_on_host:
        restrict_peers(cpu.CURRENT.isa, host.isa)
    only = set(filter(None, opts.only.split(",")))
    print(f"{isa_lines(host)}\nnumpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}, {os.cpu_count()} cpus, "
          f"median of {opts.rounds} interleaved rounds; ratios are time / peer's time; "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    print(f"| id | workload | {' | '.join(COLS)} | vs numpy | vs jax | target | verdict |")
    print("|" + " --- |" * (len(COLS) + 6))
    rng = np.random.default_rng(0)
    scaling = []
    for row in ROWS:
        if only and row.key not in only:
            continue
        args = row.args(rng)
        fns, make = implementations(row)
        faults = {}
        t = time_interleaved({**fns, **with_threads(make, args)}, args, opts.rounds,
                             faults=faults)
        scaling.append((row.key, [t[thread_column(n)] for n in thread_counts()]))
        if row.key == "W3":
            t["floor"] = args[0].nbytes / copy_bandwidth(opts.rounds)
        _row(row.key, row.desc, t)
        if row.key == "W3":
            print(f"|    | W3 bandwidth floor (bytes read / copy bandwidth "
                  f"{args[0].nbytes / t['floor'] / 1e9:.1f} GB/s) | {fmt(t['floor'])} = "
                  f"{t['floor'] / t['tracer llvm']:.0%} of tracer llvm's time |"
                  + " |" * (len(COLS) + 4), flush=True)
        _faults_row(faults)
    if not only or "W7" in only:
        t = compile_latency(max(3, opts.rounds // 3))
        _row("W7", "trace+compile+run 64-op chain", t)
        print(f"|    | ...same, warm disk cache, fresh process | {fmt(t['warm'])} |"
              + " |" * (len(COLS) + 4))
    if not only or only & {"W10", "W11"}:
        for key, t in loop_compile(max(3, opts.rounds // 3)).items():
            if not only or key in only:
                _row(key, {"W10": "trace+compile+run of W9's loop",
                           "W11": "trace+compile+run jit(grad) of a 1000-step scan"}[key], t)
    if not only or "compile" in only:
        profile_compile([int(n) for n in opts.profile_compile.split(",")])
    if scaling:
        names = [f"{n} thread{'s' * (n > 1)}" for n in thread_counts()]
        print(f"\ntracer llvm by TRACER_NUM_THREADS (same run)\n| id | {' | '.join(names)} | "
              f"speed-up |\n|" + " --- |" * (len(names) + 2))
        for key, ts in scaling:
            print(f"| {key} | {' | '.join(map(fmt, ts))} | {ts[0] / ts[-1]:.2f}x |")


FAULTS_NOTED = 256     # page faults per call (1 MB of fresh pages) worth a note


def _faults_row(faults):
    """A note under a row whose columns page-fault: their time includes writing into fresh
    memory, which depends on the allocator's state (jax.jit's W1 took 1.3 or 5.5 ms per
    process on one host, reusing its output's pages or faulting in all 4,096)."""
    noted = [f"{c} {faults[c]:.0f}" for c in COLS if faults.get(c, 0) >= FAULTS_NOTED]
    if noted:
        print(f"|    | page faults per call: {', '.join(noted)} | " + " |" * (len(COLS) + 4),
              flush=True)


def _row(key, desc, t):
    ratio = (lambda b: "-" if _ratio(t, "tracer llvm", b) is None
             else f"{_ratio(t, 'tracer llvm', b):.2f}x")
    target = ", ".join(label for label, _ in TARGETS[key])
    print(f"| {key} | {desc} | {' | '.join(fmt(t.get(c)) for c in COLS)} | "
          f"{ratio('numpy')} | {ratio('jax.jit')} | {target} | {verdict(key, t)} |", flush=True)


if __name__ == "__main__":
    main()
