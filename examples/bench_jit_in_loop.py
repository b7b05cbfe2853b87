"""`jit(step)(...)` written inside a training loop, against the jitted step made once: the
cliff of a jit cache per jit object (every step traced and its code loaded from the disk
cache again), gone since every `jit(f)` of one `f` shares a cache (tracer.jit_cache).

Each run prints the median step (ms) of both forms over `steps` steps, after the first.

Run:  python examples/bench_jit_in_loop.py [steps]
      (PYTHONPATH=<another checkout> runs that checkout's tracer with this script)
"""
import statistics
import sys
import time

import numpy as np

import tracer
import tracer.numpy as tnp


def step(params, x, y):
    """One SGD step of a 4-layer tanh MLP (128 wide, batch 64)."""
    def loss(ps):
        h = x
        for w in ps:
            h = tnp.tanh(h @ w)
        return tnp.mean((h - y) ** 2)
    grads = tracer.grad(loss)(params)
    return [w - 0.1 * g for w, g in zip(params, grads)]


def median_step(steps, hoisted):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((128, 128)).astype(np.float32) * 0.1 for _ in range(4)]
    x, y = (rng.standard_normal((64, 128)).astype(np.float32) for _ in range(2))
    jitted = tracer.jit(step)
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        params = (jitted if hoisted else tracer.jit(step))(params, x, y)
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:]) * 1e3


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    print(f"jit made once: {median_step(n, True):.2f} ms a step; "
          f"jit(step) inside the loop: {median_step(n, False):.2f} ms a step")
