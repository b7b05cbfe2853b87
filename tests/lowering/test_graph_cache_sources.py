"""The disk cache's key covers the source of every package the code generator reads: a
change there (registry's families steer fusion) must not reuse code compiled before it.
lowering's own top-level modules are runtime or settings, which the key reads whole."""
import lowering.llvm
from lowering.llvm import graph_cache
from module_imports import imports


def test_every_package_the_code_generator_imports_is_a_cache_source():
    read = {t.split(".")[0] for f in imports(lowering.llvm).values() for t, _ in f}
    for package in read & {"ir", "registry", "tracer"}:
        assert package in graph_cache.SOURCES, package
