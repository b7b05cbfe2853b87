"""Real workloads beside jax.jit: the models of examples/real_workloads.py, the same code
run by both libraries, each run in a fresh process (tracer's with an empty disk cache), as
a new user's program would start.

Per workload and run it reports the steady step (median of the run's second half), the
first call (trace + compile + run), the wall time of the whole run (first call included),
the peak RSS growth over the run (from just before the first call), and how far tracer's
losses are from jax's over the first steps; then every step's time (when a background
compile lands shows there). tracer runs twice: with its default settings
(large graphs compile in the background while the interpreter serves the first calls)
and with TRACER_BACKGROUND_COMPILE=0 (compile first); the phases of the latter's first
call say where the compile time goes. Targets (issue 23): each figure <= 1.0x jax.jit,
losses within 1e-3 (relative).

Under TRACER_CPU=avx2 on an AVX-512 host the peers (jax's XLA, NumPy, OpenBLAS, glibc) are
capped at AVX2 too, as in benchmark.py (examples/bench_isa.py), unless --peers-on-host;
jax.jit's matmuls (YNNPACK) cannot be capped and keep the host's AVX-512.

With --rounds N every run is repeated N times, the runs' order reversed every other round,
and each figure and each ratio is the median over the rounds (the ratios of each round's
figures): the host's speed drifts between runs, by 15-30% over minutes on a shared one.
The first call's phases, the losses and the step times are the first round's.

With --paired N a last process per workload runs both libraries' steady steps, N of
each, alternating step by step, and prints each one's median and the median of the
pairs' ratios: the steady step's ratio with the host's drift taken out.

Run:  [TRACER_CPU=avx2] python examples/bench_real.py [--only W17,W19] [--steps N] [--rounds N]
      [--paired N] [--no-jax]
      (or python examples/benchmark.py --real ...)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_workloads  # noqa: E402
from bench_isa import isa_lines, restrict_peers  # noqa: E402

RUNS = {"tracer": ("tracer", {}), "tracer, compile first": ("tracer",
                                                              {"TRACER_BACKGROUND_COMPILE": "0"}),
        "jax.jit": ("jax", {})}
LOSSES_KEPT = 10            # first steps whose losses are compared
LOSS_RTOL = 1e-3
PHASES = ["trace", "passes", "partition", "schedule", "codegen", "llvm-optimize", "llvm-emit",
          "load"]


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _reset_peak_rss():
    """Make VmHWM (peak RSS) restart from the current RSS; False where Linux does not let us."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(run, state, steps):
    """Run `steps` steps of a workload; its figures (seconds, bytes) and first losses."""
    from lowering.profile import recording
    base = _status_kib("VmRSS")
    if not _reset_peak_rss():
        base = max(base, _status_kib("VmHWM"))
    times, losses = [], []
    start = time.perf_counter()
    for i in range(steps):
        t0 = time.perf_counter()
        if i == 0:
            with recording() as phases:
                state, value = run(state)
                value = float(value)
        else:
            state, value = run(state)
            value = float(value)            # a user reads the loss: waits for jax's result
        times.append(time.perf_counter() - t0)
        losses.append(value)
    return {"first": times[0], "steady": statistics.median(times[steps // 2:] or times),
            "wall": time.perf_counter() - start,
            "rss": (_status_kib("VmHWM") - base) * 1024, "losses": losses[:LOSSES_KEPT],
            "times": times,
            "phases": {k: v for k, v in phases.items() if k in PHASES}}


def worker(key, lib_name, steps):
    """The child's side: set one workload up on one library and measure it (JSON on stdout)."""
    workload = next(w for w in real_workloads.WORKLOADS if w.key == key)
    lib = real_workloads.tracer_lib() if lib_name == "tracer" else real_workloads.jax_lib()
    run, state = workload.setup(lib, np.random.default_rng(0))
    print(json.dumps(measure(run, state, steps)))


def paired(key, steps):
    """The child's side of --paired: both libraries' steps of one workload in this one
    process, alternating step by step after each one's first two calls; each library's
    median step and the median of the pairs' ratios (JSON on stdout). Two processes
    measured minutes apart saw the host's speed differ by 15-30%; here both share it."""
    workload = next(w for w in real_workloads.WORKLOADS if w.key == key)
    both = [workload.stepper(lib) for lib in (real_workloads.tracer_lib(),
                                               real_workloads.jax_lib())]
    for step in both * 2:
        step()
    pairs = []
    for _ in range(steps):
        times = []
        for step in both:
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        pairs.append(times)
    print(json.dumps({"tracer": statistics.median(t for t, _ in pairs),
                      "jax": statistics.median(j for _, j in pairs),
                      "ratio": statistics.median(t / j for t, j in pairs)}))


PAIRED = ("both", {"TRACER_BACKGROUND_COMPILE": "0"})     # --paired's process: `paired`


def spawn(key, run, steps):
    """One fresh process measuring one workload on `run` (a value of RUNS, or PAIRED;
    tracer's disk cache a new empty directory); its figures, or None if it failed (the
    error is printed)."""
    lib_name, settings = run
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "TRACER_BACKGROUND_COMPILE"}
        env.update(settings, TRACER_CACHE_DIR=cache)
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", key,
                               "--lib", lib_name, "--steps", str(steps)],
                              env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{key} {lib_name} {settings}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def _time(s):
    return "-" if s is None else f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def loss_diff(ours, theirs):
    """Largest relative difference of two loss trajectories over their common steps."""
    n = min(len(ours), len(theirs))
    a, b = np.array(ours[:n]), np.array(theirs[:n])
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30))) if n else None


FIGURES = [("steady", "steady step", _time), ("first", "first call", _time),
           ("wall", "whole run", _time), ("rss", "peak RSS growth",
                                          lambda b: "-" if b is None else f"{b / 2**20:.0f} MiB")]


def _median_run(results):
    """One run's figures over rounds: each figure's median (losses, step times and
    phases the first round's); None if every round failed."""
    ok = [r for r in results if r is not None]
    if not ok:
        return None
    return {**ok[0], **{k: statistics.median(r[k] for r in ok) for k, _, _ in FIGURES}}


def _ratios(rounds, run_name):
    """Per figure, the median over rounds of `run_name`'s figure over jax.jit's in the
    same round (a shared host's speed drifts by 15-30% over minutes; rounds alternate the
    runs' order, so a drift within a round falls on each side in turn)."""
    pairs = [(r[run_name], r["jax.jit"]) for r in rounds
             if r.get(run_name) and r.get("jax.jit")]
    return {k: statistics.median(a[k] / b[k] for a, b in pairs)
            if pairs and all(b[k] for _, b in pairs) else None for k, _, _ in FIGURES}


def rows(workload, rounds):
    """Markdown rows of one workload: one per run (each figure its median over `rounds`,
    [{run: figures}]), tracer's ratios to jax.jit's figures (medians of each round's)."""
    results = {name: _median_run([r.get(name) for r in rounds]) for name in rounds[0]}
    ref = results.get("jax.jit")
    out = []
    for run_name, r in results.items():
        if r is None:
            out.append(f"| {workload.key} | {run_name} | failed |" + " |" * 7)
            continue
        cells = [fmt(r[k]) for k, _, fmt in FIGURES]
        ratio = None if ref is None or run_name == "jax.jit" else _ratios(rounds, run_name)
        ratios = "-" if ratio is None else " / ".join(
            "-" if ratio[k] is None else f"{ratio[k]:.2f}x" for k, _, _ in FIGURES)
        diff = None if ratio is None else loss_diff(r["losses"], ref["losses"])
        verdict = "-" if diff is None else "met" if max(
            v for v in ratio.values() if v is not None) <= 1 and diff <= LOSS_RTOL \
            else "missed"
        out.append(f"| {workload.key} | {run_name} | {' | '.join(cells)} | {ratios} | "
                   f"{'-' if diff is None else f'{diff:.1e}'} | {verdict} |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="workload ids, e.g. W17,W19")
    ap.add_argument("--steps", type=int, default=0, help="steps per run (default: each "
                    "workload's own)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each workload per "
                    "library setting, in alternating order; medians are printed")
    ap.add_argument("--paired", type=int, default=0, metavar="STEPS",
                    help="also time STEPS steady steps of each workload with both libraries "
                         "in one process, alternating (tracer compiling first)")
    ap.add_argument("--no-jax", action="store_true", help="leave out the jax.jit runs")
    ap.add_argument("--peers-on-host", action="store_true",
                    help="keep jax, NumPy, OpenBLAS and glibc on the host's ISA when "
                         "TRACER_CPU asks for a lower one")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.worker:
        return paired(opts.worker, opts.steps) if opts.lib == "both" else worker(
            opts.worker, opts.lib, opts.steps)
    from lowering.llvm import cpu
    host = cpu.Cpu("host")
    if not opts.peers_on_host:
        restrict_peers(cpu.CURRENT.isa, host.isa)
    only = set(filter(None, opts.only.split(",")))
    try:
        import jax
        has_jax = not opts.no_jax
    except ImportError:
        jax, has_jax = None, False
    runs = [r for r in RUNS if has_jax or RUNS[r][0] != "jax"]
    print(isa_lines(host))
    print(f"real workloads, each run in a fresh process, tracer's disk cache empty; jax "
          f"{jax.__version__ if has_jax else 'not run'}; {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.1f} at the start; ratios are tracer / jax.jit for "
          f"{' / '.join(n for _, n, _ in FIGURES)}; loss diff: largest relative difference "
          f"from jax's losses over the first {LOSSES_KEPT} steps; target: every ratio "
          f"<= 1x, loss diff <= {LOSS_RTOL:g}")
    print(f"| id | run | {' | '.join(n for _, n, _ in FIGURES)} | vs jax | loss diff | "
          f"verdict |\n|" + " --- |" * (len(FIGURES) + 5))
    measured = {}
    for w in real_workloads.WORKLOADS:
        if only and w.key not in only:
            continue
        steps = opts.steps or w.steps
        print(f"| {w.key} | {w.desc}; {steps} steps |" + " |" * (len(FIGURES) + 3), flush=True)
        rounds = [{name: spawn(w.key, RUNS[name], steps)
                   for name in (runs[::-1] if i % 2 else runs)}
                  for i in range(max(1, opts.rounds))]      # rounds[0] in the order of runs
        measured[w.key] = rounds[0]
        print("\n".join(rows(w, rounds)), flush=True)
    if opts.paired and has_jax:
        print("\nsteady steps of both libraries in one process, alternating: medians, and "
              "the median of the pairs' ratios (tracer / jax.jit)")
        print("| id | tracer | jax.jit | ratio |\n| --- | --- | --- | --- |")
        for key in measured:
            r = spawn(key, PAIRED, opts.paired)
            print(f"| {key} | failed | | |" if r is None else
                  f"| {key} | {_time(r['tracer'])} | {_time(r['jax'])} | {r['ratio']:.2f}x |",
                  flush=True)
    print("\nfirst call of each run, and tracer's compile phases (ms) when it compiles first")
    print(f"| id | {' | '.join(PHASES)} |\n|" + " --- |" * (len(PHASES) + 1))
    for key, results in measured.items():
        r = results.get("tracer, compile first")
        if r:
            print(f"| {key} | " + " | ".join(f"{r['phases'].get(p, 0) * 1e3:.0f}"
                                             for p in PHASES) + " |")
    for title, field, scale, fmt in [("loss trajectories (first steps)", "losses", 1, "{:.6g}"),
                                     ("step times (ms)", "times", 1e3, "{:.0f}")]:
        print(f"\n{title}")
        for key, results in measured.items():
            for name, r in results.items():
                if r:
                    print(f"{key} {name}: " + " ".join(fmt.format(v * scale) for v in r[field]))


if __name__ == "__main__":
    main()
