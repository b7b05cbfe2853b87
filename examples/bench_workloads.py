"""The benchmark's workloads: one `Row` each, with its inputs, the same function written
for every library it runs on, and its targets. To add a workload, append a Row to ROWS
(examples/benchmark.py times and judges every row the same way)."""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import tracer
import tracer.numpy as tnp

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None


# ---- target checks: (label, fn(t) -> True/False, or None when a needed figure is missing);
# t maps column -> seconds, plus "floor" (W3's bandwidth floor) and "warm" (W7's disk cache)

def _ratio(t, a, b):
    return t[a] / t[b] if a in t and b in t else None


def at_most(a, b, limit):
    def check(t):
        r = _ratio(t, a, b)
        return None if r is None else r <= limit
    return check


def vs_jax(limit):
    return (f"<= {limit:g}x jax", at_most("tracer llvm", "jax.jit", limit))


def vs_numpy(limit):
    return (f"<= {limit:g}x numpy", at_most("tracer llvm", "numpy", limit))


@dataclass
class Row:
    """A timed workload. `args(rng)` makes the inputs; `tracer` is the function jitted for
    both tracer backends; `numpy`/`jax` (a function of the jax modules) are the peers."""
    key: str
    desc: str
    args: Callable
    tracer: Callable
    numpy: Callable = None
    jax: Callable = None
    targets: list = field(default_factory=list)


# ---- the functions, each written once for any NumPy-like library ----

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


def chain(lib, n=64, salt=0):
    """n elementwise ops; a new `salt` gives a new structure that no cache has seen."""
    def f(x):
        for i in range(n // 4):
            x = lib.tanh(x * (1.0 + i / 100 + salt * 1e-6)) + x * 0.5 - 0.25
        return x
    return f


def w8(lib):
    return lambda x: lib.sum(lib.tanh(x) ** 2 * x)


def fori(lib, lax, salt=0):
    """W9/W10: a 1,000-step fori_loop of a 4-op body (`salt`: a structure no cache saw)."""
    return lambda x, w: lax.fori_loop(
        0, 1000, lambda i, v: lib.tanh(v @ w) + x * (1.0 + salt * 1e-6), x)


def scan_loss(lib, lax, salt=0):
    """W11: a 1,000-step scan whose gradient is taken."""
    def f(x, w):
        carry, ys = lax.scan(lambda c, xi: (lib.tanh(c @ w + xi * (1.0 + salt * 1e-6)),
                                            lib.sum(c)), x, lib.ones((1000,) + x.shape, x.dtype) * 0.1)
        return lib.sum(carry) + lib.sum(ys)
    return f


def w13(lib):
    """A 100-input scalar function for the Hessian."""
    return lambda x: lib.sum(lib.tanh(x) ** 2 * x) + lib.sum(x[1:] * x[:-1])


def hvp(grad, jvp, f):
    return lambda x, v: jvp(grad(f), (x,), (v,))[1]


def add1(lib):
    return lambda x: x + 1.0


def normal(*shapes, dtype=np.float32):
    """args(rng) of independent standard normal arrays of these shapes."""
    return lambda rng: tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


def _mlp_args(rng):
    params = [rng.standard_normal(s).astype(np.float32) * 0.05
              for s in [(784, 512), (512,), (512, 10), (10,)]]
    xb = rng.standard_normal((256, 784)).astype(np.float32)
    yb = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    return params, xb, yb


def _jax_mlp():
    return mlp_loss(jnp, jax.nn.log_softmax)


def _numpy_normals(n):
    """NumPy's fastest float32 normals (ziggurat), from one Generator kept across calls."""
    gen = np.random.default_rng(0)
    return lambda key: gen.standard_normal(n, dtype=np.float32)


def cnn_loss(lib, lax, log_softmax):
    """W15: conv3x3 1->16, relu, 2x2 max pool, conv3x3 16->32, relu, pool, dense 10 (NHWC)."""
    dn = ("NHWC", "HWIO", "NHWC")

    def pool(h):
        return lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(params, x, y):
        w1_, b1, w2_, b2, w3_, b3 = params
        h = lib.maximum(lax.conv_general_dilated(x, w1_, (1, 1), "SAME",
                                                 dimension_numbers=dn) + b1, 0)
        h = lib.maximum(lax.conv_general_dilated(pool(h), w2_, (1, 1), "SAME",
                                                 dimension_numbers=dn) + b2, 0)
        logits = lib.reshape(pool(h), (x.shape[0], -1)) @ w3_ + b3
        return -lib.mean(lib.sum(log_softmax(logits) * y, axis=-1))
    return loss


def _cnn_args(rng):
    params = [(rng.standard_normal(s) * k).astype(np.float32) for s, k in [
        ((3, 3, 1, 16), 0.3), ((16,), 0), ((3, 3, 16, 32), 0.1), ((32,), 0),
        ((7 * 7 * 32, 10), 0.03), ((10,), 0)]]
    x = rng.standard_normal((64, 28, 28, 1)).astype(np.float32)
    return params, x, np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]


def _solve_args(rng):
    return rng.standard_normal((512, 512)) + 512 * np.eye(512), rng.standard_normal((512, 512))


ROWS = [
    Row("W1", "tanh(x)*sigmoid(x)+0.5x^2, 4M f32", normal(4_194_304), w1(tnp), w1(np),
        lambda: w1(jnp), [vs_jax(0.5), vs_numpy(0.1)]),
    Row("W2", "row softmax (4096,1024) f32", normal((4096, 1024)), w2(tnp), w2(np),
        lambda: w2(jnp), [vs_jax(0.5)]),
    Row("W3", "sum(x*x), 16M f32", lambda rng: (rng.random(16_777_216).astype(np.float32),),
        w3(tnp), w3(np), lambda: w3(jnp),
        [(">= 90% of bandwidth", at_most("tracer llvm", "floor", 1 / 0.9)), vs_jax(1)]),
    Row("W4", "matmul 1024^3 f32", normal((1024, 1024), (1024, 1024)), w4(tnp), w4(np),
        lambda: w4(jnp), [vs_numpy(1.2)]),
    Row("W5", "value_and_grad MLP 784-512-10, batch 256", _mlp_args,
        tracer.value_and_grad(mlp_loss(tnp, tracer.nn.log_softmax)), np_mlp_value_and_grad,
        lambda: jax.value_and_grad(_jax_mlp()), [vs_jax(1)]),
    Row("W6", "cached jit call, x+1.0 on 8 f32", lambda rng: (np.arange(8, dtype=np.float32),),
        add1(tnp), add1(np), lambda: add1(jnp),
        [("<= 5 us", lambda t: t["tracer llvm"] <= 5e-6)]),
    Row("W8", "HVP sum(tanh(x)^2 x), 100k f32", normal(100_000, 100_000),
        hvp(tracer.grad, tracer.jvp, w8(tnp)), None,
        lambda: hvp(jax.grad, jax.jvp, w8(jnp)), [vs_jax(1)]),
    Row("W9", "1000-step fori_loop, tanh(v @ w) + x, 64 f32",
        lambda rng: (rng.standard_normal(64).astype(np.float32),
                     (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)),
        fori(tnp, tracer.lax), None, lambda: fori(jnp, jax.lax), [vs_jax(1.5)]),
    Row("W12", "per-example grads, W5 MLP, batch 256", _mlp_args,
        tracer.vmap(tracer.grad(mlp_loss(tnp, tracer.nn.log_softmax)), in_axes=(None, 0, 0)),
        None, lambda: jax.vmap(jax.grad(_jax_mlp()), in_axes=(None, 0, 0)), [vs_jax(1.2)]),
    Row("W13", "hessian of a 100-input function", normal(100), tracer.hessian(w13(tnp)), None,
        lambda: jax.hessian(w13(jnp)), [vs_jax(1.5)]),
    Row("W14", "10M f32 normals, tracer.random, jit", lambda rng: (tracer.random.PRNGKey(0),),
        lambda key: tracer.random.normal(key, (10_000_000,)), _numpy_normals(10_000_000),
        lambda: lambda key: jax.random.normal(key, (10_000_000,)), [vs_jax(1.5), vs_numpy(0.5)]),
    Row("W15", "value_and_grad CNN 28x28x1, conv3x3 16, pool, conv3x3 32, pool, dense; batch 64",
        _cnn_args, tracer.value_and_grad(cnn_loss(tnp, tracer.lax, tracer.nn.log_softmax)), None,
        lambda: jax.value_and_grad(cnn_loss(jnp, jax.lax, jax.nn.log_softmax)), [vs_jax(1.2)]),
    Row("W16", "linalg.solve (512, 512) f64, 512 right-hand sides", _solve_args,
        tnp.linalg.solve, np.linalg.solve, None, [vs_numpy(1.2)]),
]

# targets of the rows that examples/bench_compile.py times (trace + compile, not calls)
COMPILE_TARGETS = {
    "W7": [vs_jax(0.5), ("warm < 5 ms", lambda t: t["warm"] < 5e-3)],
    "W10": [vs_jax(0.5)],
    "W11": [("< 1 s", lambda t: t["tracer llvm"] < 1.0)],
}
