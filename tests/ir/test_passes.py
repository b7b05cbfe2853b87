"""dce, cse and constant folding: each returns a new, verified graph with the same values."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import Graph, Literal, Node, ShapedArray, Var, cse, dce, fold_constants
from lowering import evaluate
from lowering.interpreter import run_node

X = np.arange(6.0).reshape(2, 3)


def traced(f, *args):
    return tracer.make_graph(f)(*args)


def same_values(g1, g2, *args):
    for a, b in zip(evaluate(g1, list(args)), evaluate(g2, list(args))):
        np.testing.assert_array_equal(a, b)


def test_dce_drops_dead_nodes_and_constvars_and_keeps_the_argument_intact():
    c = np.ones(3)
    g = traced(lambda x: (tnp.exp(x + c), tnp.sum(x))[1], X)
    before = [n.kernel for n in g.nodes]
    out = dce(g).verify()
    assert [n.kernel for n in out.nodes] == ["reduce_sum"]
    assert out.constvars == [] and out.consts == []
    assert [n.kernel for n in g.nodes] == before and len(g.constvars) == 1
    same_values(g, out, X)


def test_dce_keeps_multi_output_nodes_when_any_output_is_live():
    a = Var(ShapedArray((3,), np.float32))
    q, r, dead = (Var(ShapedArray((3,), np.float32)) for _ in range(3))
    g = Graph([a], [r], [Node("divmod_like", [a], [q, r]), Node("neg", [a], [dead])])
    assert [n.kernel for n in dce(g).nodes] == ["divmod_like"]


def test_cse_merges_equal_nodes_only():
    def f(x):
        a, b = tnp.exp(x), tnp.exp(x)                        # same: merged
        c = tnp.sum(x, axis=0) + tnp.sum(x, axis=0)          # same attrs: merged
        d = tnp.sum(x, axis=1)                               # other attrs: kept
        e = x + np.float32(1) + x + np.float64(1)            # other literal dtypes: kept
        return a * b, c, d, e
    g = traced(f, X.astype(np.float32))
    out = cse(g).verify()
    kernels = [n.kernel for n in out.nodes]
    assert kernels.count("exp") == 1
    assert kernels.count("reduce_sum") == 2
    assert len(out.nodes) < len(g.nodes)
    same_values(g, out, X.astype(np.float32))
    # the merged value is the one the outputs now read
    mul = next(n for n in out.nodes if n.kernel == "mul")
    assert mul.inputs[0] is mul.inputs[1]


def test_cse_substitutes_outputs():
    g = traced(lambda x: (tnp.tanh(x), tnp.tanh(x)), X)
    out = cse(g)
    assert out.outvars[0] is out.outvars[1]
    assert len(out.nodes) == 1


def test_fold_constants_evaluates_constant_nodes():
    c = np.arange(3.0)
    g = traced(lambda x: x * tnp.exp(c) + tnp.sum(c) + tnp.negative(2.0), X)
    out = fold_constants(g, run_node).verify()
    kernels = [n.kernel for n in out.nodes]
    assert "exp" not in kernels and "reduce_sum" not in kernels and "neg" not in kernels
    same_values(g, out, X)
    assert all(not c.flags.writeable for c in out.consts)
    lits = [x for n in out.nodes for x in n.inputs if isinstance(x, Literal)]
    assert Literal(np.sum(c)) in lits      # a folded scalar becomes an inline literal


def test_fold_constants_does_not_grow_constants():
    g = traced(lambda x: x + tnp.ones((2, 3)) * 3.0, X)
    out = fold_constants(g, run_node)
    assert [n.kernel for n in out.nodes].count("broadcast_to") >= 1
    assert all(np.size(c) <= 1 for c in out.consts)
    g = const_graph("exp", np.ones(100))
    assert [n.kernel for n in fold_constants(g, run_node, max_size=50).nodes] == ["exp", "add"]
    assert [n.kernel for n in fold_constants(g, run_node).nodes] == ["add"]


def const_graph(kernel, const):
    """x + kernel(const): a node whose only input is a constant (tracing would have run
    it eagerly, so it is built by hand, as other front ends or passes may)."""
    c, k, x, out = (Var(ShapedArray(const.shape, const.dtype)) for _ in range(4))
    return Graph([x], [out], [Node(kernel, [c], [k]), Node("add", [x, k], [out])], [c], [const])


def test_fold_constants_keeps_nodes_it_cannot_evaluate():
    g = const_graph("exp", np.ones(3))
    out = fold_constants(g, lambda node, values: None)
    assert [n.kernel for n in out.nodes] == ["exp", "add"]


@pytest.fixture
def llvm_only_kernel():
    registry.register_shape_rule("test_llvm_only", lambda x: x)
    registry.register_kernel("test_llvm_only", "llvm", lambda x: x)
    yield
    registry.unregister_kernel("test_llvm_only", "llvm")
    registry.unregister_shape_rule("test_llvm_only")


def test_jit_optimizer_leaves_kernels_without_a_numpy_impl_alone(llvm_only_kernel):
    from tracer.background_compile import optimize
    g = const_graph("test_llvm_only", np.ones(3))
    assert [n.kernel for n in optimize(g).nodes] == ["test_llvm_only", "add"]
    assert [n.kernel for n in optimize(const_graph("exp", np.ones(3))).nodes] == ["add"]


def test_passes_compose_in_the_jit_pipeline():
    f = tracer.jit(lambda x: tnp.exp(x) + tnp.exp(x) + tnp.sum(np.ones(3)), backend="numpy")
    g = f.lower(X).graph.verify()
    assert [n.kernel for n in g.nodes].count("exp") == 1
    np.testing.assert_allclose(f(X), 2 * np.exp(X) + 3)
