"""One rule for every path: eager ops, eager grad/vjp/jvp and jit run the active (or
named) backend's kernels, or raise KernelNotFoundError naming the kernel and backend."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import Graph, KernelNotFoundError

X = np.array([0.5, -1.0, 2.0])


def marked_sin(x):
    return np.sin(x) + 100.0        # a user's override, visible in every result


@pytest.fixture
def mine():
    """A user backend with every numpy kernel, `sin` overridden; active while the test
    runs."""
    registry.register_backend("mine")
    for name, backend in registry.kernels():
        if backend == "numpy":
            registry.register_kernel(name, "mine", registry.get_kernel(name, "numpy"))
    registry.register_kernel("sin", "mine", marked_sin)
    tracer.set_backend("mine")
    yield "mine"
    tracer.set_backend("numpy")
    registry.unregister_backend("mine")


def f(x):
    return tnp.sum(x * tnp.sin(x))


def test_eager_ops_and_eager_transformations_agree_on_the_active_backend(mine):
    value = np.sum(X * marked_sin(X))
    grad = marked_sin(X) + X * np.cos(X)
    np.testing.assert_allclose(f(X), value, rtol=1e-14)
    v, g = tracer.value_and_grad(f)(X)
    np.testing.assert_allclose(v, value, rtol=1e-14)
    np.testing.assert_allclose(g, grad, rtol=1e-14)
    out, vjp_fn = tracer.vjp(tnp.sin, X)
    np.testing.assert_allclose(out, marked_sin(X), rtol=1e-14)
    _, t = tracer.jvp(f, (X,), (np.ones(3),))
    np.testing.assert_allclose(t, np.sum(grad), rtol=1e-14)


def test_jit_on_a_named_backend_interprets_with_its_kernels(mine):
    value = np.sum(X * marked_sin(X))
    np.testing.assert_allclose(tracer.jit(f, backend="mine")(X), value, rtol=1e-14)
    lowered = tracer.jit(f, backend="mine").lower(X)
    assert lowered.backend == "mine" and isinstance(lowered.graph, Graph)
    # constants are folded with the named backend's kernels too
    folded = tracer.jit(lambda x: x + tnp.sin(np.ones(3)), backend="mine")
    np.testing.assert_allclose(folded(np.zeros(3)), marked_sin(np.ones(3)), rtol=1e-14)
    # the default jit backend stays llvm, whatever backend is active
    np.testing.assert_allclose(tracer.jit(f)(X), np.sum(X * np.sin(X)), rtol=1e-12)


def test_a_missing_kernel_is_an_error_naming_kernel_and_backend(mine):
    registry.unregister_kernel("cos", "mine")
    with pytest.raises(KernelNotFoundError, match="no kernel 'cos' for backend 'mine'"):
        tracer.grad(f)(X)
    ran = []
    registry.register_kernel("mul", "mine", lambda a, b: ran.append(1) or a * b)
    with pytest.raises(KernelNotFoundError, match="no kernel 'cos' for backend 'mine'"):
        tracer.jit(tracer.grad(f), backend="mine")(X)
    assert ran == []                    # raised before anything ran


def test_a_backend_with_a_compiler_compiles_jit_graphs():
    compiled = []

    class Program:
        def __init__(self, graph):
            self.graph = graph

        def run(self, inputs):
            from lowering.interpreter import evaluate
            return [o * 10 for o in evaluate(self.graph, inputs)]
    registry.register_backend("tenfold", compile=lambda g: compiled.append(g) or Program(g))
    try:
        j = tracer.jit(lambda x: x + 1.0, backend="tenfold")
        np.testing.assert_allclose(j(X), (X + 1) * 10)
        np.testing.assert_allclose(j(X), (X + 1) * 10)
        assert len(compiled) == 1 and isinstance(compiled[0], Graph)
    finally:
        registry.unregister_backend("tenfold")


def test_a_backend_routing_eager_calls_through_one_function_serves_jit_and_grad():
    seen = []

    def eager(kernel, arrays, attrs):
        seen.append(kernel)
        return registry.get_kernel(kernel, "numpy")(*arrays, **attrs)
    registry.register_backend("routed", eager=eager)
    tracer.set_backend("routed")
    try:
        np.testing.assert_allclose(tracer.grad(f)(X), np.sin(X) + X * np.cos(X), rtol=1e-14)
        assert "cos" in seen
        seen.clear()
        np.testing.assert_allclose(tracer.jit(f, backend="routed")(X), np.sum(X * np.sin(X)))
        assert "sin" in seen
    finally:
        tracer.set_backend("numpy")
        registry.unregister_backend("routed")


def test_eager_grad_with_llvm_active_runs_llvm_kernels():
    from lowering.llvm import compile_graph, run_eager
    seen = []
    registry.register_backend("llvm", eager=lambda k, xs, attrs: seen.append(k) or
                              run_eager(k, xs, attrs), compile=compile_graph)
    tracer.set_backend("llvm")
    try:
        np.testing.assert_allclose(tracer.grad(f)(X), np.sin(X) + X * np.cos(X), rtol=1e-12)
    finally:
        tracer.set_backend("numpy")
        registry.register_backend("llvm", eager=run_eager, compile=compile_graph)
    assert "cos" in seen
