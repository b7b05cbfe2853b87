"""Digests of the traced graph text and the llvm module text of every benchmark row of
examples/bench_workloads.py: a refactor that should not change code is checked by running
this at two commits and comparing the output (`git worktree add` the old one).

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


if __name__ == "__main__":
    main()
