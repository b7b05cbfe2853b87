"""lowering.llvm's modules import one another without a circle (function-level imports
included): the group emitters (rows, epilogues) and the kernel emitters build on the
emit context (lowering.llvm.emit), and codegen imports them, never the other way round.
No module imports or reads another's private names. The package's __init__, which
assembles the others, is left out."""
import ast
import pathlib

import lowering.llvm

LLVM = pathlib.Path(lowering.llvm.__file__).parent


def _imports():
    """{module: [(imported module, names), ...]}; `from lowering.llvm import m` names the
    module lowering.llvm.m, and the names read as `m.name` count as imported from it."""
    modules = {f"lowering.llvm.{p.stem}": p for p in sorted(LLVM.glob("*.py"))
               if p.name != "__init__.py"}
    out = {}
    for m, path in modules.items():
        found, aliases, reads = [], {}, []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                subs = [a for a in node.names if f"{node.module}.{a.name}" in modules]
                aliases.update((a.asname or a.name, f"{node.module}.{a.name}") for a in subs)
                found.append((node.module, [a.name for a in node.names if a not in subs]))
            elif isinstance(node, ast.Import):
                found += [(a.name, []) for a in node.names]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                reads.append((node.value.id, node.attr))
        found += [(t, [attr for name, attr in reads if name == alias])
                  for alias, t in aliases.items()]
        out[m] = found
    return out


def test_no_import_circle_inside_lowering_llvm():
    imports = _imports()
    edges = {m: {t for t, _ in found if t in imports and t != m} for m, found in imports.items()}
    done, path = set(), []

    def visit(m):
        assert m not in path, f"import circle: {' -> '.join(path[path.index(m):] + [m])}"
        if m in done:
            return
        path.append(m)
        for t in sorted(edges[m]):
            visit(t)
        path.pop()
        done.add(m)
    for m in sorted(edges):
        visit(m)


def test_no_module_imports_or_reads_private_names():
    for m, found in _imports().items():
        for target, names in found:
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{m} imports or reads private {private} of {target}"
