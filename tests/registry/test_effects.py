"""The side-effect flag: ir passes read registry.has_effects to keep such nodes."""
import registry


def test_declare_effects_sets_flag_and_bumps_version():
    name = "test_effects_kernel"
    before = registry.version(name)
    assert not registry.has_effects(name)
    registry.declare_effects(name)
    try:
        assert registry.has_effects(name)
        assert registry.version(name) > before
    finally:
        registry.declare_effects(name, False)
    assert not registry.has_effects(name)


def test_builtin_kernels_have_no_effects():
    assert not any(registry.has_effects(k) for k in ("add", "exp", "matmul", "scan"))
