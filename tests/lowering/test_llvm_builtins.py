"""The llvm backend owns its impls: every built-in kernel's llvm impl is defined under
lowering/llvm and collected in graph_cache.BUILTIN (what the graph cache trusts), and the
front end (tracer/) defines ops, shape rules and gradients but emits no llvm code."""
import ast
import pathlib

import registry
import tracer  # noqa: F401  (declares the ops whose kernels are checked)
import lowering.llvm
from lowering.llvm.graph_cache import BUILTIN, SOURCES

ROOT = pathlib.Path(__file__).resolve().parents[2]
# kernels whose ops live in tracer.lax / tracer.numpy, with impls in lowering/llvm
FRONT_END_KERNELS = ("conv", "reduce_window", "tile_scatter", "scatter", "checkpoint_name",
                     "solve", "slogdet", "cholesky", "qr", "eigh", "svd")


def test_front_end_kernels_run_the_backends_own_impls():
    for k in FRONT_END_KERNELS:
        impl = registry.get_kernel(k, "llvm")
        assert impl is BUILTIN.get(k), k
        assert type(impl).__module__.startswith("lowering.llvm."), (k, type(impl))
    assert not any(s.startswith("tracer") for s in SOURCES)


def _imports(path):
    text = path.read_text()
    if "llvm" not in text:
        return
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            yield from ((a.name, None) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield from ((node.module, a.name) for a in node.names)


def test_the_front_end_imports_no_code_generator():
    """tracer/ uses lowering.llvm only through the names the package exports (caches
    still gives tracer.jit and tracer.background_compile their TRACER_* sizes)."""
    allowed = set(lowering.llvm.__all__) | {"caches"}
    bad = [(str(p.relative_to(ROOT)), m, n) for p in sorted((ROOT / "tracer").rglob("*.py"))
           for m, n in _imports(p)
           if m.split(".")[0] == "llvmlite" or m.startswith("lowering.llvm.")
           or m == "lowering.llvm" and n not in allowed]
    assert bad == []
