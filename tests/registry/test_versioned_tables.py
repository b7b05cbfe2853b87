"""Every registry table is one VersionedTable: each change to any of them bumps the
kernel's version (what jit entries compare with), and the calls behave alike."""
import pytest

import registry
from ir import ArgumentError, KernelNotFoundError
from registry import families

NAME = "test_versioned_k"


def _fn(*args, **kwargs):
    return None


# (register call, unregister call, has call): each changes one table for kernel NAME
TABLES = {
    "kernel": (lambda: registry.register_kernel(NAME, "numpy", _fn),
               lambda: registry.unregister_kernel(NAME, "numpy"),
               lambda: registry.has_kernel(NAME, "numpy")),
    "gradient": (lambda: registry.register_gradient(NAME, _fn),
                 lambda: registry.unregister_gradient(NAME),
                 lambda: registry.has_gradient(NAME)),
    "shape_rule": (lambda: registry.register_shape_rule(NAME, _fn),
                   lambda: registry.unregister_shape_rule(NAME),
                   lambda: NAME in registry.shape_rules()),
    "batching_rule": (lambda: registry.register_batching_rule(NAME, _fn),
                      lambda: registry.unregister_batching_rule(NAME),
                      lambda: registry.has_batching_rule(NAME)),
    "exporter": (lambda: registry.register_exporter(NAME, "onnx", _fn),
                 lambda: registry.unregister_exporter(NAME, "onnx"),
                 lambda: registry.has_exporter(NAME, "onnx")),
    "family": (lambda: registry.declare_family(NAME, "elementwise"),
               lambda: registry.declare_family(NAME, None),
               lambda: registry.family(NAME) == "elementwise"),
    "effects": (lambda: registry.declare_effects(NAME),
                lambda: registry.declare_effects(NAME, False),
                lambda: registry.has_effects(NAME)),
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_register_and_unregister_bump_the_kernel_version(table):
    register, unregister, has = TABLES[table]
    v0, e0 = registry.version(NAME), registry.epoch()
    register()
    try:
        assert has() and registry.version(NAME) == v0 + 1 and registry.epoch() > e0
        register()     # re-registering replaces: a new version again
        assert registry.version(NAME) == v0 + 2
    finally:
        unregister()
    assert not has() and registry.version(NAME) == v0 + 3


def test_not_differentiable_is_a_versioned_flag():
    v0 = registry.version(NAME)
    registry.declare_family(NAME, "elementwise", differentiable=False)
    try:
        assert not families.differentiable(NAME) and registry.version(NAME) > v0
    finally:
        registry.declare_family(NAME, None)
    assert families.differentiable(NAME)


def test_missing_entries_and_bad_registrations_raise_clear_errors():
    with pytest.raises(KernelNotFoundError, match=f"no batching rule registered for kernel "
                                                  f"'{NAME}'"):
        registry.unregister_batching_rule(NAME)
    with pytest.raises(KernelNotFoundError, match=f"no 'onnx' exporter for kernel '{NAME}'"):
        registry.unregister_exporter(NAME, "onnx")
    with pytest.raises(ArgumentError, match=r"register_exporter\('x', 'onnx'\): fn must be "
                                            r"callable"):
        registry.register_exporter("x", "onnx", 3)
    with pytest.raises(ArgumentError, match="unknown family"):
        registry.declare_family(NAME, "elemwise")
    assert registry.family(NAME) is None
