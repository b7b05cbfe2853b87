"""Results are arrays of their own, and kernel results are checked, on every backend.

JAX semantics: a result never aliases an argument, a constant of the program, or another
result, so the caller may mutate any of them in place. And a kernel's result must match its
shape rule wherever it is used (eager grad, the interpreter, constant folding inside jit),
or the error names the kernel and backend; nothing downstream trusts an unchecked array.
"""
from contextlib import nullcontext

import numpy as np
import pytest

import registry
from ir import Graph
from lowering.llvm import compile_graph
import tracer
import tracer.numpy as tnp
from tracer.background_compile import optimize

BACKENDS = ["llvm", "numpy"]


def _independent(*arrays):
    for i, a in enumerate(arrays):
        assert isinstance(a, np.ndarray) and a.flags.writeable
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_merged_outputs_are_separate_arrays(backend):
    p = {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)}
    s = tracer.jit(lambda p: {k: tnp.zeros_like(v) for k, v in p.items()}, backend=backend)(p)
    s["a"] += 1
    np.testing.assert_array_equal(s["b"], 0)
    x = np.arange(3.0)
    _independent(x, *tracer.jit(lambda x: (x * 2, x * 2, x * 2 + 0), backend=backend)(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_identity_and_view_outputs_do_not_alias_arguments(backend):
    x = np.arange(6.0)
    y = tracer.jit(lambda x: x, backend=backend)(x)
    assert y is not x
    _independent(x, y)
    outs = tracer.jit(lambda x: (tnp.reshape(x, (2, 3)), x, tnp.transpose(
        tnp.reshape(x, (2, 3)))), backend=backend)(x)
    _independent(x, *outs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_outputs_are_fresh_every_call(backend):
    f = tracer.jit(lambda: (tnp.ones(3), tnp.ones(3), 2.0), backend=backend)
    a, b, c = f()
    _independent(a, b, c)
    a += 1
    c += 1
    np.testing.assert_array_equal(f()[0], 1)
    assert f()[2] == 2.0


def test_eager_gradients_are_separate_arrays():
    p = {"a": np.ones(3), "b": np.ones(3)}
    g = tracer.grad(lambda p: tnp.sum(p["a"] * 0) + tnp.sum(p["b"] * 0))(p)
    _independent(p["a"], p["b"], g["a"], g["b"])
    out, vjp_fn = tracer.vjp(lambda x: x, p["a"])
    _independent(p["a"], out, vjp_fn(p["b"])[0], p["b"])


@pytest.fixture
def short_kernel():
    """A user kernel whose numpy impl returns one element fewer than its rule promises."""
    name = "test_outputs_short"
    registry.register_shape_rule(name, lambda x: x)
    registry.register_kernel(name, "numpy", lambda x: np.array(x[1:]))
    registry.register_gradient(name, lambda dy, inputs, outputs, attrs: (dy,))
    yield name
    registry.unregister_kernel(name, "numpy")
    registry.unregister_gradient(name)
    registry.unregister_shape_rule(name)


@pytest.mark.parametrize("lower", ["llvm", "numpy"])
def test_constant_folding_checks_kernel_results(short_kernel, lower):
    """A node on constants only (as inlining leaves them) is folded at compile time: its
    result must be checked before the program is built around the promised shape."""
    big = np.arange(1000.0)
    g = tracer.make_graph(lambda c: tracer.run_kernel(short_kernel, [c]) * 2.0)(big)
    g = Graph([], g.outvars, g.nodes, g.invars, [big])        # the input is now a constant
    with pytest.raises(tracer.KernelError, match=f"{short_kernel}.*numpy.*f64\\[1000\\]"):
        compile_graph(g).run([]) if lower == "llvm" else optimize(g)


@pytest.mark.parametrize("run", ["jit-numpy", "eager-grad", "llvm-fallback"])
def test_interpreted_kernel_results_are_checked(short_kernel, run):
    x = np.arange(4.0)

    def f(x):
        return tnp.sum(tracer.run_kernel(short_kernel, [x * 1.0]))
    call = {"jit-numpy": lambda: tracer.jit(f, backend="numpy")(x),
            "eager-grad": lambda: tracer.value_and_grad(f)(x),
            "llvm-fallback": lambda: tracer.jit(f)(x)}[run]
    with pytest.warns(UserWarning) if run == "llvm-fallback" else nullcontext():
        with pytest.raises(tracer.KernelError, match=short_kernel):
            call()


@pytest.fixture
def pair_kernel():
    """A two-output rule whose impl returns one output, then a wrong dtype."""
    name = "test_outputs_pair"
    registry.register_shape_rule(name, lambda x: (x, x))
    yield name
    registry.unregister_kernel(name, "numpy")
    registry.unregister_shape_rule(name)


def test_output_count_and_dtype_are_checked(pair_kernel):
    x = np.arange(3.0)
    f = tracer.jit(lambda x: tracer.run_kernel(pair_kernel, [x]), backend="numpy")
    registry.register_kernel(pair_kernel, "numpy", lambda x: x + 1)
    with pytest.raises(tracer.KernelError, match="1 outputs.*says 2"):
        f(x)
    registry.register_kernel(pair_kernel, "numpy", lambda x: (x, x.astype(np.float32)))
    with pytest.raises(tracer.KernelError, match="float32.*output 1"):
        f(x)



@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["reshape", "same_reshape", "transpose", "transpose_1d",
                                "broadcast_to", "squeeze", "expand_dims", "ravel", "slice"])
def test_eager_ops_do_not_return_views_of_their_arguments(backend, op):
    x = np.arange(6.0).reshape(1, 6)
    fn = {"reshape": lambda x: tnp.reshape(x, (2, 3)), "same_reshape": lambda x: tnp.reshape(
        x, (1, 6)), "transpose": tnp.transpose, "transpose_1d": lambda x: tnp.transpose(x[0]),
        "broadcast_to": lambda x: tnp.broadcast_to(x, (3, 6)), "squeeze": tnp.squeeze,
        "expand_dims": lambda x: tnp.expand_dims(x, 0), "ravel": tnp.ravel,
        "slice": lambda x: tracer.run_kernel("slice", [x], {"start": (0, 1), "limit": (1, 4),
                                                            "step": (1, 1)})}[op]
    before = tracer.get_backend()
    tracer.set_backend(backend)
    try:
        out = fn(x)
    finally:
        tracer.set_backend(before)
    _independent(x, out)
