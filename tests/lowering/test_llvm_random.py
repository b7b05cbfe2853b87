"""Random compositions (hypothesis): the llvm backend against the numpy backend on the
same traced graphs, forward and gradient graphs, which exercises fusion decisions
(shared values, broadcasts, reductions feeding loops, index maps of index maps)."""
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import tracer
import tracer.numpy as tnp

SMOOTH = {
    "tanh": tnp.tanh, "sin": tnp.sin, "exp": lambda v: tnp.exp(tnp.tanh(v)),
    "square": lambda v: v * v, "log1p_sq": lambda v: tnp.log1p(v * v), "neg": lambda v: -v,
    "scale": lambda v: v * 1.5 - 0.25,
}
KINKED = {"abs": tnp.abs, "relu": tracer.nn.relu, "sign": lambda v: tnp.sign(v) * v}
BINARY = {"add": tnp.add, "sub": tnp.subtract, "mul": tnp.multiply,
          "div": lambda a, b: a / (1.0 + b * b)}
KINKED_BINARY = {"max": tnp.maximum, "min": tnp.minimum,
                 "where": lambda a, b: tnp.where(a > b, a, b)}


def _full(v, shape):
    return tnp.broadcast_to(v, shape)


def _apply(step, pool, shape):
    """One random op on values of `pool`; every result broadcasts to `shape` (a, b)."""
    kind, name, i, j, axis = step
    x, y = pool[i % len(pool)], pool[j % len(pool)]
    if kind == "unary":
        return {**SMOOTH, **KINKED}[name](x)
    if kind == "binary":
        return {**BINARY, **KINKED_BINARY}[name](x, y)
    if kind == "reduce":
        fn = {"sum": tnp.sum, "mean": tnp.mean, "max": tnp.max}[name]
        return fn(_full(x, shape), axis=axis, keepdims=True)
    full = _full(x, shape)
    if name == "rev":
        return full[::-1] if axis == 0 else full[:, ::-1]
    if name == "roll":
        return tnp.concatenate([full[1:], full[:1]], axis=0)
    if name == "take":
        return tnp.take(full, np.arange(shape[1])[::-1], axis=1)
    if name == "transpose2":
        return tnp.transpose(tnp.transpose(full).reshape(shape[::-1]))
    return full @ tnp.broadcast_to(_full(y, shape)[:1].T, (shape[1], shape[1])) * 0.5


def programs(smooth):
    unary = sorted(SMOOTH) if smooth else sorted({**SMOOTH, **KINKED})
    binary = sorted(BINARY) if smooth else sorted({**BINARY, **KINKED_BINARY})
    idx = st.integers(0, 8)
    step = st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(unary), idx, idx, st.just(None)),
        st.tuples(st.just("binary"), st.sampled_from(binary), idx, idx, st.just(None)),
        st.tuples(st.just("reduce"), st.sampled_from(["sum", "mean"] if smooth else
                                                     ["sum", "mean", "max"]),
                  idx, idx, st.sampled_from([0, 1, (0, 1)])),
        st.tuples(st.just("shape"), st.sampled_from(["rev", "roll", "take", "transpose2",
                                                     "matmul"]),
                  idx, idx, st.sampled_from([0, 1])))
    return st.lists(step, min_size=1, max_size=7)


def build(steps, shape, n_out=2):
    def f(x, y):
        pool = [x, y]
        for s in steps:
            pool.append(_apply(s, pool, shape))
        return tuple(_full(v, shape) for v in pool[-n_out:])
    return f


SHAPES = st.tuples(st.integers(1, 4), st.integers(1, 5))
Y_SHAPES = st.sampled_from(["full", "row", "col", "scalar"])


def inputs(shape, yshape, dtype, seed):
    rng = np.random.default_rng(seed)
    ys = {"full": shape, "row": (shape[1],), "col": (shape[0], 1), "scalar": ()}[yshape]
    return rng.uniform(-1.5, 1.5, shape).astype(dtype), rng.uniform(-1.5, 1.5, ys).astype(dtype)


def close(got, want, rtol):
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(programs(smooth=False), SHAPES, Y_SHAPES, st.sampled_from([np.float32, np.float64]),
       st.integers(0, 2**16))
def test_random_graphs_llvm_matches_numpy_backend(steps, shape, yshape, dtype, seed):
    f = build(steps, shape)
    x, y = inputs(shape, yshape, dtype, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = tracer.jit(f, backend="numpy")(x, y)
    close(tracer.jit(f, backend="llvm")(x, y), want, 1e-4 if dtype == np.float32 else 1e-10)


@SETTINGS
@given(programs(smooth=True), SHAPES, Y_SHAPES, st.integers(0, 2**16))
def test_random_gradient_graphs_llvm_matches_numpy_backend(steps, shape, yshape, seed):
    f = build(steps, shape, n_out=1)
    x, y = inputs(shape, yshape, np.float64, seed)
    w = np.random.default_rng(seed + 1).normal(size=shape)
    loss = tracer.value_and_grad(lambda x, y: tnp.sum(f(x, y)[0] * w), argnums=(0, 1))
    want = tracer.jit(loss, backend="numpy")(x, y)
    got = tracer.jit(loss, backend="llvm")(x, y)
    close([got[0], *got[1]], [want[0], *want[1]], 1e-9)
