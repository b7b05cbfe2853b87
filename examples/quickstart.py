"""Quickstart: trace a function, look at its graph, differentiate it, jit it.

Run:  python examples/quickstart.py
"""
import numpy as np

import tracer
import tracer.numpy as tnp


def loss(w, x):
    """A tiny model: mean squared tanh activation."""
    return tnp.mean(tnp.tanh(x @ w) ** 2)


rng = np.random.default_rng(0)
w = rng.standard_normal((3, 2)).astype(np.float32)
x = rng.standard_normal((4, 3)).astype(np.float32)

print("1. The traced graph of loss (every node names a kernel):")
print(tracer.make_graph(loss)(w, x))

print("\n2. Its gradient is itself a graph (forward + backward kernels):")
print(tracer.make_graph(tracer.grad(loss))(w, x))

fast_loss = tracer.jit(loss)
fast_grad = tracer.jit(tracer.grad(loss))
print("\n3. Jitted results (eager NumPy gives the same):")
print("   loss      =", fast_loss(w, x), " eager:", loss(w, x))
print("   grad[0]   =", fast_grad(w, x)[0])

f = tracer.jit(lambda v: tnp.tanh(v) * tracer.nn.sigmoid(v) + 0.5 * v * v)
v = np.linspace(-2, 2, 8, dtype=np.float32)
lowered = f.lower(v)
print(f"\n4. A small fused function, lowered by the {lowered.backend!r} backend:")
print(lowered.as_text())
print("   result:", f(v))
