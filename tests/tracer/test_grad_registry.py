"""The gradient registry seen from autodiff: overrides (eager, jit, jvp, cache
invalidation), new kernels, unregister, and errors raised before anything runs."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from grad_helpers import registry_snapshot
from tracer import core, grad, jit, jvp, run_kernel, vjp
from tracer.autodiff import check_differentiable

X = np.array([0.5, -1.0, 2.0])


@pytest.fixture
def reg():
    with registry_snapshot() as r:
        yield r


def sum_tanh(x):
    return tnp.sum(tnp.tanh(x))


def doubled(dy, inputs, outputs, attrs):
    return (2 * dy,)


def test_override_changes_eager_and_jitted_gradients_and_restore_undoes_it(reg):
    jitted_grad = jit(grad(sum_tanh), backend="numpy")
    grad_of_jit = grad(jit(sum_tanh, backend="numpy"))
    true = 1 - np.tanh(X) ** 2
    np.testing.assert_allclose(jitted_grad(X), true)
    np.testing.assert_allclose(grad_of_jit(X), true)
    old = reg.get_gradient("tanh")
    reg.register_gradient("tanh", doubled)
    for fun in (grad(sum_tanh), jitted_grad, grad_of_jit):
        np.testing.assert_allclose(fun(X), 2.0)        # cached jit entries were rebuilt
    reg.register_gradient("tanh", old)
    np.testing.assert_allclose(jitted_grad(X), true)


def test_consulted_gradients_are_recorded_for_the_jit_cache():
    """check_differentiable notes each kernel whose gradient it will use (and no other),
    which is how a jit entry knows its gradients' registry versions."""
    graph = tracer.make_graph(lambda x, y: tnp.sum(tnp.tanh(x)) * tnp.exp(y))(X, 1.0)
    with core.recording_kernels() as touched:
        check_differentiable(graph, [True, False])
    assert touched == {"tanh", "reduce_sum", "mul"}


def test_override_is_used_by_jvp_and_second_order(reg):
    reg.register_gradient("tanh", doubled)
    np.testing.assert_allclose(jvp(tnp.tanh, (X,), (np.ones(3),))[1], 2.0)
    # d/dx (tanh(x) x) = 2 x + tanh(x) under the override, so d2/dx2 = 2 + 2
    assert grad(grad(lambda x: tnp.tanh(x) * x))(0.5) == 4.0


def test_clipped_gradient_override(reg):
    def clipped_exp(dy, inputs, outputs, attrs):
        return (tnp.clip(dy * outputs, -1.0, 1.0),)
    reg.register_gradient("exp", clipped_exp)
    np.testing.assert_allclose(grad(lambda x: tnp.sum(tnp.exp(x)))(X), [1.0, np.exp(-1.0), 1.0])


def test_unregister_gradient_makes_differentiation_an_error(reg):
    jitted_grad = jit(grad(sum_tanh), backend="numpy")
    jitted_grad(X)
    reg.unregister_gradient("tanh")
    assert not reg.has_gradient("tanh")
    for fun in (grad(sum_tanh), jitted_grad, lambda x: jvp(sum_tanh, (x,), (x,)),
                lambda x: vjp(sum_tanh, x)):
        with pytest.raises(tracer.GradientNotFoundError, match="'tanh'"):
            fun(X)
    np.testing.assert_allclose(sum_tanh(X), np.sum(np.tanh(X)))   # the forward still works
    with pytest.raises(tracer.GradientNotFoundError, match="'tanh'"):
        reg.unregister_gradient("tanh")


def _new_kernel(reg, name, calls=None, gradient=None):
    """A numpy kernel `name` computing x * x (recording its calls) with a shape rule."""
    def impl(x):
        if calls is not None:
            calls.append(name)
        return x * x
    reg.register_kernel(name, "numpy", impl)
    reg.register_shape_rule(name, lambda x: x)
    if gradient is not None:
        reg.register_gradient(name, gradient)


def test_new_kernel_with_registered_gradient_works_everywhere(reg):
    _new_kernel(reg, "square", gradient=lambda dy, i, o, a: (2 * dy * i[0],))

    def f(x):
        return tnp.sum(tnp.sin(run_kernel("square", [x])))
    want = 2 * X * np.cos(X * X)
    np.testing.assert_allclose(grad(f)(X), want, rtol=1e-14)
    np.testing.assert_allclose(jit(grad(f), backend="numpy")(X), want, rtol=1e-14)
    np.testing.assert_allclose(jvp(f, (X,), (np.ones(3),))[1], want.sum(), rtol=1e-14)
    tracer.check_grads(f, (X,), order=2)


# ---- errors raised before anything runs -------------------------------------------------

def test_missing_gradient_names_kernel_source_line_and_fix_before_running(reg):
    calls = []
    _new_kernel(reg, "recorded", calls)

    def f(x):
        return tnp.sum(run_kernel("recorded", [x]))   # the line the message must name
    line = f.__code__.co_firstlineno + 1
    for fun in (grad(f), jit(grad(f), backend="numpy"), grad(jit(f, backend="numpy")),
                lambda x: jvp(f, (x,), (x,)), lambda x: vjp(f, x)):
        with pytest.raises(tracer.GradientNotFoundError) as e:
            fun(X)
        msg = str(e.value)
        assert "'recorded'" in msg and f"test_grad_registry.py:{line}" in msg
        assert "registry.register_gradient('recorded'" in msg
    assert calls == []
    # a kernel off the differentiated path needs no gradient
    np.testing.assert_allclose(grad(lambda x, y: tnp.sum(x * run_kernel("recorded", [y])))(
        X, X), X * X)


@pytest.mark.parametrize("bad,match", [
    (lambda dy, i, o, a: (tnp.sum(dy),), r"for input 0 has shape \(\)"),
    (lambda dy, i, o, a: (dy, dy), "returned 2 values for 1 inputs"),
], ids=["shape", "count"])
def test_malformed_gradient_names_the_kernel_before_running(reg, bad, match):
    calls = []
    _new_kernel(reg, "recorded", calls, gradient=bad)
    with pytest.raises(tracer.GradientError, match=match) as e:
        grad(lambda x: tnp.sum(run_kernel("recorded", [x])))(X)
    assert "'recorded'" in str(e.value)
    assert calls == []


def test_grad_argument_errors_before_running(reg):
    calls = []
    _new_kernel(reg, "recorded", calls, gradient=lambda dy, i, o, a: (2 * dy * i[0],))
    with pytest.raises(tracer.GradientError, match="float scalar.*use vjp"):
        grad(lambda x: run_kernel("recorded", [x]))(X)
    with pytest.raises(tracer.GradientError, match="float scalar"):
        grad(lambda x: tnp.sum(run_kernel("recorded", [x])).astype(np.int64))(X)
    for bad in (np.array([1, 2]), np.array([True, False]), 3):
        with pytest.raises(tracer.DTypeError, match="float"):
            grad(lambda x: tnp.sum(run_kernel("recorded", [x])))(bad)
    with pytest.raises(tracer.GradientError, match="argnums"):
        grad(lambda x: tnp.sum(run_kernel("recorded", [x])), argnums=1)(X)
    with pytest.raises(tracer.GradientError, match="pair"):
        grad(lambda x: tnp.sum(run_kernel("recorded", [x])), has_aux=True)(X)
    assert calls == []


def test_a_kernel_declared_not_differentiable_passes_no_gradient():
    """registry.families: outputs of a kernel declared not differentiable act as constants
    (autodiff needs no gradient entry for it); redeclaring it differentiable asks for one."""
    registry.register_kernel("nd_round", "numpy", lambda x: np.round(x))
    registry.register_shape_rule("nd_round", lambda x: x)
    f = lambda x: tnp.sum(run_kernel("nd_round", [x]) * x)  # noqa: E731
    x = np.array([0.4, 1.6, -2.2])
    try:
        with pytest.raises(tracer.GradientNotFoundError, match="nd_round"):
            tracer.grad(f)(x)
        registry.declare_family("nd_round", "elementwise", differentiable=False)
        np.testing.assert_allclose(tracer.grad(f)(x), np.round(x))
        jitted = tracer.jit(tracer.grad(f), backend="numpy")
        np.testing.assert_allclose(jitted(x), np.round(x))
        registry.declare_family("nd_round", "elementwise")
        for g in (tracer.grad(f), jitted):              # the jit entry is rebuilt
            with pytest.raises(tracer.GradientNotFoundError, match="nd_round"):
                g(x)
    finally:
        registry.declare_family("nd_round", None)
        registry.unregister_kernel("nd_round", "numpy")
