"""The examples are part of the contract: each runs as a fresh process and says what it
should."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECT = {
    "quickstart.py": ["lambda", "Jitted results", "define", "result:"],
    "custom_ops.py": ["softplus a", "fusion[\n      body={ lambda", "tracer.log1p",
                      "after override"],
    "custom_gradients.py": ["custom_grad", "custom_vjp"],
    "data_parallel.py": ["step   0  loss", "1 process(es), global batch 64: final loss"],
    "mlp.py": ["loss", "backward graph"],
    "ode.py": ["scan[", "body={ lambda", "largest difference from finite differences",
               "1 top-level nodes"],
    "rnn.py": ["2 of them scans", "loss fell from"],
    "numpy_code.py": ["traced value", "finite difference", "after 200 steps", "lambda"],
    "per_example_grads.py": ["per-example gradient norms", "largest difference from a Python "
                             "loop", "no loop"],
    "cnn.py": ["epoch 2/2", "images/s", "loss fell from"],
    "transformer.py": ["step 1  loss", "ms/step", "loss fell from", "sample:\ndef "],
}
ARGS = {"ode.py": ["--steps", "100"], "rnn.py": ["--steps", "60", "--length", "20"],
        "data_parallel.py": ["--steps", "5"],
        "cnn.py": ["--epochs", "2", "--train", "512", "--batch", "32", "--size", "12"],
        # the numpy backend: a fresh cache's llvm compile of even a 1-layer model takes ~12 s
        "transformer.py": ["--steps", "40", "--d", "16", "--heads", "2", "--layers", "1",
                           "--context", "16", "--batch", "8", "--lr", "1e-2", "--sample",
                           "20", "--every", "10", "--backend", "numpy"]}


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_example_runs(name, tmp_path):
    path = os.path.join(ROOT, "examples", name)
    env = dict(os.environ, PYTHONPATH=ROOT, TRACER_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, path] + ARGS.get(name, []), capture_output=True,
                         text=True, env=env, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    for text in EXPECT[name]:
        assert text in out.stdout
