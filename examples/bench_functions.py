"""Where a module's LLVM time goes, function by function: each external function of a
dumped module (TRACER_DUMP_DIR's <key>.ll), with the internal functions it calls (inlined
into it as in the whole module), is optimized and emitted alone; the thread CPU time of
each (less disturbed by a loaded host than wall time), its optimized lines and object
bytes, largest first. Given a real workload's id (examples/real_workloads.py) it first
runs that workload's first step in a fresh process, compiling first with an empty cache,
and profiles every module it compiled (the step's and the libraries').

Run:  python examples/bench_functions.py W17 [top]     (or a dumped <key>.ll instead of W17)
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import llvmlite.binding as llvm

from lowering.llvm import compile_worker
from lowering.llvm.cpu import CURRENT, TRIPLE

_DEFINE = re.compile(r'define (.*?)@"?([\w.$]+)"?\(')
_REF = re.compile(r'@"?([\w.$]+)')


def split(text):
    """(lines outside any function, {function name: its lines})."""
    head, funcs, cur = [], {}, None
    for line in text.splitlines():
        m = None if cur else _DEFINE.match(line)
        if m:
            cur = (m.group(2), [line])
        elif cur:
            cur[1].append(line)
            if line == "}":
                funcs[cur[0]] = cur[1]
                cur = None
        else:
            head.append(line)
    return head, funcs


def _declaration(define_line):
    line = re.sub(r"^define (internal |private )?", "declare ", define_line)
    return re.sub(r"\)[^)]*$", ")", line)


def costs(text):
    """[(cpu seconds, optimize s, emit s, name, optimized lines, object bytes)] of each
    external function of module `text` with its internal callees, largest first."""
    head, funcs = split(text)
    internal = {n for n, lines in funcs.items() if lines[0].startswith("define internal")}
    refs = {n: set(_REF.findall("\n".join(lines))) for n, lines in funcs.items()}
    machine = compile_worker.machine_for(CURRENT.name, CURRENT.features)
    context, rows = llvm.create_context(), []
    for root in (n for n in funcs if n not in internal):
        group, todo = set(), [root]
        while todo:
            n = todo.pop()
            if n not in group:
                group.add(n)
                todo += [c for c in refs[n] if c in internal]
        used = set().union(*(refs[n] for n in group)) - group
        module = "\n".join(head + [line for n in funcs if n in group for line in funcs[n]]
                           + [_declaration(funcs[n][0]) for n in used if n in funcs])
        t0 = time.thread_time()
        mod = compile_worker.optimize(module, context, machine, TRIPLE, CURRENT.data_layout)
        t1 = time.thread_time()
        obj = compile_worker.emit_object(machine, mod)
        t2 = time.thread_time()
        rows.append((t2 - t0, t1 - t0, t2 - t1, root, len(str(mod).splitlines()), len(obj)))
        mod.close()
    return sorted(rows, reverse=True)


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
    with tempfile.TemporaryDirectory() as d:
        rows = []
        for path in [source] if source.endswith(".ll") else dump_workload(source, d):
            with open(path) as f:
                rows += costs(f.read())
    rows.sort(reverse=True)
    print(f"{source}: {len(rows)} functions, cpu {sum(r[0] for r in rows):.2f} s (optimize "
          f"{sum(r[1] for r in rows):.2f}, emit {sum(r[2] for r in rows):.2f})\n"
          f"| function | cpu ms | optimize ms | emit ms | optimized lines | object bytes |\n"
          f"| --- | --- | --- | --- | --- | --- |")
    for total, opt, emit, name, lines, size in rows[:top]:
        print(f"| {name} | {total * 1e3:.0f} | {opt * 1e3:.0f} | {emit * 1e3:.0f} | {lines} "
              f"| {size} |")


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
