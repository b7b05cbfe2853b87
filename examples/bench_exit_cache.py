"""A program that ends while its background compile runs, run twice: the second run's first
call loads what the compile worker cached after the first run ended (lowering.llvm.
compile_worker), instead of running interpreted and compiling again. Each run is a fresh
process sharing one new disk cache; the first call of each, its disk hits and compiles,
and how long after each run its compile workers ended, are printed.
Background compiles need an idle core (lowering.host): on a busy host the first run
compiles first and caches the object itself, unless --idle makes both runs decide as on
an idle host.

Run:  python examples/bench_exit_cache.py [--idle] [ops]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

PROGRAM = r"""
import json, sys, time
import numpy as np
import tracer, tracer.numpy as tnp
from lowering.llvm import target
if sys.argv[2] == "idle":           # the decisions of an idle host, whatever its load
    import tracer.background_compile as background
    target.idle_core, background.idle_cores = lambda: True, lambda: 4

def f(x):
    for k in range(int(sys.argv[1])):
        x = tnp.sin(x) * (1.0 + k * 1e-3) + tnp.cos(x * 0.5)
    return x
began = time.perf_counter()
tracer.jit(f)(np.ones(1000, np.float32))
print(json.dumps(dict(target.stats, first=time.perf_counter() - began)))
"""


def main(ops=300, idle=False):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TRACER_CACHE_DIR=cache)
        env.pop("TRACER_BACKGROUND_COMPILE", None)
        for run in (1, 2):
            proc = subprocess.Popen([sys.executable, "-c", PROGRAM, str(ops), "idle" if idle else "-"], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            r = json.loads(proc.stdout.read())
            proc.wait()
            ended = time.perf_counter()
            proc.stderr.read()      # its end: its compile workers, which share it, ended
            objects = [f for f in os.listdir(cache) if f.endswith(".o")]
            print(f"run {run}: first call {r['first']:.3f} s, {r['disk_hits']} disk hits, "
                  f"{r['compiled']} compiled here; its compile workers ended "
                  f"{time.perf_counter() - ended:.2f} s after it, {len(objects)} objects "
                  f"cached")

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--idle"]
    main(*map(int, args[:1]), idle="--idle" in sys.argv)
