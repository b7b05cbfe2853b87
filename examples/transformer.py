"""Train a character-level transformer language model on Python's own source code.

The text is a dozen modules of the standard library read from disk (nothing is
downloaded); the model (examples/real_workloads.py, the same definition the benchmark's
W17 row times) is a pre-norm causal transformer: embeddings, multi-head attention and a
GELU MLP per layer. A training step, value_and_grad of the cross-entropy and an Adam
update with bias correction, is one `tracer.jit` program. A progress line shows the
step, the loss and the time per step; at the end the model writes some Python.

Run:  python examples/transformer.py [--steps 300] [--d 128] [--heads 4] [--layers 2]
      [--context 64] [--batch 16] [--lr 3e-3] [--sample 300] [--backend llvm|numpy]
"""
import argparse
import functools
import time

import numpy as np

import tracer
from real_workloads import (VOCAB, decode, encode, stdlib_text, tracer_lib,
                            transformer_logits, transformer_setup)


def generate(lib, params, heads, context, prompt, n, rng, temperature=0.8):
    """`prompt` continued by n characters sampled from the model, one jitted call each
    (always a full window of `context` characters, left-padded with newlines)."""
    last_logits = lib.jit(lambda p, ctx: transformer_logits(lib, p, ctx, heads)[0, -1])
    tokens = list(encode("\n" * context + prompt))
    for _ in range(n):
        logits = np.asarray(last_logits(params, np.array([tokens[-context:]], np.int32)))
        p = np.exp((logits - logits.max()) / temperature)
        tokens.append(rng.choice(len(VOCAB), p=p / p.sum()))
    return decode(tokens[context:])


def main(steps, d, heads, layers, context, batch, lr, sample, backend, every):
    lib = tracer_lib()
    lib.jit = functools.partial(tracer.jit, backend=backend)
    text = stdlib_text()
    print(f"{len(text):,} characters of the standard library's source, vocabulary "
          f"{len(VOCAB)}; {layers} layers, d={d}, {heads} heads, context {context}, "
          f"batch {batch}, {backend} backend")
    rng = np.random.default_rng(0)
    run, state = transformer_setup(lib, rng, d=d, heads=heads, layers=layers,
                                   context=context, batch=batch, lr=lr, text=text)
    losses, times = [], []
    for i in range(1, steps + 1):
        t0 = time.perf_counter()
        state, loss = run(state)
        losses.append(float(loss))
        times.append(time.perf_counter() - t0)
        if i == 1:
            print(f"step 1  loss {losses[0]:.4f}  first call (trace + compile + run) "
                  f"{times[0]:.2f} s", flush=True)
        elif i % every == 0 or i == steps:
            recent = slice(max(1, i - every), i)
            print(f"step {i}  loss {np.mean(losses[recent]):.4f}  "
                  f"{np.mean(times[recent]) * 1e3:.1f} ms/step", flush=True)
    tail = float(np.mean(losses[-max(1, steps // 10):]))
    print(f"loss fell from {losses[0]:.4f} to {tail:.4f} (mean of the last steps)")
    assert tail < losses[0], "the loss did not fall"
    if sample:
        print("sample:\n" + generate(lib, state[0], heads, context, "def ", sample, rng))
    return losses


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--d", type=int, default=128, help="model width")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--context", type=int, default=64, help="characters per window")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--sample", type=int, default=300, help="characters to generate")
    ap.add_argument("--backend", default="llvm", choices=("llvm", "numpy"))
    ap.add_argument("--every", type=int, default=25, help="steps per progress line")
    a = ap.parse_args()
    main(a.steps, a.d, a.heads, a.layers, a.context, a.batch, a.lr, a.sample, a.backend,
         a.every)
