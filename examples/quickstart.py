"""Quickstart: trace a function, look at its graph, differentiate it, jit it, draw it.

Run:  python examples/quickstart.py [--picture PATH]    (PATH: .svg or .png)
"""
import argparse
import os
import tempfile

import numpy as np

import tracer
import tracer.numpy as tnp


def loss(w, x):
    """A tiny model: mean squared tanh activation."""
    return tnp.mean(tnp.tanh(x @ w) ** 2)


def excerpt(text, symbol, lines=14):
    """The first lines of function `symbol` in an LLVM module's text."""
    body = text.splitlines()
    start = next(i for i, ln in enumerate(body) if ln.startswith("define") and symbol in ln)
    end = next(i for i in range(start, len(body)) if body[i] == "}")
    shown = body[start:min(end + 1, start + lines)]
    more = end + 1 - start - len(shown)
    return "\n".join(shown + ([f"  ... ({more} more lines of this function)"] if more else []))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--picture", default=os.path.join(tempfile.gettempdir(),
                                                           "tracer_quickstart.svg"))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)

    print("1. The traced graph of loss (every node names a kernel):")
    print(tracer.make_graph(loss)(w, x))

    grad_graph = tracer.make_graph(tracer.grad(loss))(w, x)
    print("\n2. Its gradient is itself a graph (forward + backward kernels):")
    print(grad_graph)

    fast_loss, fast_grad = tracer.jit(loss), tracer.jit(tracer.grad(loss))
    print("\n3. Jitted results (eager NumPy gives the same):")
    print("   loss    =", fast_loss(w, x), "  eager:", loss(w, x))
    print("   grad[0] =", fast_grad(w, x)[0], "  eager:", tracer.grad(loss)(w, x)[0])

    f = tracer.jit(lambda v: tnp.tanh(v) * tracer.nn.sigmoid(v) + 0.5 * v * v)
    v = np.linspace(-2, 2, 8, dtype=np.float32)
    lowered = f.lower(v)
    text = lowered.as_text()
    print(f"\n4. A fused elementwise function, lowered by the {lowered.backend!r} backend to "
          f"one loop ({len(text.splitlines())} lines of LLVM IR in all; the start of it):")
    print(excerpt(text, '@"g0"'))
    print("   result:", f(v))

    try:
        grad_graph.render(args.picture)
        print(f"\n5. A picture of the gradient graph: {args.picture}")
    except ImportError:
        print("\n5. (pip install matplotlib, or the [viz] extra, to draw graphs as pictures)")


if __name__ == "__main__":
    main()
