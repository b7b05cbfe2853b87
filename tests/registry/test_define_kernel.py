"""A kernel declared with one registry.define_kernel call works everywhere: eagerly, under
jit on both backends (fused on llvm), grad, jvp, vmap (no loop) and ONNX export; the
register_* calls override one part; describe lists what is declared."""
import importlib.util
import os
import warnings

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import ArgumentError, KernelNotFoundError
from registry.define import SHARED_BATCHING

NAME = "test_dk_softplus"
X = np.array([-2.0, -0.5, 0.0, 1.5, 3.0], np.float32)


def _softplus_llvm(ctx, x):
    """max(x, 0) + log1p(exp(-|x|))"""
    b = ctx.b
    tail = ctx.math("log1p", ctx.math("exp", b.fneg(ctx.intrinsic("fabs", x))))
    zero = ctx.const(0.0)
    return b.fadd(b.select(b.fcmp_ordered(">", x, zero), x, zero), tail)


def _define(name=NAME, **overrides):
    parts = dict(shape=lambda x: x, numpy=lambda x: np.logaddexp(x.dtype.type(0), x),
                 family="elementwise", llvm=_softplus_llvm, onnx="Softplus",
                 gradient=lambda dy, inputs, outputs, attrs: (dy * tracer.nn.sigmoid(
                     inputs[0]),))
    parts.update(overrides)
    registry.define_kernel(name, **parts)


@pytest.fixture
def softplus():
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no warning at definition
        _define()
    yield lambda x: tracer.run_kernel(NAME, [x])
    registry.forget_kernel(NAME)


def _expected(x):
    return np.logaddexp(np.float32(0), x)


def _top_kernels(graph):
    return [n.kernel for n in graph.nodes]


def test_eager_and_jit_on_both_backends(softplus):
    np.testing.assert_allclose(softplus(X), _expected(X), rtol=1e-6)
    f = lambda x: softplus(x) * 2 + 1  # noqa: E731
    np.testing.assert_allclose(tracer.jit(f, backend="numpy")(X), 2 * _expected(X) + 1,
                               rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no "runs through its numpy kernel" fallback
        jitted = tracer.jit(f, backend="llvm")
        np.testing.assert_allclose(jitted(X), 2 * _expected(X) + 1, rtol=1e-5)
        lowered = jitted.lower(X)
    assert _top_kernels(lowered.graph) == ["fusion"]       # fused with the mul and add
    body = lowered.graph.nodes[0].attrs["body"]
    assert NAME in _top_kernels(body)


def test_grad_and_jvp(softplus):
    sigmoid = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(softplus(x)))(X), sigmoid,
                               rtol=1e-6)
    out, tangent = tracer.jvp(softplus, (X,), (np.full_like(X, 2.0),))
    np.testing.assert_allclose(out, _expected(X), rtol=1e-6)
    np.testing.assert_allclose(tangent, 2 * sigmoid, rtol=1e-6)


def test_vmap_batches_the_kernel_without_a_loop(softplus):
    xs = np.stack([X, -X, 2 * X])
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no "no batching rule" warning
        graph = tracer.make_graph(tracer.vmap(softplus))(xs)
        np.testing.assert_allclose(tracer.vmap(softplus)(xs), _expected(xs), rtol=1e-6)
    assert _top_kernels(graph) == [NAME]
    assert graph.nodes[0].outputs[0].aval.shape == xs.shape


def test_onnx_export_runs_in_onnxruntime(softplus):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from tracer.export import to_onnx
    model = to_onnx(lambda x: softplus(x) * 2, X)
    assert "Softplus" in [n.op_type for n in model.graph.node]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = sess.run(None, {sess.get_inputs()[0].name: X})
    np.testing.assert_allclose(out, softplus(X) * 2, rtol=1e-6)      # the eager result


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_redefining_invalidates_jit_entries(softplus, backend):
    f = tracer.jit(lambda x: softplus(x) + 1, backend=backend)
    np.testing.assert_allclose(f(X), _expected(X) + 1, rtol=1e-5)
    _define(numpy=lambda x: x * 3, llvm=lambda ctx, x: ctx.b.fmul(x, ctx.const(3.0)))
    np.testing.assert_allclose(f(X), X * 3 + 1, rtol=1e-6)


def test_register_overrides_one_part(softplus):
    f = tracer.jit(softplus, backend="numpy")
    f(X)
    registry.register_kernel(NAME, "numpy", lambda x: x - 1)
    np.testing.assert_allclose(softplus(X), X - 1)
    np.testing.assert_allclose(f(X), X - 1)
    assert registry.family(NAME) == "elementwise" and registry.has_gradient(NAME)
    registry.register_gradient(NAME, lambda dy, inputs, outputs, attrs: (dy * 5,))
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(softplus(x)))(X), 5.0)


def test_describe_lists_every_part(softplus):
    text = str(registry.describe(NAME))
    assert text.splitlines()[0] == f"kernel '{NAME}'"
    for part in ("shape rule", "impl [numpy]", "impl [llvm]", "_softplus_llvm",
                 "family          elementwise", "gradient", "the shared elementwise rule",
                 "exporter [onnx]", "effects         no"):
        assert part in text, part
    registry.register_batching_rule(NAME, lambda inputs, dims, attrs: None)
    assert "the shared elementwise rule" not in str(registry.describe(NAME))
    with pytest.raises(KernelNotFoundError, match="describe"):
        registry.describe("test_dk_no_such_kernel")


def test_not_differentiable_gives_zero_gradient_without_error():
    _define(name="test_dk_round", numpy=np.round, llvm=None, onnx="Round", gradient=None,
            differentiable=False)
    try:
        g = tracer.grad(lambda x: tnp.sum(tracer.run_kernel("test_dk_round", [x]) * x))(X)
        np.testing.assert_allclose(g, np.round(X))     # only the direct x term
        assert "not differentiable" in str(registry.describe("test_dk_round"))
    finally:
        registry.forget_kernel("test_dk_round")


def test_effects_and_redefinition_drop_parts_left_out():
    _define(name="test_dk_fx", effects=True)
    try:
        assert registry.has_effects("test_dk_fx") and registry.has_kernel("test_dk_fx", "llvm")
        _define(name="test_dk_fx", llvm=None, onnx=None, gradient=None)
        assert not registry.has_effects("test_dk_fx")
        assert not registry.has_kernel("test_dk_fx", "llvm")
        assert not registry.has_exporter("test_dk_fx", "onnx")
        assert not registry.has_gradient("test_dk_fx")
    finally:
        registry.forget_kernel("test_dk_fx")


def test_warns_when_vmap_would_need_a_loop():
    with pytest.warns(UserWarning, match=r"define_kernel\('test_dk_loop'\): no batching rule "
                                         r"and no family batched by a shared rule"):
        _define(name="test_dk_loop", family=None, onnx=None)
    registry.forget_kernel("test_dk_loop")


def test_bad_declarations_are_argument_errors_and_register_nothing():
    v0 = registry.version("test_dk_bad")
    for bad in (dict(numpy=3), dict(family="elemwise"), dict(gradient="no"),
                dict(llvm=3), dict(family="reduction", onnx="Softplus"),
                dict(differentiable=False)):
        with pytest.raises(ArgumentError, match="define_kernel"):
            _define(name="test_dk_bad", **bad)
    assert registry.version("test_dk_bad") == v0


def test_shared_batching_families_match_vmap():
    from tracer.vmap import FAMILY_RULES
    assert set(FAMILY_RULES) == SHARED_BATCHING


def test_custom_ops_example_softplus_vmaps_to_one_batched_node():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "custom_ops.py")
    spec = importlib.util.spec_from_file_location("custom_ops_example", path)
    example = importlib.util.module_from_spec(spec)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            spec.loader.exec_module(example)
            graph = tracer.make_graph(tracer.vmap(example.softplus))(np.stack([X, -X]))
        assert _top_kernels(graph) == ["softplus"]
    finally:
        registry.forget_kernel("softplus")
