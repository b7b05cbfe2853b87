"""registry.declare_kernel declares a kernel's backend-independent facts in one call, the
path define_kernel and the built-in declarations (tracer.kernels) share: a redeclaration
drops what it leaves out (a differentiable form and a pruner too), a bad part registers
nothing, a kernel vmap would loop over warns at the caller's line (one with no operands
does not: vmap never batches it), and every family with a shared batching rule (linalg
too) batches with no rule of its own."""
import warnings

import numpy as np
import pytest

import registry
import tracer
from ir import ArgumentError, KernelNotFoundError, ShapedArray
from registry import families

NAME = "test_declare_twice"


@pytest.fixture
def forget():
    yield
    registry.forget_kernel(NAME)


def _grad(dy, inputs, outputs, attrs):
    return (2 * dy,)


def test_declares_each_fact_and_a_redeclaration_drops_the_rest(forget):
    rule = lambda x: x   # noqa: E731
    registry.declare_kernel(NAME, shape=rule, family="elementwise", gradient=_grad,
                            effects=True)
    assert registry.get_shape_rule(NAME) is rule and registry.get_gradient(NAME) is _grad
    assert registry.family(NAME) == "elementwise" and registry.has_effects(NAME)
    before = registry.version(NAME)
    registry.declare_kernel(NAME, shape=rule, family="elementwise", differentiable=False)
    assert registry.version(NAME) > before
    assert not registry.has_gradient(NAME) and not registry.has_effects(NAME)
    assert not families.differentiable(NAME)


def test_a_form_and_a_pruner_are_declared_and_dropped_by_a_redeclaration(forget):
    form, prune = (lambda attrs: attrs), (lambda node, used: node)
    registry.declare_kernel(NAME, shape=lambda x: x, family="control_flow",
                            batching=lambda inputs, dims, attrs: (inputs[0], dims[0]),
                            form=form, pruner=prune)
    assert families.FORMS.get(NAME) is form and families.PRUNERS.get(NAME) is prune
    described = str(registry.describe(NAME))
    assert "diff. form" in described and "pruner" in described
    registry.declare_kernel(NAME, shape=lambda x: x, family="elementwise")
    assert not families.FORMS.has(NAME) and not families.PRUNERS.has(NAME)


def test_a_kernel_with_no_operands_does_not_warn(forget):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.declare_kernel(NAME, shape=lambda **attrs: ShapedArray((), np.int32))
    assert "none needed" in str(registry.describe(NAME))


def test_a_bad_part_names_the_call_and_registers_nothing(forget):
    for bad in (dict(shape=None), dict(shape=lambda x: x, family="elementwize"),
                dict(shape=lambda x: x, gradient=3), dict(shape=lambda x: x, form=3),
                dict(shape=lambda x: x, pruner="dce"),
                dict(shape=lambda x: x, gradient=_grad, differentiable=False)):
        with pytest.raises(ArgumentError, match=rf"declare_kernel\('{NAME}'\)"):
            registry.declare_kernel(NAME, **bad)
        assert NAME not in registry.shape_rules() and not registry.has_gradient(NAME)


def test_warns_at_the_callers_line_when_vmap_would_loop(forget):
    with pytest.warns(UserWarning, match=rf"declare_kernel\('{NAME}'\): no batching rule") \
            as caught:
        registry.declare_kernel(NAME, shape=lambda x: x, family="reduction")
    assert caught[0].filename == __file__


def test_a_linalg_kernel_batches_with_the_family_rule_without_a_loop(forget):
    def rule(a):
        return ShapedArray(a.shape, a.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.define_kernel(NAME, shape=rule, numpy=lambda a: np.linalg.inv(a),
                               family="linalg")
    mats = np.eye(3, dtype=np.float64) * np.arange(1.0, 5.0)[:, None, None]
    f = tracer.vmap(lambda a: tracer.run_kernel(NAME, [a]))
    g = tracer.make_graph(f)(mats)
    assert [n.kernel for n in g.nodes] == [NAME]
    assert g.nodes[0].inputs[0].aval.shape == (4, 3, 3)
    np.testing.assert_allclose(f(mats), np.linalg.inv(mats))


def test_forget_kernel_removes_every_part_for_every_backend():
    registry.define_kernel(NAME, shape=lambda x: x, numpy=lambda x: x, family="elementwise",
                           llvm=lambda ctx, x: x, onnx="Identity",
                           gradient=lambda dy, i, o, a: (dy,))
    registry.register_exporter(NAME, "other", lambda g, inputs, attrs: None)
    before = registry.version(NAME)
    assert registry.forget_kernel(NAME)
    assert registry.version(NAME) != before            # caches that used it are stale
    assert not any(k == NAME for k, _ in registry.kernels())
    assert not registry.has_gradient(NAME) and registry.family(NAME) is None
    assert not registry.has_exporter(NAME, "onnx") and not registry.has_exporter(NAME, "other")
    with pytest.raises(KernelNotFoundError, match=NAME):
        registry.describe(NAME)
    assert not registry.forget_kernel(NAME)
