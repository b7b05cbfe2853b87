"""Graph data model: values, nodes with hashable attrs, and what verify() catches."""
import numpy as np
import pytest

import registry  # noqa: F401  (installs the shape-rule inference verify() uses)
import tracer
import tracer.numpy as tnp
from ir import Graph, IRError, Literal, Node, ShapedArray, Var

F32_3 = ShapedArray((3,), np.float32)


def v(shape=(3,), dtype=np.float32):
    return Var(ShapedArray(shape, dtype))


def test_literal_is_0d_hashable_and_keyed_by_dtype_and_bits():
    assert Literal(2.0) == Literal(np.float64(2.0))
    assert Literal(2.0) != Literal(np.float32(2.0))
    assert Literal(0.0) != Literal(-0.0)
    assert len({Literal(1), Literal(1), Literal(True)}) == 2
    assert Literal(np.float32(1.5)).aval == ShapedArray((), np.float32)
    with pytest.raises(IRError, match="0-d"):
        Literal(np.ones(2))


def test_node_attrs_are_sorted_hashable_items():
    a, b = v(), v()
    n = Node("reduce_sum", [a], [b], {"b": (1,), "a": np.dtype(np.float32)})
    assert [k for k, _ in n.attr_items] == ["a", "b"]
    hash(n.attr_items)
    assert n.attrs == {"a": np.dtype(np.float32), "b": (1,)}
    with pytest.raises(IRError, match=r"hashable.*\['axes'\]"):
        Node("reduce_sum", [a], [b], {"axes": [0]})
    with pytest.raises(IRError, match="hashable"):
        Node("broadcast_to", [a], [b], {"shape": np.array([3])})


def test_a_traced_graph_verifies_and_lists_its_kernels():
    g = tracer.make_graph(lambda x: tnp.sum(tnp.exp(x) * 2, axis=0))(np.ones((2, 3)))
    assert g.verify() is g
    assert g.kernels() == {"exp", "broadcast_to", "mul", "reduce_sum"}
    assert g.in_avals == [ShapedArray((2, 3), np.float64)]
    assert g.out_avals == [ShapedArray((3,), np.float64)]


def test_verify_catches_use_before_definition():
    a, b, c = v(), v(), v()
    g = Graph([a], [c], [Node("add", [a, b], [c]), Node("neg", [a], [b])])
    with pytest.raises(IRError, match=r"node 0 \(add\(f32\[3\], f32\[3\]\)\) uses a value of "
                                      r"type f32\[3\] before it is defined"):
        g.verify()


def test_verify_catches_double_definition():
    a, b = v(), v()
    with pytest.raises(IRError, match="defined twice"):
        Graph([a], [b], [Node("neg", [a], [b]), Node("exp", [a], [b])]).verify()
    with pytest.raises(IRError, match="input .* defined twice"):
        Graph([a, a], [a], []).verify()
    with pytest.raises(IRError, match="defined twice"):      # a node redefining an input
        Graph([a], [a], [Node("neg", [a], [a])]).verify()


def test_verify_catches_shape_rule_mismatches():
    a, b = v(), v((3,), np.float64)
    with pytest.raises(IRError, match=r"node 0 \(neg.*outputs \[f64\[3\]\] but its shape rule "
                                      r"gives \[f32\[3\]\]"):
        Graph([a], [b], [Node("neg", [a], [b])]).verify()
    c, d = v((2,)), v((2,))
    with pytest.raises(IRError, match=r"shape rule rejects the inputs: add: operand shapes"):
        Graph([a, c], [d], [Node("add", [a, c], [d])]).verify()
    e = v(())
    with pytest.raises(IRError, match=r"rejects the inputs: reduce_sum: axes \(1,\) invalid"):
        Graph([a], [e], [Node("reduce_sum", [a], [e], {"axes": (1,)})]).verify()
    # the check can be switched off by passing a permissive rule
    Graph([a], [b], [Node("neg", [a], [b])]).verify(infer=lambda k, avals, attrs: [b.aval])


def test_verify_catches_bad_consts():
    a, c, out = v(), v(), v()
    nodes = [Node("add", [a, c], [out])]
    with pytest.raises(IRError, match="1 constvars but 0 consts"):
        Graph([a], [out], nodes, [c], []).verify()
    with pytest.raises(IRError, match=r"constvar 0 has type f32\[3\] but is bound to a const "
                                      r"f64\[3\]"):
        Graph([a], [out], nodes, [c], [np.zeros(3)]).verify()
    with pytest.raises(IRError, match=r"bound to a const f32\[4\]"):
        Graph([a], [out], nodes, [c], [np.zeros(4, np.float32)]).verify()
    Graph([a], [out], nodes, [c], [np.zeros(3, np.float32)]).verify()


def test_verify_catches_undefined_outputs_and_non_values():
    a, b = v(), v()
    with pytest.raises(IRError, match="never defined"):
        Graph([a], [b], []).verify()
    with pytest.raises(IRError, match="non-value input"):
        Graph([a], [b], [Node("neg", [np.ones(3)], [b])]).verify()
    with pytest.raises(IRError, match="must be a Var"):
        Graph([a], [b], [Node("neg", [a], [Literal(1.0)])]).verify()
    Graph([a], [Literal(1.0), a], []).verify()     # literal outputs are fine


def test_verify_error_names_the_user_source_line():
    g = tracer.make_graph(lambda x: tnp.exp(x))(np.ones(3))
    g.nodes[0].outputs[0].aval = ShapedArray((4,), np.float64)
    with pytest.raises(IRError, match=r"test_graph\.py:\d+"):
        g.verify()
