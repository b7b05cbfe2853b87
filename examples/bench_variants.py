"""Variants of one jitted training step, side by side, to find cliffs: a 4-layer MLP (256
wide, batch 128) with SGD, for each parameter dtype (float32, bfloat16, float16) and
activation (tanh, relu, gelu, sigmoid). Each variant is a new structure, so it prints the
first call (trace + compile + run, this process's disk cache as it is) and the median of
`steps` later steps. A variant far slower than its neighbours is a cliff.

Run:  python examples/bench_variants.py [steps]
"""
import statistics
import sys
import time

import numpy as np

import tracer
import tracer.numpy as tnp

ACTIVATIONS = {"tanh": tnp.tanh, "relu": lambda h: tnp.maximum(h, 0),
               "gelu": tracer.nn.gelu, "sigmoid": tracer.nn.sigmoid}
DTYPES = [np.float32, tnp.bfloat16, np.float16]


def sgd_step(act):
    def loss(params, x, y):
        h = x
        for w in params:
            h = act(h @ w)
        return tnp.mean((h - y) ** 2)

    def step(params, x, y):
        return [w - 0.1 * g for w, g in zip(params, tracer.grad(loss)(params, x, y))]
    return tracer.jit(step)


def time_variant(dtype, act, steps, width=256, depth=4, batch=128):
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((width, width)) * 0.05).astype(dtype) for _ in range(depth)]
    x, y = (rng.standard_normal((batch, width)).astype(dtype) for _ in range(2))
    step = sgd_step(act)
    t0 = time.perf_counter()
    params = step(params, x, y)
    first = time.perf_counter() - t0
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        params = step(params, x, y)
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    print("| dtype | activation | first call | step |\n| --- | --- | --- | --- |")
    for dtype in DTYPES:
        for name, act in ACTIVATIONS.items():
            first, step = time_variant(dtype, act, n)
            print(f"| {np.dtype(dtype).name} | {name} | {first * 1e3:.0f} ms | "
                  f"{step * 1e3:.2f} ms |", flush=True)
