"""Where a module's LLVM time goes, entry by entry: each group of external functions of a
dumped module (TRACER_DUMP_DIR's <key>.ll), with the internal functions it calls
(lowering.llvm.split.pieces), is optimized and emitted alone; the thread CPU time of
each (less disturbed by a loaded host than wall time), its optimized lines and object
bytes, largest first, after a line per module with its whole optimize and emit time (the
figure to compare between two checkouts). Given a real workload's id
(examples/real_workloads.py) it first runs that workload's first step in a fresh
process, compiling first with an empty cache, and profiles every module it compiled (the
step's and the libraries'). For a module long enough to be cut into parts
(lowering.llvm.split.parts), it also prints each part's CPU time for two cores.

Run:  python examples/bench_functions.py W17 [top]     (or a dumped <key>.ll instead of W17)
"""
import os
import subprocess
import sys
import tempfile
import time

import llvmlite.binding as llvm

from lowering.llvm import compile_worker, split
from lowering.llvm.cpu import CURRENT, TRIPLE

def compile_cpu(text, machine, context):
    """(optimize, emit) thread CPU seconds of module `text`, its optimized lines and
    object bytes."""
    t0 = time.thread_time()
    mod = compile_worker.optimize(text, context, machine, TRIPLE, CURRENT.data_layout)
    t1 = time.thread_time()
    obj = compile_worker.emit_object(machine, mod)
    t2 = time.thread_time()
    lines = len(str(mod).splitlines())
    mod.close()
    return t1 - t0, t2 - t1, lines, len(obj)


def costs(text, machine, context):
    """[(cpu seconds, optimize s, emit s, entries, optimized lines, object bytes)] of each
    group of external functions of module `text` (lowering.llvm.split.pieces: with the
    internal functions they reach), largest first."""
    rows = []
    for entries, piece in split.pieces(text).items():
        opt, emit, lines, size = compile_cpu(piece, machine, context)
        rows.append((opt + emit, opt, emit, " ".join(entries) or "(whole)", lines, size))
    return sorted(rows, reverse=True)


def parts_cpu(text, machine, context):
    """Thread CPU seconds of each part of module `text` when cut for two cores
    (lowering.llvm.split.parts), or None if it is not cut."""
    parts = split.parts(text, 2)
    if len(parts) == 1:
        return None
    return [sum(compile_cpu(p, machine, context)[:2]) for p in parts]


def dump_workload(key, directory):
    """The modules (pre-optimization text files) of workload `key`'s first step."""
    env = dict(os.environ, TRACER_DUMP_DIR=directory, TRACER_BACKGROUND_COMPILE="0",
               TRACER_CACHE_DIR=os.path.join(directory, "cache"))
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "bench_real.py"), "--worker", key,
                    "--lib", "tracer", "--steps", "1"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return [os.path.join(directory, f) for f in os.listdir(directory)
            if f.endswith(".ll") and not f.endswith(".opt.ll")]


def main(source, top=25):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    machine = compile_worker.machine_for(CURRENT.name, CURRENT.features)
    context, rows = llvm.create_context(), []
    with tempfile.TemporaryDirectory() as d:
        for path in [source] if source.endswith(".ll") else dump_workload(source, d):
            with open(path) as f:
                text = f.read()
            rows += costs(text, machine, context)
            opt, emit, lines, _ = compile_cpu(text, machine, context)
            cut = parts_cpu(text, machine, context)
            print(f"{os.path.basename(path)[:12]}: {text.count(chr(10))} lines ({lines} "
                  f"optimized), whole {opt + emit:.2f} s of cpu (optimize {opt:.2f}, emit "
                  f"{emit:.2f})" + ("" if cut is None else "; cut for two cores: " +
                                    ", ".join(f"{t:.2f}" for t in cut) + " s"))
    rows.sort(reverse=True)
    print(f"{source}: {len(rows)} groups of entries, cpu {sum(r[0] for r in rows):.2f} s (optimize "
          f"{sum(r[1] for r in rows):.2f}, emit {sum(r[2] for r in rows):.2f})\n"
          f"| entries | cpu ms | optimize ms | emit ms | optimized lines | object bytes |\n"
          f"| --- | --- | --- | --- | --- | --- |")
    for total, opt, emit, name, lines, size in rows[:top]:
        print(f"| {name} | {total * 1e3:.0f} | {opt * 1e3:.0f} | {emit * 1e3:.0f} | {lines} "
              f"| {size} |")


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
