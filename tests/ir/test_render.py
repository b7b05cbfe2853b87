"""ir.render.render: valid PNG/SVG files, one labelled box per node, clusters for nested
graphs and fusion groups."""
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir import Graph, IRError, Node, ShapedArray, Var
from ir.render import render

pytest.importorskip("matplotlib")
F32 = np.dtype(np.float32)


def small():
    """a, b -> tanh, mul, reduce_sum -> one output."""
    return tracer.make_graph(lambda x, y: tnp.sum(tnp.tanh(x) * y))(
        np.ones(3, np.float32), np.ones(3, np.float32))


def svg_groups(path):
    """{group id: text of its <text> elements} of a rendered SVG (parsing checks the XML)."""
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    return {g.get("id"): [t.text for t in g.iter(f"{ns}text")]
            for g in root.iter(f"{ns}g") if g.get("id")}


def labels(groups, kind):
    """Labels of boxes of `kind` (input, node, output, cluster), outermost level only."""
    return [text for gid, text in groups.items() if re.fullmatch(f"label-{kind}-\\d+", gid)]


def test_png_is_written(tmp_path):
    path = tmp_path / "g.png"
    assert render(small(), str(path)) == str(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_svg_has_one_labelled_box_per_node_input_and_output(tmp_path):
    path = tmp_path / "g.svg"
    render(small(), path)
    groups = svg_groups(path)
    assert labels(groups, "input") == [["a: f32[3]"], ["b: f32[3]"]]
    assert labels(groups, "node") == [["tanh", "f32[3]"], ["mul", "f32[3]"],
                                      ["reduce_sum", "axes=(0,)", "f32[]"]]
    assert labels(groups, "output") == [["out 0: f32[]"]]
    render(small(), tmp_path / "again.svg")         # deterministic, for golden files
    assert (tmp_path / "again.svg").read_bytes() == path.read_bytes()


def test_nested_graphs_are_clusters(tmp_path):
    @tracer.custom_vjp
    def softclip(x):
        return tnp.tanh(x) * 2
    softclip.defvjp(lambda x: (softclip(x), x), lambda x, dy: (dy,))
    g = tracer.make_graph(lambda x: softclip(x) + 1)(np.ones(3, np.float32))
    # and a hand-built node holding a graph attr, as fusion and control-flow nodes do
    x, y = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F32))
    body = Graph([x], [y], [Node("neg", [x], [y])])
    out = Var(ShapedArray((3,), F32))
    g = Graph(g.invars, [out], g.nodes + [Node("fusion", [g.outvars[0]], [out],
                                               {"kind": "loop", "body": body})])
    render(g, tmp_path / "g.svg")
    groups = svg_groups(tmp_path / "g.svg")
    clusters = labels(groups, "cluster")
    assert [c[0] for c in clusters] == ["custom_call", "fusion"]
    inner = [t for gid, t in groups.items() if re.fullmatch(r"label-cluster-\d+/node-\d+", gid)]
    assert sorted(t[0] for t in inner) == ["broadcast_to", "mul", "neg", "tanh"]


def test_fusion_groups_are_clusters(tmp_path):
    g = tracer.make_graph(lambda x, y: tnp.sum(tnp.exp(x) * y) + tnp.max(x))(
        np.ones(3, np.float32), np.ones(3, np.float32))
    render(g, tmp_path / "g.svg", fusion_groups=[g.nodes[:3], [3]])
    groups = svg_groups(tmp_path / "g.svg")
    assert [c[1] for c in labels(groups, "cluster")] == ["kind='group 0'", "kind='group 1'"]
    assert [t[0] for t in labels(groups, "node")] == ["add"]
    with pytest.raises(IRError, match="disjoint"):
        render(g, tmp_path / "bad.svg", fusion_groups=[[0, 1], [1]])
    with pytest.raises(IRError, match="convex"):     # exp -> mul -> reduce_sum: skip mul
        render(g, tmp_path / "bad.svg", fusion_groups=[[0, 2]])


def test_a_forward_and_backward_graph_renders(tmp_path):
    def loss(w, x):
        return tnp.mean(tnp.tanh(x @ w) ** 2)
    g = tracer.make_graph(tracer.value_and_grad(loss))(np.ones((3, 4), np.float32),
                                                       np.ones((5, 3), np.float32))
    render(g, tmp_path / "g.svg")
    assert len(labels(svg_groups(tmp_path / "g.svg"), "node")) == len(g.nodes)


def test_unknown_extension_is_an_error(tmp_path):
    with pytest.raises(IRError, match=r"\.svg or \.png"):
        render(small(), tmp_path / "g.pdf")
