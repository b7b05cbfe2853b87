"""Train a small MLP on two interleaved spirals with plain SGD.

The whole training step is `tracer.jit(tracer.value_and_grad(loss))`: the forward and
backward passes are one graph, traced once and compiled (the default backend), then
called every step. The printout shows the loss falling and the size of the backward
graph that autodiff built.

Run:  python examples/mlp.py [--steps 300]
"""
import argparse

import numpy as np

import tracer
import tracer.numpy as tnp


def spirals(n_per_class, rng, noise=0.08):
    """Two interleaved 2-D spirals: points (n, 2) float32 and labels (n,) in {0, 1}."""
    t = np.sqrt(rng.uniform(0.05, 1.0, n_per_class)) * 2 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (2 * np.pi)
    x = np.concatenate([arm, -arm]) + rng.normal(0, noise, (2 * n_per_class, 2))
    y = np.concatenate([np.zeros(n_per_class, np.int64), np.ones(n_per_class, np.int64)])
    return x.astype(np.float32), y


def init_params(sizes, rng):
    """Glorot-uniform weights, zero biases, as a list of {"w", "b"} dicts."""
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        lim = np.sqrt(6.0 / (m + n))
        params.append({"w": rng.uniform(-lim, lim, (m, n)).astype(np.float32),
                       "b": np.zeros(n, np.float32)})
    return params


def predict(params, x):
    for layer in params[:-1]:
        x = tnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, onehot):
    """Mean softmax cross-entropy."""
    logp = tracer.nn.log_softmax(predict(params, x), axis=-1)
    return -tnp.mean(tnp.sum(logp * onehot, axis=-1))


def main(steps, lr=0.5):
    rng = np.random.default_rng(0)
    x, y = spirals(100, rng)
    onehot = np.eye(2, dtype=np.float32)[y]
    params = init_params([2, 32, 32, 2], rng)

    backward = tracer.make_graph(tracer.grad(loss))(params, x, onehot)
    print(f"backward graph of grad(loss): {len(backward.nodes)} nodes "
          f"({len(tracer.make_graph(loss)(params, x, onehot).nodes)} in the forward)")

    step = tracer.jit(tracer.value_and_grad(loss))
    for i in range(steps + 1):
        value, grads = step(params, x, onehot)
        params = [{k: p[k] - lr * g[k] for k in p} for p, g in zip(params, grads)]
        if i % (steps // 10) == 0:
            print(f"step {i:4d}  loss {float(value):.4f}")
    accuracy = np.mean(np.argmax(np.asarray(predict(params, x)), axis=-1) == y)
    print(f"training accuracy: {accuracy:.1%}")
    return float(value)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    main(parser.parse_args().steps)
