"""Real programs, written once for any JAX-like library: a char-level transformer LM trained
with Adam, a deep tanh MLP and a CNN trained with SGD, and an HMC sampler for a Bayesian
logistic regression. Each model takes a `Lib` (the library's numpy, nn, lax, random,
tree_map, jit and value_and_grad), so `examples/bench_real.py` runs the very same code
under tracer and under jax.jit, and `examples/transformer.py` trains the transformer.

A `Workload` bundles a model's jitted step with its inputs: `setup(lib, rng)` returns
`(step, state)`, and `state, loss = step(state)` runs one step, whatever the model.
"""
import functools
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import numpy as np


def tracer_lib():
    import tracer
    import tracer.numpy as tnp
    return SimpleNamespace(name="tracer", np=tnp, nn=tracer.nn, lax=tracer.lax,
                           random=tracer.random, tree_map=tracer.tree_util.tree_map,
                           jit=tracer.jit, value_and_grad=tracer.value_and_grad,
                           grad=tracer.grad)


def jax_lib():
    import jax
    import jax.numpy as jnp
    return SimpleNamespace(name="jax", np=jnp, nn=jax.nn, lax=jax.lax, random=jax.random,
                           tree_map=jax.tree_util.tree_map, jit=jax.jit,
                           value_and_grad=jax.value_and_grad, grad=jax.grad)


# ---- the char-level transformer LM ----

VOCAB = "\n" + "".join(map(chr, range(32, 127)))   # any other character reads as "?"
_INDEX = {c: i for i, c in enumerate(VOCAB)}


def encode(text):
    unknown = _INDEX["?"]
    return np.array([_INDEX.get(c, unknown) for c in text], np.int32)


def decode(tokens):
    return "".join(VOCAB[int(t)] for t in tokens)


def stdlib_text(modules=("functools", "textwrap", "string", "collections/__init__",
                         "json/decoder", "json/encoder", "heapq", "bisect", "fractions",
                         "contextlib", "dataclasses", "enum")):
    """Source files of Python's standard library, joined: text that ships with Python."""
    root = os.path.dirname(os.__file__)
    parts = []
    for name in modules:
        path = os.path.join(root, name + ".py")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                parts.append(f.read())
    return "\n".join(parts)


def init_transformer(rng, vocab=len(VOCAB), d=128, layers=2, context=64):
    def dense(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    def zeros(*shape):
        return np.zeros(shape, np.float32)

    def ones(*shape):
        return np.ones(shape, np.float32)
    blocks = [{"ln1": (ones(d), zeros(d)), "qkv": dense(d, 3 * d), "out": dense(d, d) * 0.5,
               "ln2": (ones(d), zeros(d)), "up": dense(d, 4 * d), "up_b": zeros(4 * d),
               "down": dense(4 * d, d) * 0.5, "down_b": zeros(d)} for _ in range(layers)]
    return {"embed": (rng.standard_normal((vocab, d)) * 0.1).astype(np.float32),
            "pos": (rng.standard_normal((context, d)) * 0.1).astype(np.float32),
            "blocks": blocks, "ln": (ones(d), zeros(d)), "head": dense(d, vocab)}


def _layer_norm(lib, x, scale_shift, eps=1e-5):
    scale, shift = scale_shift
    mean = lib.np.mean(x, axis=-1, keepdims=True)
    var = lib.np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / lib.np.sqrt(var + eps) * scale + shift


def transformer_logits(lib, params, tokens, heads=4):
    """Pre-norm causal transformer: tokens (B, T) int32 -> logits (B, T, vocab)."""
    xp = lib.np
    batch, length = tokens.shape
    d = params["embed"].shape[1]
    x = params["embed"][tokens] + params["pos"][:length]
    causal = np.tril(np.ones((length, length), bool))
    for blk in params["blocks"]:
        h = _layer_norm(lib, x, blk["ln1"]) @ blk["qkv"]
        q, k, v = (xp.transpose(xp.reshape(h[..., i * d:(i + 1) * d],
                                           (batch, length, heads, d // heads)), (0, 2, 1, 3))
                   for i in range(3))
        scores = q @ xp.swapaxes(k, -1, -2) / float(np.sqrt(d // heads))
        att = lib.nn.softmax(xp.where(causal, scores, -1e9), axis=-1) @ v
        x = x + xp.reshape(xp.transpose(att, (0, 2, 1, 3)), (batch, length, d)) @ blk["out"]
        h = lib.nn.gelu(_layer_norm(lib, x, blk["ln2"]) @ blk["up"] + blk["up_b"])
        x = x + h @ blk["down"] + blk["down_b"]
    return _layer_norm(lib, x, params["ln"]) @ params["head"]


def lm_loss(lib, heads=4):
    def loss(params, tokens, targets):
        logp = lib.nn.log_softmax(transformer_logits(lib, params, tokens, heads), axis=-1)
        return -lib.np.mean(lib.np.sum(logp * lib.nn.one_hot(targets, len(VOCAB)), axis=-1))
    return loss


def adam_step(lib, loss, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8):
    """One jitted training step: value_and_grad, then Adam with bias correction.
    (params, m, v, t, *batch) -> (loss, params, m, v, t); t counts steps (float32)."""
    vg = lib.value_and_grad(loss)

    def step(params, m, v, t, *batch):
        value, grads = vg(params, *batch)
        t = t + 1
        m = lib.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = lib.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
        mc, vc = 1 - lib.np.power(b1, t), 1 - lib.np.power(b2, t)
        params = lib.tree_map(lambda p, m_, v_: p - lr * (m_ / mc) / (lib.np.sqrt(v_ / vc) + eps),
                              params, m, v)
        return value, params, m, v, t
    return lib.jit(step)


def text_batches(tokens, batch, context, rng):
    """An endless stream of (inputs, next-character targets), windows at random places."""
    while True:
        starts = rng.integers(0, len(tokens) - context - 1, batch)
        windows = np.stack([tokens[s:s + context + 1] for s in starts])
        yield windows[:, :-1], windows[:, 1:]


def transformer_setup(lib, rng, d=128, heads=4, layers=2, context=64, batch=16, lr=3e-3,
                      text=None):
    params = init_transformer(rng, d=d, layers=layers, context=context)
    step = adam_step(lib, lm_loss(lib, heads), lr=lr)
    data = text_batches(encode(stdlib_text() if text is None else text), batch, context, rng)

    def run(state):
        params, m, v, t = state
        value, params, m, v, t = step(params, m, v, t, *next(data))
        return (params, m, v, t), value
    zeros = lib.tree_map(np.zeros_like, params)
    return run, (params, zeros, zeros, np.float32(0))


# ---- the deep MLP and the CNN, trained with SGD ----

def sgd_step(lib, loss, lr):
    """One jitted step: value_and_grad, then params - lr * grads."""
    vg = lib.value_and_grad(loss)

    def step(params, *batch):
        value, grads = vg(params, *batch)
        return value, lib.tree_map(lambda p, g: p - lr * g, params, grads)
    return lib.jit(step)


def deep_mlp_loss(lib):
    def loss(params, x, y):
        for w, b in params:
            x = lib.np.tanh(x @ w + b)
        return lib.np.mean((x - y) ** 2)
    return loss


def _sgd_run(lib, loss, lr, params, batch):
    step = sgd_step(lib, loss, lr)

    def run(params):
        value, params = step(params, *batch)
        return params, value
    return run, params


def deep_mlp_setup(lib, rng, layers=24, width=1024, batch=512, lr=0.1):
    params = [((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32),
               np.zeros(width, np.float32)) for _ in range(layers)]
    x = rng.standard_normal((batch, width)).astype(np.float32)
    y = np.tanh(rng.standard_normal((batch, width))).astype(np.float32)
    return _sgd_run(lib, deep_mlp_loss(lib), lr, params, (x, y))


def cnn_setup(lib, rng, lr=0.01):
    """W15's CNN (examples/bench_workloads.py), batch 64, one SGD step per call."""
    from bench_workloads import _cnn_args, cnn_loss
    params, x, y = _cnn_args(rng)
    return _sgd_run(lib, cnn_loss(lib.np, lib.lax, lib.nn.log_softmax), lr, params, (x, y))


# ---- HMC on a Bayesian logistic regression ----

def log_posterior(lib, x, y):
    """Bernoulli likelihood of labels y given logits x @ w, standard normal prior on w."""
    def logp(w):
        z = x @ w
        return lib.np.sum(y * z - lib.np.logaddexp(0.0, z)) - 0.5 * lib.np.sum(w * w)
    return logp


def hmc_sampler(lib, x, y, samples=100, leapfrog=10, step_size=0.01):
    """jit((key, w) -> (draws (samples, d), last log density, acceptance rate)): each draw
    is a fresh momentum, `leapfrog` steps in fori_loop, a Metropolis accept; scan over draws."""
    logp = log_posterior(lib, x, y)
    grad = lib.grad(logp)
    xp, rnd = lib.np, lib.random

    def leap(_, wp):
        w, p = wp
        p = p + 0.5 * step_size * grad(w)
        w = w + step_size * p
        return w, p + 0.5 * step_size * grad(w)

    def draw(w, key):
        k_mom, k_acc = rnd.split(key)
        p0 = rnd.normal(k_mom, w.shape)
        w1, p1 = lib.lax.fori_loop(0, leapfrog, leap, (w, p0))
        log_ratio = logp(w1) - 0.5 * xp.sum(p1 * p1) - logp(w) + 0.5 * xp.sum(p0 * p0)
        accept = xp.log(rnd.uniform(k_acc)) < log_ratio
        return xp.where(accept, w1, w), (xp.where(accept, w1, w), accept)

    def sample(key, w):
        w, (draws, accepted) = lib.lax.scan(draw, w, rnd.split(key, samples))
        return draws, logp(w), xp.mean(accepted.astype(np.float32))
    return lib.jit(sample)


def hmc_setup(lib, rng, d=32, n=2000, samples=100, leapfrog=10):
    true_w = rng.standard_normal(d).astype(np.float32)
    x = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(np.float32)
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ true_w))).astype(np.float32)
    sample = hmc_sampler(lib, x, y, samples, leapfrog)

    def run(state):
        key, w = state
        key, sub = lib.random.split(key)
        draws, value, _ = sample(sub, w)
        return (key, draws[-1]), -value
    return run, (lib.random.PRNGKey(0), np.zeros(d, np.float32))


@dataclass
class Workload:
    key: str
    desc: str
    setup: Callable
    steps: int          # steps of a benchmark run

    def stepper(self, lib):
        """step(): one step of this workload on `lib` (tracer_lib() or jax_lib()), its
        state carried from call to call, its loss read (a user waits for it)."""
        run, state = self.setup(lib, np.random.default_rng(0))
        box = [state]

        def step():
            box[0], value = run(box[0])
            float(value)
        return step


WORKLOADS = [
    Workload("W17", "char transformer LM step, d=128, 4 heads, 2 layers, T=64, batch 16: "
             "value_and_grad + Adam", transformer_setup, 60),
    Workload("W18", "24-layer tanh MLP, 1024 wide, batch 512: value_and_grad + SGD",
             deep_mlp_setup, 20),
    Workload("W19", "HMC, Bayesian logistic regression d=32 n=2000: 100 draws of 10 "
             "leapfrog steps (fori_loop in scan)", hmc_setup, 20),
    Workload("W20", "CNN of W15, batch 64: value_and_grad + SGD", cnn_setup, 100),
    Workload("W21", "400-layer tanh MLP, 16 wide, batch 8: value_and_grad + SGD (a deep "
             "graph's compile time)", functools.partial(deep_mlp_setup, layers=400, width=16,
                                                      batch=8), 20),
]
