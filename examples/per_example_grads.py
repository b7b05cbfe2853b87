"""Per-example gradient norms of a small MLP, the way differential privacy and data
debugging need them: `jit(vmap(grad(loss), in_axes=(None, 0, 0)))`.

`grad(loss)` is the gradient for one example; `vmap` turns its graph into one batched
graph (the parameters are shared, so `in_axes=None` for them): each matmul of the
backward pass becomes one batched matmul, never a loop over the examples. The result is
checked against a Python loop of `grad(loss)` over the batch.

Run:  python examples/per_example_grads.py [--batch 64]
"""
import argparse
import time

import numpy as np

import tracer
import tracer.numpy as tnp
from tracer.vmap import vmap


def init_params(sizes, rng):
    return [(rng.normal(0, 1 / np.sqrt(m), (m, n)).astype(np.float32),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def loss(params, x, y):
    """Softmax cross-entropy of ONE example (x: features, y: one-hot label)."""
    h = x
    for w, b in params[:-1]:
        h = tnp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    m = tnp.max(logits)
    logp = logits - m - tnp.log(tnp.sum(tnp.exp(logits - m)))
    return -tnp.sum(logp * y)


def norms(grads):
    """Per-example L2 norm over every parameter: grads' leaves have a leading batch axis."""
    return tnp.sqrt(sum(tnp.sum(tnp.reshape(g * g, (g.shape[0], -1)), axis=1)
                        for layer in grads for g in layer))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    params = init_params([20, 32, 32, 5], rng)
    x = rng.normal(size=(args.batch, 20)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, args.batch)]

    per_example = tracer.jit(lambda p, x, y: norms(vmap(tracer.grad(loss), in_axes=(
        None, 0, 0))(p, x, y)))
    got = per_example(params, x, y)

    one = tracer.jit(tracer.grad(loss))
    one(params, x[0], y[0])                  # compile both before timing
    start = time.perf_counter()
    want = np.array([np.sqrt(sum(np.sum(g * g) for layer in one(params, xi, yi)
                                 for g in layer)) for xi, yi in zip(x, y)])
    loop_s = time.perf_counter() - start
    start = time.perf_counter()
    per_example(params, x, y)
    vmap_s = time.perf_counter() - start

    graph = tracer.make_graph(vmap(tracer.grad(loss), in_axes=(None, 0, 0)))(params, x, y)
    kernels = [n.kernel for n in graph.nodes]
    print(f"per-example gradient norms (first 5 of {args.batch}): {np.round(got[:5], 4)}")
    print(f"largest difference from a Python loop of grad: {np.max(np.abs(got - want)):.2e}")
    print(f"batched graph: {len(kernels)} nodes, {kernels.count('matmul')} matmuls, "
          f"{'no loop' if 'scan' not in kernels else 'a loop'}")
    print(f"time: jit(vmap(grad)) {vmap_s * 1e3:.2f} ms, loop of jit(grad) "
          f"{loop_s * 1e3:.2f} ms")
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main()
