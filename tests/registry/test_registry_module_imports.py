"""registry's modules import one another without a circle (function-level imports
included) and never another module's private names: what every table shares (the kernel
name check and the "did you mean" hint) is public in registry.versioned."""
import registry
from module_imports import assert_no_circle, imports, private_names


def test_no_import_circle_inside_registry():
    assert_no_circle(imports(registry))


def test_no_module_imports_or_reads_private_names():
    assert not private_names(imports(registry))
