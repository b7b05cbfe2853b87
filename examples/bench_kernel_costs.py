"""What the correctness fixes cost on hot paths: fused float -> int conversion loops (now
saturating, NaN -> 0, one answer on every backend), `.at[]` scatters (now one kernel that
applies updates in index order), and the check a recycled output passes before reuse.

    python examples/bench_kernel_costs.py [--only convert,scatter,recycle]

Each figure is the minimum over many calls (one thread for the conversions); compare two
checkouts by running this script in each, alternated, on the same machine.
"""
import argparse
import os
import sys
import time
import timeit

import numpy as np


def best(f, args, calls):
    f(*args)
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return min(times) * 1e6


def conversions(tracer, tnp):
    x32 = (np.random.default_rng(0).normal(size=1 << 16) * 1e3).astype(np.float32)
    x64 = x32.astype(np.float64)
    cases = {
        "f32->i32": (lambda x: tnp.astype(x * 1.5, np.int32), x32),
        "f32->u32": (lambda x: tnp.astype(x * 1.5, np.uint32), x32),
        "f32->u8": (lambda x: tnp.astype(x * 1.5, np.uint8), x32),
        "f64->i64": (lambda x: tnp.astype(x * 1.5, np.int64), x64),
        "f64->u64": (lambda x: tnp.astype(x * 1.5, np.uint64), x64),
        "f32->i16->f32": (lambda x: tnp.astype(tnp.astype(x * 1.5, np.int16), np.float32) + x,
                          x32),
    }
    for name, (f, x) in cases.items():
        print(f"convert {name:14s} 65,536 items  {best(tracer.jit(f), (x,), 2000):8.1f} us")


def scatters(tracer, tnp):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1_000_000).astype(np.float32)
    i = rng.integers(0, 1_000_000, 10_000)
    v = rng.standard_normal(10_000).astype(np.float32)
    ci = np.unique(i)
    cv = v[:len(ci)]
    cases = {
        "add, traced index": (lambda x, v, i: x.at[i].add(v), (x, v, i)),
        "set, traced index": (lambda x, v, i: x.at[i].set(v), (x, cv, ci)),
        "set, constant index": (lambda x, v: x.at[ci].set(v), (x, cv)),
        "max, constant index": (lambda x, v: x.at[ci].max(v), (x, cv)),
        "grad of set": (tracer.grad(lambda x, v: (x.at[ci].set(v) * x).sum(), argnums=(0, 1)),
                        (x, cv)),
    }
    for name, (f, args) in cases.items():
        print(f"scatter {name:20s} 1M f32, 10k updates  {best(tracer.jit(f), args, 40):8.0f} us")


def recycle(tracer, tnp):
    from lowering.llvm import buffers
    outputs = buffers.Outputs([((512, 256), np.dtype(np.float32))])
    take = outputs.takers[0]
    take()
    last, refs = outputs.last, sys.getrefcount

    def refcount_only():
        o = last[0]
        if refs(o) == buffers.FREE:
            return o
    t = [min(timeit.timeit(f, number=5000) / 5000 * 1e9 for _ in range(30))
         for f in (take, refcount_only)]
    print(f"recycled output take: {t[0]:.0f} ns with the full check, {t[1]:.0f} ns for the "
          f"reference count alone")


SECTIONS = {"convert": conversions, "scatter": scatters, "recycle": recycle}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(SECTIONS))
    only = p.parse_args().only.split(",")
    os.environ.setdefault("TRACER_NUM_THREADS", "1")
    import tracer
    import tracer.numpy as tnp
    from lowering.llvm import cpu
    print(f"code for {cpu.CURRENT.name} ({cpu.CURRENT.isa}), "
          f"{os.environ['TRACER_NUM_THREADS']} thread(s)")
    for name in only:
        SECTIONS[name](tracer, tnp)


if __name__ == "__main__":
    main()
