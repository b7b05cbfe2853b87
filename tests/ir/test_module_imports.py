"""ir's modules import one another without a circle (function-level imports included),
never another module's private names, and nothing of the packages above ir."""
import ir
from module_imports import assert_no_circle, imports, private_names


def test_no_import_circle_inside_ir():
    assert_no_circle(imports(ir))


def test_no_private_names_and_nothing_from_above():
    found = imports(ir)
    for m, f in found.items():
        for target, _ in f:
            assert target.split(".")[0] not in ("registry", "lowering", "tracer"), (m, target)
    assert not private_names(found)


def test_graph_methods_are_the_modules_functions():
    from ir.graph import Graph, Node, Var
    from ir.types import ShapedArray
    a = Var(ShapedArray((2,), "float32"))
    b = Var(ShapedArray((2,), "float32"))
    g = Graph([a], [b], [Node("sin", [a], [b])])
    assert str(g) == ir.format_graph(g)
    assert g.to_dot() == ir.networkx_dot.to_dot(g)
    assert list(g.to_networkx().nodes(data="kernel")) == [(0, "sin")]
