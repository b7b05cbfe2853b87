"""Digests of the traced graph text and the llvm module text of every benchmark row of
examples/bench_workloads.py, and of the training steps of the real workloads W17, W18
and W21 (examples/real_workloads.py, at small sizes): a refactor that should not change
code is checked by running this at two commits and comparing the output (`git worktree
add` the old one, and put it first on PYTHONPATH).

    python examples/module_text_digest.py > after.txt
"""
import hashlib
import os
import sys

os.environ["TRACER_BACKGROUND_COMPILE"] = "0"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import tracer  # noqa: E402
from bench_workloads import ROWS  # noqa: E402


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def main():
    for row in ROWS:
        args = row.args(np.random.default_rng(0))
        graph = str(tracer.make_graph(row.tracer)(*args))
        module = tracer.jit(row.tracer, backend="llvm").lower(*args).as_text()
        print(row.key, digest(graph), digest(module), len(module), flush=True)
    for key, step, args in real_steps(np.random.default_rng(0)):
        graph = str(tracer.make_graph(step)(*args))
        module = step.lower(*args).as_text()
        print(key, digest(graph), digest(module), len(module), flush=True)


def real_steps(rng):
    """(key, jitted step, its arguments) of W17 (d=32, context 16, batch 4), W18 (6
    layers, 64 wide) and W21 (120 layers, 16 wide)."""
    import real_workloads as rw
    lib = rw.tracer_lib()
    params = rw.init_transformer(rng, d=32, layers=2, context=16)
    zeros = lib.tree_map(np.zeros_like, params)
    batch = next(rw.text_batches(rw.encode("hello world " * 50), 4, 16, rng))
    yield "W17", rw.adam_step(lib, rw.lm_loss(lib)), (params, zeros, zeros,
                                                      np.float32(0), *batch)
    for key, layers, width in (("W18", 6, 64), ("W21", 120, 16)):
        params = [(rng.standard_normal((width, width)).astype(np.float32) / np.sqrt(width),
                   np.zeros(width, np.float32)) for _ in range(layers)]
        x, y = (rng.standard_normal((8, width)).astype(np.float32) for _ in range(2))
        yield key, rw.sgd_step(lib, rw.deep_mlp_loss(lib), 0.1), (params, x, y)


if __name__ == "__main__":
    main()
