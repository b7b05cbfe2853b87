"""What the modules of one package import from each other, read from their source
(function-level imports included), for the tests that keep a package free of import
circles and of reads of another module's private names."""
import ast
import pathlib


def imports(package):
    """{module: [(imported module, names), ...]} for the modules of `package` (an imported
    package; its __init__, which assembles the others, left out). `from pkg import m`
    names the module pkg.m, and the names read as `m.name` count as imported from it."""
    root = pathlib.Path(package.__file__).parent
    modules = {f"{package.__name__}.{p.stem}": p for p in sorted(root.glob("*.py"))
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


def assert_no_circle(found):
    """Fails naming the first import circle among the modules of `found` (imports())."""
    edges = {m: {t for t, _ in f if t in found and t != m} for m, f in found.items()}
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


def private_names(found):
    """[(module, target, private names it imports or reads of target)]."""
    out = []
    for m, f in found.items():
        for target, names in f:
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                out.append((m, target, private))
    return out
