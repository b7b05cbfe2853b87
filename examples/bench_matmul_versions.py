"""Two versions of the matmul library in one process: this checkout's and another's,
called alternately on the same operands, with the median of the pairs' time ratios.

Why: a change to the matmul kernel moves W18's step by a few percent, and this 2-vCPU
shared host drifts by 15-30% between processes (`bench_steps.py` run in each checkout in
turn could not tell a 5% change from noise). Here both libraries run in one process,
call by call, so the drift falls on both alike. Each checkout generates its library's
LLVM IR (a child process with that checkout on its path); this process compiles and
loads both (their symbols differ: the name holds a digest of the source) and calls the
pack and row functions directly (matmul.matmul_ir), on one thread or split in two halves
between this thread and a helper, as the pool would. Results are checked against NumPy.

Run:  python examples/bench_matmul_versions.py --against <other checkout>
          [--shapes 512x1024x1024,256x512x10] [--storages nn,nt,tn] [--threads 1,2]
          [--reps 40] [--dtype float32]
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from lowering.llvm import matmul, target  # noqa: E402

_CHILD = """
import json, sys
import numpy as np
from lowering.llvm import matmul, matmul_shared
from lowering.llvm.cpu import CURRENT
import ml_dtypes
dtype = np.dtype(ml_dtypes.bfloat16 if sys.argv[1] == "bfloat16" else sys.argv[1])
name = matmul_shared.symbol(dtype).rsplit(".", 1)[0]
plans = {s: [matmul.pack_plan(1, k, n, dtype, s[1] == "t")
             + (matmul.scratch_bytes(1, m, k, n, dtype),)
             for m, k, n in json.loads(sys.argv[2])] for s in matmul.STORAGES}
text = matmul_shared.library(name, CURRENT.isa)[2]()
print(json.dumps({"name": name, "plans": plans, "text": text}))
"""


def library(checkout, dtype, shapes):
    """(symbol base, {storage: [(pack rows, pack items, scratch bytes) per shape]}, the
    loaded module) of `checkout`'s matmul library for `dtype`."""
    env = {**os.environ, "PYTHONPATH": checkout}
    out = subprocess.run([sys.executable, "-c", _CHILD, np.dtype(dtype).name, json.dumps(shapes)],
                         env=env, capture_output=True, text=True, cwd=checkout)
    if out.returncode:
        sys.exit(f"{checkout}: could not generate its matmul library:\n{out.stderr[-2000:]}")
    got = json.loads(out.stdout)
    return got["name"], got["plans"], target.load(got["text"])


P, I = ctypes.c_void_p, ctypes.c_int64


class Version:
    """One checkout's library, callable on one product shape and storage."""

    def __init__(self, checkout, dtype, shapes):
        self.checkout = checkout
        self.name, self.plans, self.loaded = library(checkout, dtype, shapes)

    def bind(self, storage, index, a, b, c, threads, helper):
        """call(): C = A @ B by this version (the pack, then the rows), on `threads`
        (split in two halves, one on `helper`, as the pool splits them)."""
        pack = self.loaded.function(f"{self.name}.{storage}_pack", None, P, P, I, I, I, I, I, I)
        rows = self.loaded.function(f"{self.name}.{storage}", None, P, P, P, I, I, I, I, I, I)
        prow, items, nbytes = self.plans[storage][index]
        scratch = np.empty(max(nbytes, 1), np.uint8)
        m, n = c.shape
        k = a.shape[0] if storage[0] == "t" else a.shape[1]
        pa, pb, pc, ps = a.ctypes.data, b.ctypes.data, c.ctypes.data, scratch.ctypes.data
        mr = matmul.tile_rows(c.dtype)

        def split(fn, hi, align):
            if threads == 1:
                return fn(0, hi)
            mid = hi // 2 // align * align
            other = helper.submit(fn, mid, hi)
            fn(0, mid)
            other.result()

        def call():
            split(lambda lo, hi: pack(pb, ps, 1, k, n, prow, lo, hi), items, 1)
            split(lambda lo, hi: rows(pa, ps, pc, lo, hi, 1, m, k, n), m, mr)
        call.scratch = scratch          # kept alive with the function
        return call


def operands(storage, m, k, n, dtype, rng):
    """(A and B as stored, NumPy's product): small integers for integer dtypes (their
    products wrap, as NumPy's do), normals otherwise."""
    if np.issubdtype(dtype, np.integer):
        a, b = (rng.integers(-3, 4, size).astype(dtype) for size in ((m, k), (k, n)))
        ref = (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)
    else:
        a, b = (rng.standard_normal(size).astype(dtype) for size in ((m, k), (k, n)))
        ref = a.astype(np.float64) @ b.astype(np.float64)
    stored = [np.ascontiguousarray(x.T) if t == "t" else x for x, t in zip((a, b), storage)]
    return stored, ref


def compare(versions, storage, index, shape, dtype, threads, reps, helper):
    """Median time of each version and the median (and quartiles) of the pairs' ratios."""
    (a, b), ref = operands(storage, *shape, dtype, np.random.default_rng(index))
    outs = [np.empty((shape[0], shape[2]), dtype) for _ in versions]
    calls = [v.bind(storage, index, a, b, c, threads, helper) for v, c in zip(versions, outs)]
    for call, out in zip(calls, outs):
        call()
        call()
        exact = np.issubdtype(dtype, np.integer)
        if not np.allclose(out.astype(np.float64), ref, rtol=0 if exact else 1e-2,
                           atol=0 if exact else 1e-2 * np.sqrt(shape[1])):
            sys.exit(f"{storage} {shape}: a version's product differs from NumPy's")
    times, ratios = [[], []], []
    for rep in range(reps):
        order = (0, 1) if rep % 2 == 0 else (1, 0)
        took = {}
        for i in order:
            t0 = time.perf_counter()
            calls[i]()
            took[i] = time.perf_counter() - t0
        for i in (0, 1):
            times[i].append(took[i])
        ratios.append(took[0] / took[1])
    q = statistics.quantiles(ratios, n=4)
    return [statistics.median(t) for t in times], (q[0], statistics.median(ratios), q[2])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="the other checkout's directory")
    ap.add_argument("--shapes", default="512x1024x1024,256x512x10",
                    help="products m x k x n, comma separated")
    ap.add_argument("--storages", default="nn,nt,tn", help="A's and B's storage: n as is, "
                    "t transposed")
    ap.add_argument("--threads", default="1,2", help="1 and/or 2")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--dtype", default="float32")
    opts = ap.parse_args(argv)
    shapes = [tuple(int(x) for x in s.split("x")) for s in opts.shapes.split(",")]
    dtype = np.dtype(ml_dtypes.bfloat16 if opts.dtype == "bfloat16" else opts.dtype)
    versions = [Version(HERE, dtype, shapes), Version(os.path.abspath(opts.against), dtype,
                                                      shapes)]
    print(f"this checkout ({HERE}) against {versions[1].checkout}, {opts.dtype}; ratio: this "
          "one's time / the other's, median [quartiles] of alternating pairs")
    print("| product | storage | threads | this | other | ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    with ThreadPoolExecutor(1) as helper:
        for index, shape in enumerate(shapes):
            for storage in opts.storages.split(","):
                for threads in (int(t) for t in opts.threads.split(",")):
                    (t0, t1), (q1, med, q3) = compare(versions, storage, index, shape,
                                                       dtype, threads, opts.reps, helper)
                    print(f"| {'x'.join(map(str, shape))} | {storage} | {threads} | "
                          f"{t0 * 1e3:.3f} ms | {t1 * 1e3:.3f} ms | "
                          f"{med:.3f} [{q1:.3f}, {q3:.3f}] |")


if __name__ == "__main__":
    main()
