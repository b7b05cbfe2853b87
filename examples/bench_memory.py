"""The llvm backend's memory plan of each real workload's jitted step
(examples/real_workloads.py), without compiling it: how many bytes its temporaries would
take one buffer each, how many the liveness plan's arena takes (lowering/llvm/liveness.py),
how many temporaries write in place over one that dies where they are made, and how many
outputs `donate_argnums` could write into their arguments, and how many groups are a
kernel with epilogues, a kernel alone, a loop (lowering/llvm/epilogues.py). Takes seconds: it traces,
optimizes, partitions and schedules, but runs no LLVM (peak RSS of a real run:
examples/bench_real.py).

Run:  python examples/bench_memory.py [--only W17,W18]
"""
import argparse
import os
import sys
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_workloads  # noqa: E402


class _Traced(Exception):
    """Raised by the recording jit's first call, with the step's schedule and plan."""


def _recording_lib():
    """tracer's Lib whose jit, on its first call, schedules and plans the step, then stops."""
    import tracer
    from lowering.llvm import liveness, program, schedule
    from lowering.settings import settings

    def jit(fun, **_):
        def first_call(*args):
            g = program.optimize(tracer.make_graph(fun)(*args))
            sched = schedule.Schedule(schedule.partition(g), settings.num_threads,
                                      settings.parallel_ns)
            raise _Traced(g, sched, liveness.plan(sched))
        return first_call
    return SimpleNamespace(**{**vars(real_workloads.tracer_lib()), "jit": jit})


def figures(workload):
    """(nodes, temporaries, their bytes one buffer each, the arena's bytes, temporaries
    written in place, outputs an argument could hold) of one workload's step."""
    from lowering.llvm.buffers import nbytes
    run, state = workload.setup(_recording_lib(), np.random.default_rng(0))
    try:
        run(state)
    except _Traced as traced:
        g, sched, plan = traced.args
    temps = [(j, s) for j, s in enumerate(sched.specs) if plan.offsets[j] is not None]
    nfixed = len(g.invars) + len(g.constvars)
    made = {}
    for step in sched.steps:
        for c in step.calls:
            n = len(c.group.leaves)
            for r in c.buffers[n:]:
                made[r] = c.buffers[:n]
    in_place = sum(any(k >= nfixed and plan.offsets[k - nfixed] == plan.offsets[j]
                       for k in made.get(nfixed + j, ())) for j, _ in temps)
    kinds = [c.group.kind for step in sched.steps for c in step.calls]
    return (len(g.nodes), len(temps), sum(nbytes(s) for _, s in temps), plan.size, in_place,
            sum(bool(d) for d in plan.donors),
            " / ".join(str(kinds.count(k)) for k in ("epilogue", "kernel", "loop")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="workload ids, e.g. W17,W18")
    only = set(filter(None, ap.parse_args().only.split(",")))
    print("| id | nodes | temporaries | one buffer each | liveness arena | ratio | in place "
          "| outputs an argument could hold | groups: epilogue / kernel / loop |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for w in real_workloads.WORKLOADS:
        if only and w.key not in only:
            continue
        nodes, count, unshared, arena, in_place, donatable, groups = figures(w)
        print(f"| {w.key} | {nodes} | {count} | {unshared / 2**20:.1f} MiB | "
              f"{arena / 2**20:.1f} MiB | {arena / max(unshared, 1):.2f} | {in_place} | "
              f"{donatable} | {groups} |")


if __name__ == "__main__":
    main()
