"""Random programs of mixed kernels (hypothesis): matmul (plain and transposed operands),
conv, cumulative ops, sort, scatter-add, gather, concatenate, pad, reductions over
several axes, next to elementwise chains, on values of several shapes at once, so the
program-level machinery meets what one kernel's tests never build: temporaries of many
sizes in one arena, in-place roots, identical calls sharing a body, groups split across
threads. The llvm backend must agree with the numpy backend on every output."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

import tracer
import tracer.numpy as tnp
from lowering.settings import settings
from tracer import lax

SHAPES = [(6, 5), (1, 7), (33, 1), (70, 45), (130, 300)]   # past the row, tile and
                                                           # epilogue-chunk thresholds
K33 = np.random.default_rng(7).standard_normal((2, 1, 3, 3)) / 3


def _weights(m, n):
    rng = np.random.default_rng(m * 1000 + n)
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal((m, m)) / np.sqrt(m)


def _conv(x):
    y = lax.conv_general_dilated(x[None, None], K33.astype(x.dtype), (1, 1), "SAME")
    return y[0, 0] - y[0, 1]


def _rows(m):
    return (np.arange(m) * 7 + 3) % m


OPS = {     # each maps two (m, n) values to one
    "tanh": lambda x, y: tnp.tanh(x),
    "mul": lambda x, y: x * y,
    "add": lambda x, y: x + y,
    "max": lambda x, y: tnp.maximum(x, y),
    "matmul": lambda x, y: tnp.tanh(x @ _weights(*x.shape)[0].astype(x.dtype)),
    "left_matmul": lambda x, y: _weights(*x.shape)[1].astype(x.dtype) @ x,
    "gram": lambda x, y: (x @ y.T) @ x / x.shape[1],
    "xt_dy": lambda x, y: x @ (x.T @ y) / x.shape[0],      # a gradient's transposed read
    "conv": lambda x, y: _conv(x),
    "cumsum": lambda x, y: tnp.cumsum(x, axis=0) / x.shape[0],
    "cumprod": lambda x, y: tnp.cumprod(tnp.tanh(x), axis=1),
    "sort": lambda x, y: tnp.sort(x, axis=1),
    "argsort": lambda x, y: tnp.take_along_axis(y, tnp.argsort(x, axis=0), axis=0),
    "scatter": lambda x, y: tnp.zeros_like(x).at[_rows(x.shape[0]) // 2].add(y),
    "gather": lambda x, y: x[_rows(x.shape[0])] - y,
    "concat": lambda x, y: tnp.concatenate([x, y], axis=1)[:, 1:1 + x.shape[1]],
    "pad": lambda x, y: tnp.pad(x, ((1, 0), (0, 2)))[:-1, 1:-1] + y,
    "rev": lambda x, y: tnp.flip(x, axis=(0, 1)),
    "transpose": lambda x, y: (x.T * tnp.arange(x.shape[0], dtype=x.dtype)).T,
    "reduce01": lambda x, y: x - tnp.mean(x * y, axis=(0, 1), keepdims=True),
    "reduce_max": lambda x, y: y * tnp.max(x, axis=1, keepdims=True),
    "softmax": lambda x, y: tracer.nn.softmax(x, axis=0),
}
SMOOTH = sorted(set(OPS) - {"max", "sort", "argsort", "reduce_max"})


def steps(names):
    i = st.integers(0, 9)
    return st.lists(st.tuples(st.sampled_from(names), i, i), min_size=2, max_size=9)


def build(prog, n_out=3):
    def f(a, b):
        pool = [a, b]
        for name, i, j in prog:
            pool.append(OPS[name](pool[i % len(pool)], pool[j % len(pool)]))
        return tuple(pool[-n_out:])
    return f


def inputs(shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1, 1, shape).astype(dtype) for _ in range(2))


def close(got, want, tol):
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.fixture(params=["serial", "split"])
def threads(request, monkeypatch):
    """`split`: every group that can be split runs on two threads."""
    if request.param == "split":
        monkeypatch.setenv("TRACER_NUM_THREADS", "2")
        monkeypatch.setattr(settings, "parallel_ns", 0)


SETTINGS = hsettings(max_examples=15, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.function_scoped_fixture])


@SETTINGS
@given(steps(sorted(OPS)), st.sampled_from(SHAPES), st.integers(0, 2**16),
       st.sampled_from([np.float32, np.float64]))
def test_mixed_programs_llvm_matches_numpy_backend(threads, prog, shape, seed, dtype):
    f = build(prog)
    x, y = inputs(shape, seed, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = tracer.jit(f, backend="numpy")(x, y)
    close(tracer.jit(f, backend="llvm")(x, y), want, 1e-4 if dtype == np.float32 else 1e-10)


@SETTINGS
@given(steps(SMOOTH), st.sampled_from(SHAPES), st.integers(0, 2**16))
def test_mixed_gradient_programs_llvm_matches_numpy_backend(threads, prog, shape, seed):
    f = build(prog, n_out=1)
    x, y = inputs(shape, seed)
    w = np.random.default_rng(seed).standard_normal(shape)
    loss = tracer.value_and_grad(lambda x, y: tnp.sum(f(x, y)[0] * w), argnums=(0, 1))
    want = tracer.jit(loss, backend="numpy")(x, y)
    got = tracer.jit(loss, backend="llvm")(x, y)
    close([got[0], *got[1]], [want[0], *want[1]], 1e-9)


@hsettings(SETTINGS, max_examples=8)
@given(steps(SMOOTH), st.sampled_from(SHAPES), st.integers(0, 2**16))
def test_mixed_optimizer_steps_llvm_matches_numpy_backend(threads, prog, shape, seed):
    """An Adam step on both inputs of a random program: the updates read gradients made
    by matmuls and move into their epilogues (lowering.llvm.epilogues), the bias
    corrections, scalars of the step count, run first."""
    f = build(prog, n_out=1)
    x, y = inputs(shape, seed)
    w = np.random.default_rng(seed).standard_normal(shape)

    def step(params, m, v, t):
        g = tracer.grad(lambda p: tnp.sum(f(*p)[0] * w))(params)
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.99 * a + 0.01 * b * b for a, b in zip(v, g)]
        lr = 0.1 * tnp.sqrt(1 - 0.99 ** t) / (1 - 0.9 ** t)
        return [p - lr * a / (tnp.sqrt(b) + 1e-8) for p, a, b in zip(params, m, v)], m, v
    args = ([x, y], [x * 0.1, y * 0.2], [x * x, y * y + 0.1], np.float64(seed % 7 + 1))
    want = tracer.jit(step, backend="numpy")(*args)
    got = tracer.jit(step, backend="llvm")(*args)
    close([a for part in got for a in part], [a for part in want for a in part], 1e-9)


@pytest.fixture
def eager_llvm():
    """Eager ops (and eager grad) on the llvm backend's one-kernel programs."""
    old = tracer.get_backend()
    tracer.set_backend("llvm")
    yield
    tracer.set_backend(old)


EAGER = sorted(set(SMOOTH) - {"scatter"})   # eager NumPy arrays have no .at


@hsettings(max_examples=8, deadline=None, derandomize=True,
           suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps(EAGER), st.sampled_from(SHAPES), st.integers(0, 2**16))
def test_eager_llvm_ops_and_grad_match_the_numpy_backend(eager_llvm, prog, shape, seed):
    f = build(prog, n_out=1)
    x, y = inputs(shape, seed)
    loss = tracer.value_and_grad(lambda x, y: tnp.sum(tnp.sin(f(x, y)[0])), argnums=(0, 1))
    got = [*f(x, y), *tracer.tree_util.tree_leaves(loss(x, y))]
    tracer.set_backend("numpy")
    want = [*f(x, y), *tracer.tree_util.tree_leaves(loss(x, y))]
    close(got, want, 1e-9)
