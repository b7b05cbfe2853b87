"""The first call of a jitted function whose compiled code the disk cache already holds
(W7's warm row), with and without the check that loads cached code at once.

Run:  python examples/bench_warm_start.py [--pairs 7] [--phases] [--against TREE]

Each sample is a fresh process timing the first call of W7's 64-op chain against a warm
cache; `skip` patches lowering.llvm.target.cached to say False, as before the check: a
graph over the background threshold then builds an interpreted program and a compile
thread to load cached code. Samples alternate, and medians are printed. With --phases,
each sample instead reads the warm call's thread CPU time (less disturbed by a busy host
than wall time) in each phase: tracing, the passes, the graph cache's key and lookup,
linking the libraries, loading the code, the background policy's size and interpreted
cost; the medians over `pairs` processes are printed. With --against, another checkout of
the project (its root, e.g. the main worktree) runs its own copy of this script's code,
each tree on a cache of its own, alternating process by process with the tree on
PYTHONPATH: each tree's medians are printed, then the median of the paired differences,
which a noisy host disturbs less than either.
"""
import argparse
import functools
import importlib.util
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


HERE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=None)
def _codes(tree):
    """(first-call code, phases code) of the checkout at `tree` (None: this one)."""
    module, here = sys.modules[__name__], HERE
    if tree is not None:
        here = os.path.join(tree, "examples")
        spec = importlib.util.spec_from_file_location(
            "other", os.path.join(here, os.path.basename(__file__)))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return (module.CODE.format(here=here), "import sys, numpy as np\nimport tracer, "
            "tracer.numpy as tnp\n" + module.PHASES.format(here=here))


def sample(tree, cache, mode):
    """One fresh process of `tree` (None: the one on PYTHONPATH) on `cache`: {phase: thread
    CPU s} for mode "phases", else {"wall": the first call's s} (modes fill/check/skip)."""
    env = dict(os.environ, TRACER_CACHE_DIR=cache, **({"PYTHONPATH": tree} if tree else {}))
    first, by_phase = _codes(tree)
    out = subprocess.run([sys.executable, "-c", by_phase if mode == "phases" else first, mode],
                         capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out) if mode == "phases" else {"wall": float(out)}


def _median(runs, key, base=None):
    """Median ms of phase `key` over `runs` (minus the paired run of `base`, if given)."""
    return statistics.median(r.get(key, 0.0) - (b.get(key, 0.0) if base else 0.0)
                             for r, b in zip(runs, base or runs)) * 1e3


def main(pairs, by_phase, against):
    unit = "ms of thread CPU" if by_phase else "ms wall"
    with tempfile.TemporaryDirectory() as cache:
        if against:         # (trees, mode) alternating; each tree fills a cache of its own
            runs = {(t, "phases" if by_phase else "check"): [] for t in (against, None)}
        else:
            runs = {(None, m): [] for m in (("phases",) if by_phase else ("check", "skip"))}
        for tree, _ in runs:
            os.makedirs(os.path.join(cache, str(tree is None)), exist_ok=True)
            sample(tree, os.path.join(cache, str(tree is None)), "fill")
        for k in range(pairs):
            for tree, mode in list(runs)[::1 if k % 2 == 0 else -1]:
                runs[tree, mode].append(sample(tree, os.path.join(cache, str(tree is None)), mode))
    for (tree, mode), rs in runs.items():
        print(f"{tree or 'this tree'} ({mode}):", " | ".join(
            f"{k} {_median(rs, k):.2f}" for k in rs[0]), f"{unit}, medians over {pairs} processes")
    if against:
        base, rs = runs.values()
        print("paired differences (this tree's minus the other's):", " | ".join(
            f"{k} {_median(rs, k, base):+.2f}" for k in rs[0]), unit)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--phases", action="store_true", help="thread CPU time per phase")
    parser.add_argument("--against", metavar="TREE",
                        help="another checkout's root, alternated with this one")
    args = parser.parse_args()
    main(args.pairs, args.phases, args.against)
