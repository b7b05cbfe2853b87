"""The project's benchmark: W1-W8 of the performance issue, as a table.

Each workload is timed for tracer's `llvm` backend, tracer's `numpy` backend, eager NumPy,
and jax.jit when JAX is importable (it is not a dependency). Implementations are run
round-robin (interleaved) and the table shows the median per-call time over the rounds,
so a noisy, shared machine affects all columns alike. Compare ratios within one run only.

Run:  python examples/benchmark.py [--rounds 15] [--only W1,W3]
"""
import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tracer  # noqa: E402
import tracer.numpy as tnp  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None

# ---- workloads: each gives inputs and the same function written for each library ----


def w1(lib):
    return lambda x: lib.tanh(x) * (1 / (1 + lib.exp(-x))) + 0.5 * x * x


def w2(lib):
    def softmax(x):
        e = lib.exp(x - lib.max(x, axis=-1, keepdims=True))
        return e / lib.sum(e, axis=-1, keepdims=True)
    return softmax


def w3(lib):
    return lambda x: lib.sum(x * x)


def w4(lib):
    return lambda a, b: a @ b


def mlp_loss(lib, log_softmax):
    def loss(params, x, y):
        w1_, b1, w2_, b2 = params
        h = lib.maximum(x @ w1_ + b1, 0)
        logits = h @ w2_ + b2
        return -lib.mean(lib.sum(log_softmax(logits) * y, axis=-1))
    return loss


def np_mlp_value_and_grad(params, x, y):
    """Hand-written NumPy backprop for W5 (eager NumPy has no autodiff)."""
    w1_, b1, w2_, b2 = params
    z = x @ w1_ + b1
    h = np.maximum(z, 0)
    logits = h @ w2_ + b2
    m = logits.max(-1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(-1, keepdims=True)
    logp = logits - m - np.log(s)
    n = x.shape[0]
    loss = -np.mean(np.sum(logp * y, -1))
    dlogits = (e / s - y) / n
    dh = dlogits @ w2_.T * (z > 0)
    return loss, (x.T @ dh, dh.sum(0), h.T @ dlogits, dlogits.sum(0))


def chain(lib, n=64):
    def f(x):
        for i in range(n // 4):
            x = lib.tanh(x * (1.0 + i / 100)) + x * 0.5 - 0.25
        return x
    return f


def w8(lib):
    return lambda x: lib.sum(lib.tanh(x) ** 2 * x)


def setups(rng):
    """id -> (description, target, args, {impl name: callable})."""
    f32 = np.float32
    x4m = rng.standard_normal(4_194_304).astype(f32)
    x_sm = rng.standard_normal((4096, 1024)).astype(f32)
    x16m = rng.random(16_777_216).astype(f32)
    a, b = (rng.standard_normal((1024, 1024)).astype(f32) for _ in range(2))
    params = [rng.standard_normal(s).astype(f32) * 0.05 for s in [(784, 512), (512,), (512, 10), (10,)]]
    xb = rng.standard_normal((256, 784)).astype(f32)
    yb = np.eye(10, dtype=f32)[rng.integers(0, 10, 256)]
    x8 = np.arange(8, dtype=f32)
    x100k = rng.standard_normal(100_000).astype(f32)
    v100k = rng.standard_normal(100_000).astype(f32)
    tj = tracer.jit
    out = {
        "W1": ("tanh(x)*sigmoid(x)+0.5x^2, 4M f32", "2x jax, 10x numpy", (x4m,), w1),
        "W2": ("row softmax (4096,1024) f32", "2x jax", (x_sm,), w2),
        "W3": ("sum(x*x), 16M f32", "90% of bandwidth, >= jax", (x16m,), w3),
        "W4": ("matmul 1024^3 f32", "within 1.2x numpy", (a, b), w4),
    }
    impls = {}
    for key, (desc, target, args, make) in out.items():
        impls[key] = (desc, target, args, {
            "tracer llvm": tj(make(tnp)), "tracer numpy": tj(make(tnp), backend="numpy"),
            "numpy": make(np), **({"jax.jit": jax.jit(make(jnp))} if jax else {})})
    t_loss = mlp_loss(tnp, tracer.nn.log_softmax)
    impls["W5"] = ("value_and_grad MLP 784-512-10, batch 256", ">= jax",
                   (params, xb, yb), {
                       "tracer llvm": tj(tracer.value_and_grad(t_loss)),
                       "tracer numpy": tj(tracer.value_and_grad(t_loss), backend="numpy"),
                       "numpy": np_mlp_value_and_grad,
                       **({"jax.jit": jax.jit(jax.value_and_grad(
                           mlp_loss(jnp, jax.nn.log_softmax)))} if jax else {})})
    impls["W6"] = ("cached jit call, x+1.0 on 8 f32", "<= 5 us", (x8,), {
        "tracer llvm": tj(lambda x: x + 1.0), "tracer numpy": tj(lambda x: x + 1.0, backend="numpy"),
        "numpy": lambda x: x + 1.0, **({"jax.jit": jax.jit(lambda x: x + 1.0)} if jax else {})})

    def hvp(grad, jvp, f):
        return lambda x, v: jvp(grad(f), (x,), (v,))[1]
    impls["W8"] = ("HVP sum(tanh(x)^2 x), 100k f32", ">= jax", (x100k, v100k), {
        "tracer llvm": tj(hvp(tracer.grad, tracer.jvp, w8(tnp))),
        "tracer numpy": tj(hvp(tracer.grad, tracer.jvp, w8(tnp)), backend="numpy"),
        **({"jax.jit": jax.jit(hvp(jax.grad, jax.jvp, w8(jnp)))} if jax else {})})
    return impls


def _block(x):
    if jax is not None and hasattr(x, "block_until_ready"):
        x.block_until_ready()
    elif isinstance(x, (tuple, list)):
        for y in x:
            _block(y)
    return x


def time_interleaved(fns, args, rounds, budget=0.05):
    """Median seconds per call of each fn, run round-robin."""
    for f in fns.values():
        _block(f(*args))                       # compile / warm up
    inner = {}
    for name, f in fns.items():
        t0 = time.perf_counter()
        _block(f(*args))
        inner[name] = max(1, int(budget / max(time.perf_counter() - t0, 1e-7)))
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(inner[name]):
                _block(f(*args))
            samples[name].append((time.perf_counter() - t0) / inner[name])
            time.sleep(0.005)
    return {name: statistics.median(s) for name, s in samples.items()}


def copy_bandwidth(rounds):
    """Bytes per second of np.copyto on 256 MB (read + write counted), median of rounds."""
    src = np.ones(64 * 1024 * 1024, np.float32)
    dst = np.empty_like(src)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return 2 * src.nbytes / statistics.median(times)


def compile_latency(rounds):
    """W7: trace + compile + first run of a fresh 64-op chain; then a warm disk cache
    in a fresh process (median of `rounds` processes)."""
    x = np.ones(1000, np.float32)
    res = {}
    cold = []
    for i in range(rounds):
        f = tracer.jit(chain(tnp))
        t0 = time.perf_counter()
        f(x + i)
        cold.append(time.perf_counter() - t0)
    res["tracer llvm"] = statistics.median(cold)
    if jax:
        times = []
        for i in range(rounds):
            g = jax.jit(chain(jnp))
            t0 = time.perf_counter()
            _block(g(x + i))
            times.append(time.perf_counter() - t0)
        res["jax.jit"] = statistics.median(times)
    code = ("import time, numpy as np, tracer, tracer.numpy as tnp, sys\n"
            "sys.path.insert(0, 'examples'); from benchmark import chain\n"
            "x = np.ones(1000, np.float32); f = tracer.jit(chain(tnp))\n"
            "t0 = time.perf_counter(); f(x); print(time.perf_counter() - t0)\n")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TRACER_CACHE_DIR=d)
        warm = [float(subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                     capture_output=True, check=True).stdout)
                for _ in range(3)][1:]
    res["tracer llvm, warm disk cache"] = statistics.median(warm)
    return res


def fmt(seconds):
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default="")
    opts = ap.parse_args()
    only = set(filter(None, opts.only.split(",")))
    cols = ["tracer llvm", "tracer numpy", "numpy", "jax.jit"]
    print(f"numpy {np.__version__}, jax {jax.__version__ if jax else 'not installed'}, "
          f"{os.cpu_count()} cpus, median of {opts.rounds} interleaved rounds")
    print(f"| id | workload | {' | '.join(cols)} | llvm vs numpy | llvm vs jax | target |")
    print("|" + " --- |" * (len(cols) + 5))
    rng = np.random.default_rng(0)
    for key, (desc, target, args, fns) in setups(rng).items():
        if only and key not in only:
            continue
        t = time_interleaved(fns, args, opts.rounds)
        _row(key, desc, target, t, cols)
        if key == "W3":
            bw = copy_bandwidth(opts.rounds)
            floor = args[0].nbytes / bw
            print(f"|    | W3 bandwidth floor (bytes read / copy bandwidth {bw / 1e9:.1f} GB/s) "
                  f"| {fmt(floor)} = {floor / t['tracer llvm']:.0%} of tracer llvm's time |"
                  + " |" * (len(cols) + 2), flush=True)
    if not only or "W7" in only:
        t = compile_latency(max(3, opts.rounds // 3))
        _row("W7", "trace+compile+run 64-op chain", "<= 0.5x jax; warm < 5 ms", t, cols)
        print(f"|    | ...same, warm disk cache, fresh process | "
              f"{fmt(t['tracer llvm, warm disk cache'])} |" + " |" * (len(cols) + 2))


def _row(key, desc, target, t, cols):
    ratio = (lambda a, b: f"{t[b] / t[a]:.2f}x" if a in t and b in t else "-")
    print(f"| {key} | {desc} | {' | '.join(fmt(t.get(c)) for c in cols)} | "
          f"{ratio('tracer llvm', 'numpy')} | {ratio('tracer llvm', 'jax.jit')} | {target} |",
          flush=True)


if __name__ == "__main__":
    main()
