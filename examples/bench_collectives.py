"""One psum inside a jitted function against a raw mpi4py Allreduce of the same bytes.

Run:  mpiexec -n 2 python examples/bench_collectives.py [--sizes 4K,1M] [--repeats 7]

Each figure is the median (and the best) over `--repeats` runs of the mean time of a
batch of calls (rank 0's clock, after a barrier), raw and jitted in turns; the jitted call
includes dispatch, the input checks, the compiled program's own call of MPI_Allreduce
(lowering/llvm/mpi_native.py) and a new output array per call.
"""
import argparse
import time

import numpy as np

import tracer
from tracer import lax


def _bytes(text):
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1].upper(), 1)
    return int(text.rstrip("KkMm")) * scale


def timed(fns, calls, repeats, comm):
    """Median and best of `repeats` mean call times of each of `fns`, run in turns so a
    burst of load on the shared host hits all alike."""
    means = [[] for _ in fns]
    for _ in range(repeats):
        for fn, got in zip(fns, means):
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            got.append((time.perf_counter() - start) / calls)
    return [(float(np.median(m)), min(m)) for m in means]


def main(sizes, repeats):
    tracer.distributed.initialize()
    from mpi4py import MPI
    comm, rank = MPI.COMM_WORLD, tracer.distributed.process_index()
    mesh = tracer.make_mesh((tracer.distributed.process_count(),), ("x",))
    f = tracer.jit(tracer.shard_map(lambda b: lax.psum(b, "x"), mesh,
                                    in_specs=tracer.P(), out_specs=tracer.P()))
    if rank == 0:
        print(f"{comm.Get_size()} ranks; float32 psum per call, median of {repeats} runs")
        print(f"{'bytes':>9} {'raw Allreduce':>14} {'jit(psum)':>10} {'overhead':>10} "
              f"{'ratio':>6}")
    for size in sizes:
        x = np.ones(size // 4, np.float32)
        out = np.empty_like(x)
        calls = max(10, min(2000, (64 << 20) // size))
        np.testing.assert_array_equal(np.asarray(f(x)), x * comm.Get_size())
        (raw, raw_best), (jitted, jit_best) = timed(
            [lambda: comm.Allreduce(x, out, MPI.SUM), lambda: f(x)], calls, repeats, comm)
        if rank == 0:
            print(f"{size:>9} {raw * 1e6:>11.1f} us {jitted * 1e6:>7.1f} us "
                  f"{(jitted - raw) * 1e6:>7.1f} us {jitted / raw:>5.2f}x   (best: "
                  f"{raw_best * 1e6:.1f} / {jit_best * 1e6:.1f} us)")

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4K,1M", help="payload bytes, comma-separated")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    main([_bytes(s) for s in args.sizes.split(",")], args.repeats)
