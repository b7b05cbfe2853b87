"""The small kernels of W19's HMC step (examples/real_workloads.py), one at a time: the
matvecs of a (2000, 32) design matrix in both layouts, the logistic log density's
gradient and its logaddexp, and reductions of 2000 short rows of other lengths, called
once and 1000 times inside a fori_loop (per-iteration time), beside jax.jit when jax is
installed.

Run:  TRACER_NUM_THREADS=1 python examples/bench_short_rows.py [--calls 30]
"""
import argparse
import time

import numpy as np

import tracer
import tracer.numpy as tnp


def median_us(f, args, calls, per=1):
    """Median time of a call of f(*args) (after one call), divided by `per`."""
    f(*args)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return 1e6 * sorted(times)[len(times) // 2] / per


def kernels(lib, xp, x, y):
    """(name, function of one array, its argument) of each kernel, written with numpy
    module `xp`."""
    def logp(w):
        z = x @ w
        return xp.sum(y * z - xp.logaddexp(0.0, z)) - 0.5 * xp.sum(w * w)
    w, v, z = np.zeros(32, np.float32), np.ones(2000, np.float32), np.zeros(2000, np.float32)
    rows = [np.ones((2000, n), np.float32) for n in (8, 100, 256)]
    return ([("x @ w, (2000, 32) @ (32,)", lambda w: x @ w, w),
             ("v @ x, (2000,) @ (2000, 32)", lambda v: v @ x, v),
             ("grad of the logistic log density", lib.grad(logp), w),
             ("sum of logaddexp(0, z), z (2000,)", lambda z: xp.sum(xp.logaddexp(0.0, z)), z),
             ("max over rows of (2000, 32)", lambda x: xp.max(x, axis=-1), x)] +
            [(f"sum over rows of {r.shape}", lambda r: xp.sum(r, axis=-1), r) for r in rows])


def looped(lib, xp, f):
    """1000 steps of fori_loop over f (the carry moves, by little enough that every
    kernel's values stay in range)."""
    def step(i, c):
        return c + 1e-7 * xp.sum(f(c))
    return lib.jit(lambda c: lib.lax.fori_loop(0, 1000, step, c))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=30)
    calls = p.parse_args().calls
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2000, 32)) / np.sqrt(32)).astype(np.float32)
    y = (rng.random(2000) < 0.5).astype(np.float32)
    libs = [(tracer, tnp)]
    try:
        import jax
        import jax.numpy as jnp
        libs.append((jax, jnp))
    except ImportError:
        pass
    print("per call / per step of a 1000-step fori_loop, median of the calls")
    print("| kernel | " + " | ".join(f"{lib.__name__} one call | {lib.__name__} loop step"
                                     for lib, _ in libs) + " |")
    print("|---" * (1 + 2 * len(libs)) + "|")
    table = [kernels(lib, xp, x, y) for lib, xp in libs]
    for k, (name, _, arg) in enumerate(table[0]):
        cells = []
        for (lib, xp), ks in zip(libs, table):
            one, loop = lib.jit(ks[k][1]), looped(lib, xp, ks[k][1])
            cells.append(f"{median_us(lambda a: np.asarray(one(a)), (arg,), calls):.1f} us")
            per_step = median_us(lambda a: np.asarray(loop(a)), (arg,), max(calls // 5, 3), 1000)
            cells.append(f"{per_step:.1f} us")
        print(f"| {name} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
