"""A training loop that jits its loss and takes `grad` of it outside jit, against one that
jits the whole gradient: `grad(jit(loss))` ran the gradient op by op through the NumPy
interpreter (3x slower here); it now compiles as `jit(grad(loss))`, as JAX compiles the
forward and backward passes of a jitted function.

Each run prints the median step (ms) of both forms over `steps` steps, after the first.

Run:  python examples/bench_grad_of_jit.py [steps]
      (PYTHONPATH=<another checkout> runs that checkout's tracer with this script)
"""
import statistics
import sys
import time

import numpy as np

import tracer
import tracer.numpy as tnp


def loss(params, x, y):
    """A 6-layer tanh MLP (256 wide, batch 128), mean squared error."""
    h = x
    for w in params:
        h = tnp.tanh(h @ w)
    return tnp.mean((h - y) ** 2)


def median_step(steps, gradient):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((256, 256)).astype(np.float32) * 0.05 for _ in range(6)]
    x, y = (rng.standard_normal((128, 256)).astype(np.float32) for _ in range(2))
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        grads = gradient(params, x, y)
        params = [w - np.float32(0.1) * g for w, g in zip(params, grads)]
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:]) * 1e3


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    print(f"jit(grad(loss)): {median_step(n, tracer.jit(tracer.grad(loss))):.2f} ms a step; "
          f"grad(jit(loss)): {median_step(n, tracer.grad(tracer.jit(loss))):.2f} ms a step")
