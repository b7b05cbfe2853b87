"""Tracing from several threads at once: each thread's traces, and the kernels its jit
builds record, are its own. The GIL switch interval is shortened so that threads
interleave inside tracing (on the old process-global trace stack these tests fail)."""
import sys
import threading

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from concurrency import in_thread, run_threads

N_THREADS = 8


@pytest.fixture
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def loss(x):
    return tnp.sum(tnp.tanh(x) * x + tnp.zeros(x.shape))   # zeros: built in the trace


def loss_grad(x):
    t = np.tanh(x)
    return t + x * (1 - t * t)


SHARED = {"jit": tracer.jit(loss, backend="numpy"),
          "jit_llvm": tracer.jit(loss),
          "jit_grad": tracer.jit(tracer.grad(loss), backend="numpy")}


def one_round(rng, k):
    """Every transformation once on fresh inputs, each checked against NumPy."""
    x = rng.standard_normal(3 + k % 4)
    t = rng.standard_normal(x.shape)
    want = np.sum(np.tanh(x) * x)
    np.testing.assert_allclose(SHARED["jit"](x), want, rtol=1e-12)
    np.testing.assert_allclose(SHARED["jit_llvm"](x), want, rtol=1e-10)
    np.testing.assert_allclose(tracer.grad(loss)(x), loss_grad(x), rtol=1e-12)
    np.testing.assert_allclose(SHARED["jit_grad"](x), loss_grad(x), rtol=1e-12)
    out, vjp_fn = tracer.vjp(lambda v: tnp.sin(v) * 2.0, x)
    np.testing.assert_allclose(out, np.sin(x) * 2, rtol=1e-12)
    np.testing.assert_allclose(vjp_fn(t)[0], 2 * np.cos(x) * t, rtol=1e-12)
    _, tangent = tracer.jvp(loss, (x,), (t,))
    np.testing.assert_allclose(tangent, np.dot(loss_grad(x), t), rtol=1e-10)
    graph = tracer.make_graph(tracer.grad(loss))(x)
    assert graph.in_avals[0].shape == x.shape and "tanh" in graph.kernels()
    fresh = tracer.jit(lambda v: tracer.grad(loss)(v) * 2.0, backend="numpy")
    np.testing.assert_allclose(fresh(x), 2 * loss_grad(x), rtol=1e-12)


def test_mixed_transformations_from_eight_threads(fast_switching):
    def work(i):
        rng = np.random.default_rng(i)
        for k in range(8):              # 8 threads x 8 rounds x 10 calls
            one_round(rng, k)
    run_threads(work, N_THREADS)


@pytest.fixture
def scaled_kernel():
    """A kernel `test_scale` (x -> 1 * x) with gradient dy * 1."""
    registry.register_shape_rule("test_scale", lambda x: x)
    registry.register_kernel("test_scale", "numpy", lambda x: x * 1.0)
    registry.register_gradient("test_scale", lambda dy, inputs, outputs, attrs: (dy * 1.0,))
    yield
    for unregister in (registry.unregister_gradient, registry.unregister_shape_rule):
        unregister("test_scale")
    registry.unregister_kernel("test_scale", "numpy")


def triple(dy, inputs, outputs, attrs):
    return (dy * 3.0,)


def scaled_exp_sum(x):
    return tnp.sum(tracer.run_kernel("test_scale", [tnp.exp(x)]))


def test_a_gradient_registered_while_another_thread_builds_is_seen(scaled_kernel):
    """The build reads the old gradient, then the new one is registered before the build
    ends: the entry must not pass for current."""
    started, swapped = threading.Event(), threading.Event()

    def slow_gradient(dy, inputs, outputs, attrs):
        started.set()
        assert swapped.wait(5)
        return (dy * 1.0,)
    registry.register_gradient("test_scale", slow_gradient)
    j = tracer.jit(tracer.grad(scaled_exp_sum), backend="numpy")
    x = np.array([0.5, -1.0])
    join = in_thread(lambda: j(x))
    assert started.wait(5)
    registry.register_gradient("test_scale", triple)
    swapped.set()
    join()
    np.testing.assert_allclose(j(x), 3 * np.exp(x), rtol=1e-14)


def test_overlapping_builds_record_their_own_kernels(scaled_kernel):
    """Build A starts, build B starts, A ends, B goes on: B must still record what it
    uses after A ended (the gradient of test_scale), or a change to it goes unseen."""
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()

    def fa(x):
        a_inside.set()
        assert b_inside.wait(5)
        return x * 2.0

    def fb(x):
        y = tnp.exp(x)
        b_inside.set()
        assert a_done.wait(5)
        return tnp.sum(tracer.run_kernel("test_scale", [y]))
    ja = tracer.jit(fa, backend="numpy")
    jb = tracer.jit(tracer.grad(fb), backend="numpy")
    x = np.array([0.5, -1.0])
    join_a = in_thread(lambda: (ja(x), a_done.set()))
    assert a_inside.wait(5)
    join_b = in_thread(lambda: jb(x))
    join_a()
    join_b()
    registry.register_gradient("test_scale", triple)
    np.testing.assert_allclose(jb(x), 3 * np.exp(x), rtol=1e-14)


def test_tracing_state_is_per_thread():
    """A trace open in one thread is invisible to another: eager ops there stay eager,
    and the open trace's values are leaked tracers there."""
    inside, outside = threading.Event(), threading.Event()
    handed = []

    def f(x):
        handed.append(x)
        inside.set()
        assert outside.wait(5)
        return x * 2.0
    join = in_thread(lambda: np.testing.assert_array_equal(
        tracer.jit(f, backend="numpy")(np.ones(2)), [2.0, 2.0]))
    assert inside.wait(5)
    try:
        eager = tnp.zeros(3) + 1.0          # while the worker's trace is open
        with pytest.raises(tracer.UnexpectedTracerError, match="leaked tracer"):
            handed[0] + 1.0
    finally:
        outside.set()
        join()
    assert type(eager) is np.ndarray
