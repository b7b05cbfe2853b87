"""Train a small convolutional network on a synthetic image task it generates.

Each image is noise plus one of four strokes at a random place: a horizontal bar, a
vertical bar, a diagonal or a square outline; the network says which. Two 3x3
convolutions (NHWC, as `tracer.lax.conv_general_dilated` with JAX's dimension numbers),
ReLU, 2x2 max pooling, dropout drawn with `tracer.random` from a key passed into the
step, and a dense layer; the training step is `tracer.jit(tracer.value_and_grad(loss))`,
one native program on the llvm backend (convolutions, pooling and their gradients
included). Each epoch prints its loss, accuracy and speed in images/s.

Run:  python examples/cnn.py [--epochs 3] [--train 4096] [--batch 64] [--size 28]
"""
import argparse
import time

import numpy as np

import tracer
import tracer.numpy as tnp
from tracer import lax, nn
from tracer import random as trandom

CLASSES = ("horizontal", "vertical", "diagonal", "square")
DN = ("NHWC", "HWIO", "NHWC")


def images(n, size, rng):
    """(x (n, size, size, 1) float32, labels (n,)): one stroke per image, in noise."""
    x = rng.normal(0, 0.5, (n, size, size)).astype(np.float32)
    labels = rng.integers(0, len(CLASSES), n)
    span = max(size // 3, 3)
    for img, label in zip(x, labels):
        r, c = rng.integers(0, size - span, 2)
        if label == 0:
            img[r + span // 2, c:c + span] += 1
        elif label == 1:
            img[r:r + span, c + span // 2] += 1
        elif label == 2:
            img[r + np.arange(span), c + np.arange(span)] += 1
        else:
            img[r, c:c + span] += 1
            img[r + span - 1, c:c + span] += 1
            img[r:r + span, c] += 1
            img[r:r + span, c + span - 1] += 1
    return x[..., None], labels


def init_params(size, rng):
    def he(*shape):
        return (rng.normal(0, 1, shape) * np.sqrt(2 / np.prod(shape[:-1]))).astype(np.float32)
    flat = (size // 4) ** 2 * 32
    return {"w1": he(3, 3, 1, 16), "b1": np.zeros(16, np.float32),
            "w2": he(3, 3, 16, 32), "b2": np.zeros(32, np.float32),
            "w3": he(flat, len(CLASSES)) * 0.1, "b3": np.zeros(len(CLASSES), np.float32)}


def logits(params, x, key=None, rate=0.25):
    """The network; with a key, dropout (rate `rate`) before the dense layer."""
    h = nn.relu(lax.conv_general_dilated(x, params["w1"], (1, 1), "SAME",
                                         dimension_numbers=DN) + params["b1"])
    h = nn.max_pool(h, (2, 2), (2, 2))
    h = nn.relu(lax.conv_general_dilated(h, params["w2"], (1, 1), "SAME",
                                         dimension_numbers=DN) + params["b2"])
    h = tnp.reshape(nn.max_pool(h, (2, 2), (2, 2)), (x.shape[0], -1))
    if key is not None:
        keep = trandom.bernoulli(key, 1 - rate, h.shape)
        h = tnp.where(keep, h / (1 - rate), 0)
    return h @ params["w3"] + params["b3"]


def loss(params, x, labels, key):
    out = nn.log_softmax(logits(params, x, key))
    return -tnp.mean(tnp.sum(out * nn.one_hot(labels, len(CLASSES)), axis=-1))


def main(epochs, train, batch, size, lr=0.01, momentum=0.9):
    rng = np.random.default_rng(0)
    x, labels = images(train, size, rng)
    x_test, labels_test = images(512, size, rng)
    params = init_params(size, rng)
    velocity = {k: np.zeros_like(p) for k, p in params.items()}
    step = tracer.jit(tracer.value_and_grad(loss))
    predict = tracer.jit(lambda p, x: tnp.argmax(logits(p, x), axis=-1))
    key, first = trandom.PRNGKey(0), None
    for epoch in range(1, epochs + 1):
        order, losses, seen, t0 = rng.permutation(train), [], 0, None
        for i in range(0, train - batch + 1, batch):
            idx = order[i:i + batch]
            key, sub = trandom.split(key)
            value, grads = step(params, x[idx], labels[idx], sub)
            for k in params:        # SGD with momentum
                velocity[k] = momentum * velocity[k] - lr * grads[k]
                params[k] = params[k] + velocity[k]
            losses.append(float(value))
            if t0 is None:          # the first step of an epoch compiles (once) and warms up
                t0 = time.perf_counter()
            else:
                seen += batch
        speed = seen / (time.perf_counter() - t0) if seen else float("nan")
        accuracy = float(np.mean(predict(params, x_test) == labels_test))
        first = losses[0] if first is None else first
        print(f"epoch {epoch}/{epochs}  loss {np.mean(losses):.4f}  test accuracy "
              f"{accuracy:.3f}  {speed:,.0f} images/s")
    print(f"loss fell from {first:.4f} to {losses[-1]:.4f}; test accuracy {accuracy:.3f} "
          f"({len(CLASSES)} classes)")
    assert losses[-1] < first
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--size", type=int, default=28)
    args = parser.parse_args()
    main(args.epochs, args.train, args.batch, args.size)
