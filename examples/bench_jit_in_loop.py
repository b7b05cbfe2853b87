"""Ways of writing a training loop that fell off a cliff, each beside the form that did not:

* `jit(step)(...)` written inside the loop, against the step jitted once: each jit object
  had its own cache, so every step traced and loaded its code from the disk cache again
  (gone since every `jit(f)` of one `f` shares a cache, tracer.jit_cache);
* `grad(jit(loss))` called outside jit, against `jit(grad(loss))`: the gradient of a
  jitted function ran op by op through the NumPy interpreter, 3.8-4.5x slower (gone since
  an eager transform of a jitted function compiles as the jitted transform,
  tracer.transforms.compiled_when_jitted, as JAX compiles both passes);
* `vjp(jit(loss))` called outside jit, its pullback called on 1.0: both passes ran
  through the interpreter too (gone since vjp of a jitted function runs its forward
  pass and its pullback as two jitted calls, tracer.transforms._jitted).

Each form runs in a fresh process with an empty disk cache, as a new user's program
starts, and prints its median step (ms) over `steps` steps after the first and the whole
loop's time from the first call (trace and compile included) to the last step.

Run:  python examples/bench_jit_in_loop.py [steps]
      (PYTHONPATH=<another checkout> runs that checkout's tracer with this script)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import tracer
import tracer.numpy as tnp


def loss(params, x, y):
    """A tanh MLP (128 wide, batch 64), mean squared error."""
    h = x
    for w in params:
        h = tnp.tanh(h @ w)
    return tnp.mean((h - y) ** 2)


def sgd_step(lr):
    def step(params, x, y):
        return [w - lr * g for w, g in zip(params, tracer.grad(loss)(params, x, y))]
    return step


def _jitted_grad_step(gradient):
    def run(params, x, y):
        return [w - np.float32(0.1) * g for w, g in zip(params, gradient(params, x, y))]
    return run


def _pulled_back(f):
    """The gradient of loss-like `f` with respect to its first argument, by vjp."""
    return lambda params, x, y: tracer.vjp(f, params, x, y)[1](np.float32(1.0))[0]


def _inside(step):
    return lambda *a: tracer.jit(step)(*a)


FORMS = {
    "jit(step) made once": lambda: tracer.jit(sgd_step(0.1)),
    "jit(step) inside the loop": lambda: _inside(sgd_step(0.1)),
    "jit(grad(loss)), update outside": lambda: _jitted_grad_step(
        tracer.jit(tracer.grad(loss))),
    "grad(jit(loss)), update outside": lambda: _jitted_grad_step(
        tracer.grad(tracer.jit(loss))),
    "vjp(jit(loss)), update outside": lambda: _jitted_grad_step(
        _pulled_back(tracer.jit(loss))),
}


def timed(steps, form, layers=6):
    """(median step, whole loop) in ms."""
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((128, 128)).astype(np.float32) * 0.1
              for _ in range(layers)]
    x, y = (rng.standard_normal((64, 128)).astype(np.float32) for _ in range(2))
    run = FORMS[form]()
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        params = run(params, x, y)
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:]) * 1e3, sum(times) * 1e3


if __name__ == "__main__":
    n = sys.argv[1] if len(sys.argv) > 1 else "30"
    if len(sys.argv) > 2:                           # one form, in this fresh process
        step_ms, whole_ms = timed(int(n), sys.argv[2])
        print(f"{sys.argv[2]}: {step_ms:.2f} ms a step, {whole_ms:.0f} ms first call to "
              f"last step", flush=True)
    for form in FORMS if len(sys.argv) == 2 or len(sys.argv) == 1 else ():
        with tempfile.TemporaryDirectory() as cache:
            subprocess.run([sys.executable, __file__, n, form], check=True,
                           env=dict(os.environ, TRACER_CACHE_DIR=cache))
