"""ir's modules import one another without a circle (function-level imports included),
never another module's private names, and nothing of the packages above ir."""
import ast
import pathlib

import ir

IR = pathlib.Path(ir.__file__).parent


def _imports():
    """{module: [(imported module, names), ...]} for every ir module but the package's
    __init__ (which assembles the others)."""
    out = {}
    for path in sorted(IR.glob("*.py")):
        if path.name == "__init__.py":
            continue
        found = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.append((node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                found += [(a.name, []) for a in node.names]
        out[f"ir.{path.stem}"] = found
    return out


def test_no_import_circle_inside_ir():
    imports = _imports()
    edges = {m: {t for t, _ in found if t in imports} for m, found in imports.items()}
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


def test_no_private_names_and_nothing_from_above():
    for m, found in _imports().items():
        for target, names in found:
            assert target.split(".")[0] not in ("registry", "lowering", "tracer"), (m, target)
            private = [n for n in names if n.startswith("_")]
            assert not private, f"{m} imports private {private} from {target}"


def test_graph_methods_are_the_modules_functions():
    from ir.graph import Graph, Node, Var
    from ir.types import ShapedArray
    a = Var(ShapedArray((2,), "float32"))
    b = Var(ShapedArray((2,), "float32"))
    g = Graph([a], [b], [Node("sin", [a], [b])])
    assert str(g) == ir.format_graph(g)
    assert g.to_dot() == ir.networkx_dot.to_dot(g)
    assert list(g.to_networkx().nodes(data="kernel")) == [(0, "sin")]
