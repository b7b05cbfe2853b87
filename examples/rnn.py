"""Train a small recurrent network with `tracer.lax.scan` to predict the next sample of
noisy sine waves.

The cell runs over the sequence as one `scan` node (its body a region), so the graph is
the same size for 10 steps or 10,000; the training step is
`tracer.jit(tracer.value_and_grad(loss))`, whose backward is a reverse scan over the
hidden states the forward scan stored. The printout shows the loss falling.

Run:  python examples/rnn.py [--steps 200] [--length 40]
"""
import argparse

import numpy as np

import tracer
import tracer.numpy as tnp
from tracer import lax


def waves(batch, length, rng):
    """(inputs, targets): sine waves of random phase and frequency, shape (length, batch,
    1), the targets one sample ahead."""
    t = np.arange(length + 1)[:, None]
    phase, freq = rng.uniform(0, 2 * np.pi, batch), rng.uniform(0.1, 0.3, batch)
    x = np.sin(freq * t + phase) + rng.normal(0, 0.02, (length + 1, batch))
    x = x[..., None].astype(np.float32)
    return x[:-1], x[1:]


def init_params(hidden, rng):
    scale = 1 / np.sqrt(hidden)
    return {"wx": rng.normal(0, 1, (1, hidden)).astype(np.float32),
            "wh": rng.normal(0, scale, (hidden, hidden)).astype(np.float32),
            "b": np.zeros(hidden, np.float32),
            "wo": rng.normal(0, scale, (hidden, 1)).astype(np.float32)}


def loss(params, xs, targets):
    """Mean squared error of the one-step-ahead predictions over the whole sequence."""
    def cell(h, x):
        h = tnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wo"]
    h0 = tnp.zeros((xs.shape[1], params["wh"].shape[0]), np.float32)
    _, predictions = lax.scan(cell, h0, xs)
    return tnp.mean((predictions - targets) ** 2)


def main(steps, length, lr=0.1, hidden=16):
    rng = np.random.default_rng(0)
    params = init_params(hidden, rng)
    xs, targets = waves(32, length, rng)
    graph = tracer.make_graph(tracer.grad(loss))(params, xs, targets)
    print(f"grad(loss) over {length} time steps: {len(graph.nodes)} nodes, "
          f"{[n.kernel for n in graph.nodes].count('scan')} of them scans")

    step = tracer.jit(tracer.value_and_grad(loss))
    first = None
    for i in range(steps + 1):
        value, grads = step(params, xs, targets)
        params = {k: p - lr * grads[k] for k, p in params.items()}
        first = float(value) if first is None else first
        if i % max(steps // 10, 1) == 0:
            print(f"step {i:4d}  loss {float(value):.5f}")
    print(f"loss fell from {first:.5f} to {float(value):.5f}")
    assert float(value) < first / 2
    return float(value)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--length", type=int, default=40)
    args = parser.parse_args()
    main(args.steps, args.length)
