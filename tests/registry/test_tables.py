"""The registry tables: kernels keyed by (name, backend), gradients, shape rules, backends.
Missing entries raise errors that name the kernel, the backend and what is registered."""
import numpy as np
import pytest

import registry
import tracer
from tracer.kernels import BUILTIN_KERNELS
from ir import (ArgumentError, BackendNotFoundError, GradientNotFoundError,
                KernelNotFoundError, ShapeRuleNotFoundError)


@pytest.fixture
def backend():
    """A throwaway backend, removed (with its kernels) afterwards."""
    registry.register_backend("test_backend")
    yield "test_backend"
    if "test_backend" in registry.backends():
        registry.unregister_backend("test_backend")


def test_kernels_are_keyed_by_name_and_backend_tuples(backend):
    impl = lambda x: x + 1  # noqa: E731
    registry.register_kernel("add", backend, impl)
    assert ("add", backend) in registry.kernels() and ("add", "numpy") in registry.kernels()
    assert all(isinstance(k, tuple) and len(k) == 2 for k in registry.kernels())
    assert registry.kernels() == sorted(registry.kernels())
    assert registry.get_kernel("add", backend) is impl
    assert registry.get_kernel("add", "numpy") is not impl
    assert registry.has_kernel("add", backend)
    registry.unregister_kernel("add", backend)
    assert not registry.has_kernel("add", backend) and registry.has_kernel("add", "numpy")


def test_reregistering_replaces_and_bumps_the_version(backend):
    v0, e0 = registry.version("test_k"), registry.epoch()
    registry.register_kernel("test_k", backend, lambda x: x)
    second = lambda x: -x  # noqa: E731
    registry.register_kernel("test_k", backend, second)
    assert registry.get_kernel("test_k", backend) is second
    assert registry.version("test_k") == v0 + 2 and registry.epoch() > e0


def test_missing_kernel_names_kernel_backend_and_what_is_registered(backend):
    registry.register_kernel("test_only_here", backend, lambda x: x)
    with pytest.raises(KernelNotFoundError, match=r"no kernel 'test_only_here' for backend "
                                                  r"'numpy': it is registered only for "
                                                  r"backend\(s\) 'test_backend'"):
        registry.get_kernel("test_only_here", "numpy")
    with pytest.raises(KernelNotFoundError) as e:
        registry.get_kernel("ad", "numpy")
    msg = str(e.value)
    assert "no kernel 'ad' for backend 'numpy': no backend has it. Did you mean" in msg
    assert "'add'" in msg and "reduce_sum" in msg and "register_kernel('ad', 'numpy'" in msg
    assert "Backend 'test_backend' has 1 kernels: test_only_here" in str(
        pytest.raises(KernelNotFoundError, registry.get_kernel, "nope", backend).value)
    with pytest.raises(KernelNotFoundError, match="no kernel 'nope'"):
        registry.unregister_kernel("nope", "numpy")


def test_unknown_backend_names_the_registered_ones():
    with pytest.raises(BackendNotFoundError, match=r"unknown backend 'nump'; registered "
                                                   r"backends: 'numpy', 'llvm'.* Did you mean "
                                                   r"'numpy'\?"):
        registry.get_kernel("add", "nump")
    with pytest.raises(BackendNotFoundError, match="registered backends"):
        registry.register_kernel("add", "cuda", lambda x: x)
    with pytest.raises(BackendNotFoundError):
        tracer.set_backend("cuda")
    with pytest.raises(BackendNotFoundError):
        tracer.jit(lambda x: x, backend="cuda")


def test_bad_registrations_are_argument_errors():
    for call in (lambda: registry.register_kernel("", "numpy", abs),
                 lambda: registry.register_kernel(("add",), "numpy", abs),
                 lambda: registry.register_kernel("x", "numpy", 3),
                 lambda: registry.register_gradient("x", "not callable"),
                 lambda: registry.register_shape_rule("x", None),
                 lambda: registry.register_backend("")):
        with pytest.raises(ArgumentError):
            call()


def test_gradient_table():
    g = lambda dy, inputs, outputs, attrs: (dy,)  # noqa: E731
    registry.register_gradient("test_gk", g)
    try:
        assert registry.get_gradient("test_gk") is g and registry.has_gradient("test_gk")
        assert "test_gk" in registry.gradients()
    finally:
        registry.unregister_gradient("test_gk")
    assert not registry.has_gradient("test_gk")
    with pytest.raises(GradientNotFoundError, match=r"no gradient registered for kernel "
                                                    r"'test_gk'.*register_gradient\('test_gk'"):
        registry.get_gradient("test_gk")
    with pytest.raises(GradientNotFoundError, match="Did you mean 'tanh'"):
        registry.unregister_gradient("tahn")


def test_shape_rule_table():
    rule = lambda x: x  # noqa: E731
    registry.register_shape_rule("test_sr", rule)
    assert registry.get_shape_rule("test_sr") is rule and "test_sr" in registry.shape_rules()
    registry.unregister_shape_rule("test_sr")
    with pytest.raises(ShapeRuleNotFoundError, match=r"kernel 'test_sr' has no shape rule, so "
                                                     r"it cannot be traced.*register_shape_rule"):
        registry.get_shape_rule("test_sr")


def test_every_builtin_kernel_has_a_numpy_impl_and_a_shape_rule():
    for k in BUILTIN_KERNELS:
        assert registry.has_kernel(k, "numpy"), k
        registry.get_shape_rule(k)


def test_active_backend_drives_eager_dispatch(backend):
    calls = []
    registry.register_kernel("neg", backend, lambda x: calls.append(x) or np.negative(x))
    assert tracer.get_backend() == "numpy"
    tracer.set_backend(backend)
    try:
        assert tracer.get_backend() == backend
        np.testing.assert_array_equal(tracer.numpy.negative(np.ones(2)), -np.ones(2))
        assert len(calls) == 1
        with pytest.raises(KernelNotFoundError, match="no kernel 'exp' for backend "
                                                      "'test_backend'"):
            tracer.numpy.exp(np.ones(2))
    finally:
        tracer.set_backend("numpy")
    tracer.numpy.negative(np.ones(2))
    assert len(calls) == 1


def test_a_backend_can_route_eager_calls_through_one_function():
    seen = []
    registry.register_backend("test_routed", eager=lambda k, xs, attrs: seen.append(k) or
                              registry.get_kernel(k, "numpy")(*xs, **attrs))
    tracer.set_backend("test_routed")
    try:
        np.testing.assert_allclose(tracer.numpy.sum(np.exp(np.zeros(3))), 3.0)
        assert seen == ["reduce_sum"]
    finally:
        tracer.set_backend("numpy")
        registry.unregister_backend("test_routed")
    assert "test_routed" not in registry.backends()


def test_register_backend_checks_its_runner_and_compiler():
    for kw in ({"eager": "numpy"}, {"compile": 3}):
        with pytest.raises(ArgumentError, match=f"{next(iter(kw))} must be callable"):
            registry.register_backend("test_bad", **kw)
    assert "test_bad" not in registry.backends()

