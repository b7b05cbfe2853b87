"""to_networkx() and to_dot() carry the same per-node fields, in graph order."""
import ast
import os
import re
import subprocess
import sys

import numpy as np

import ir
import tracer
import tracer.numpy as tnp
from ir import Graph, Node, ShapedArray, Var
from ir.printer import format_attr


def graph():
    def f(x, y):
        s = tnp.sum(x * y, axis=0, keepdims=True)
        return tnp.concatenate([s, x[:1] * 2.0], axis=0), tnp.argmax(x, axis=1)
    return tracer.make_graph(f)(np.ones((2, 3), np.float32), np.ones(3, np.float32))


def test_networkx_has_one_node_per_graph_node_with_kernel_attrs_shapes_dtypes():
    g = graph()
    nx_g = g.to_networkx()
    assert list(nx_g.nodes) == list(range(len(g.nodes)))
    for i, n in enumerate(g.nodes):
        data = nx_g.nodes[i]
        assert data["kernel"] == n.kernel
        assert data["attrs"] == {k: format_attr(a, 0) for k, a in n.attr_items}
        assert data["shapes"] == [o.aval.shape for o in n.outputs]
        assert data["dtypes"] == [str(o.aval.dtype) for o in n.outputs]
        assert data["in_shapes"] == [x.aval.shape for x in n.inputs]
        assert "test_networkx_dot.py" in data["source"]
    assert nx_g.graph["inputs"] == ["f32[2,3]", "f32[3]"]
    assert nx_g.graph["outputs"] == ["f32[2,3]", "i64[2]"]


def test_networkx_edges_are_def_use_pairs():
    g = graph()
    nx_g = g.to_networkx()
    want = set()
    for j, n in enumerate(g.nodes):
        for i, m in enumerate(g.nodes[:j]):
            if any(x is o for x in n.inputs for o in m.outputs):
                want.add((i, j))
    assert set(nx_g.edges) == want
    assert all(i < j for i, j in nx_g.edges)        # topological order


def _parse_dot(text):
    fields = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
    nodes, edges = {}, []
    for line in text.splitlines():
        if m := re.match(r"\s*n(\d+) \[(.*)\];$", line):
            nodes[int(m[1])] = {k: v.replace('\\"', '"').replace("\\\\", "\\")
                                for k, v in fields.findall(m[2])}
        elif m := re.match(r"\s*n(\d+) -> n(\d+)", line):
            edges.append((int(m[1]), int(m[2])))
    return nodes, edges


def test_dot_carries_the_same_fields_as_networkx():
    g = graph()
    text = g.to_dot()
    assert text.startswith("digraph G {") and text.rstrip().endswith("}")
    nodes, edges = _parse_dot(text)
    nx_g = g.to_networkx()
    assert sorted(nodes) == list(nx_g.nodes)
    for i, data in nx_g.nodes(data=True):
        for key, value in data.items():
            got = nodes[i][key]
            assert (got if isinstance(value, str) else ast.literal_eval(got)) == value, key
    assert set(edges) == set(nx_g.edges)
    assert 'label="reduce_sum[axes=(0,)]\\nf32[3]"' in text


def test_dot_escapes_quotes_in_attrs():
    class Weird:
        def __repr__(self):
            return 'say "hi"\\'
    from ir import Graph, Node, ShapedArray, Var
    a, b = Var(ShapedArray((), np.float32)), Var(ShapedArray((), np.float32))
    text = Graph([a], [b], [Node("k", [a], [b], {"w": Weird()})]).to_dot()
    nodes, _ = _parse_dot(text)
    assert ast.literal_eval(nodes[0]["attrs"]) == {"w": 'say "hi"\\'}


def test_layering_ir_and_registry_import_nothing_above_them():
    root = os.path.dirname(os.path.dirname(ir.__file__))

    def imported(code):
        return subprocess.run([sys.executable, "-c", f"import sys; {code}; print(sorted("
                               f"{{m.split('.')[0] for m in sys.modules}}))"],
                              capture_output=True, text=True, check=True, cwd=root).stdout
    above = ("'lowering'", "'tracer'", "'networkx'", "'llvmlite'")
    assert not any(m in imported("import ir, registry") for m in above)
    assert "'networkx'" not in imported("import tracer")


GOLDEN_DOT = r'''digraph G {
  node [shape=box, fontname=monospace];
  graph [inputs="['i32[]', 'f32[2]']", outputs="['f32[2]']"];
  n0 [label="cond\nf32[2]", kernel="cond", attrs="{'branches': '(\\n  { lambda ; a:f32[2]. let\\n      b:f32[2] = neg a\\n    in (b) }\\n  { lambda ; a:f32[2]. let\\n      b:f32[2] = sin a\\n    in (b) }\\n)'}", inputs="['a', 'b']", outputs="['c']", in_shapes="[(), (2,)]", in_dtypes="['int32', 'float32']", shapes="[(2,)]", dtypes="['float32']", source=""];
  subgraph cluster_n0_0_{
    label="cond region 0";
    n0_0_0 [label="neg\nf32[2]", kernel="neg", attrs="{}", inputs="['a']", outputs="['b']", in_shapes="[(2,)]", in_dtypes="['float32']", shapes="[(2,)]", dtypes="['float32']", source=""];
  }
  subgraph cluster_n0_1_{
    label="cond region 1";
    n0_1_0 [label="sin\nf32[2]", kernel="sin", attrs="{}", inputs="['a']", outputs="['b']", in_shapes="[(2,)]", in_dtypes="['float32']", shapes="[(2,)]", dtypes="['float32']", source=""];
  }
  n1 [label="mul\nf32[2]", kernel="mul", attrs="{}", inputs="['c', 'b']", outputs="['d']", in_shapes="[(2,), (2,)]", in_dtypes="['float32', 'float32']", shapes="[(2,)]", dtypes="['float32']", source=""];
  n0 -> n1 [label="c"];
}
'''


def test_golden_dot_of_a_small_graph_with_regions():
    """The exact DOT text of a two-node graph whose first node holds two regions."""
    f32, i32 = ShapedArray((2,), np.dtype(np.float32)), ShapedArray((), np.dtype(np.int32))
    x, y, u, w = Var(f32), Var(f32), Var(f32), Var(f32)
    branches = (Graph([u], [w], [Node("neg", [u], [w])]),
                Graph([x], [y], [Node("sin", [x], [y])]))
    i, a, b, c = Var(i32), Var(f32), Var(f32), Var(f32)
    g = Graph([i, a], [c], [Node("cond", [i, a], [b], {"branches": branches}),
                            Node("mul", [b, a], [c])])
    assert g.to_dot() == GOLDEN_DOT
