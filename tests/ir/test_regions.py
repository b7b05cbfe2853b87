"""Regions: sub-graphs held in node attrs, as a generic property every pass respects."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir import Graph, IRError, Node, ShapedArray, Var, cse, dce, fold_constants
from ir.passes import inline_calls
from lowering.interpreter import evaluate, run_node
from tracer import lax

F32 = np.dtype(np.float32)
X = np.arange(3, dtype=np.float32)


def scan_graph(body_fun, init=np.float32(1), xs=X):
    return tracer.make_graph(lambda c, x: lax.scan(body_fun, c, x))(init, xs)


def only(graph, kernel):
    (node,) = [n for n in graph.nodes if n.kernel == kernel]
    return node


def test_regions_are_graph_attrs_alone_or_in_a_tuple():
    g = tracer.make_graph(lambda p, x: lax.cond(p, tnp.sin, tnp.cos, x))(True, X)
    node = only(g, "cond")
    assert node.regions == list(node.attrs["branches"]) and len(node.regions) == 2
    assert node.with_regions(lambda r: r) is node
    renamed = node.with_regions(dce)
    assert renamed is not node and renamed.outputs == node.outputs
    assert all(isinstance(r, Graph) for r in renamed.attrs["branches"])
    assert Node("neg", [Var(ShapedArray((), F32))], [Var(ShapedArray((), F32))]).regions == []


def test_verify_recurses_and_checks_region_signatures():
    g = scan_graph(lambda c, x: (c * x, c))
    g.verify()
    node = only(g, "scan")
    body = node.attrs["body"]
    # a region reading a value it does not define (not closed) is rejected
    outer = Var(ShapedArray((), F32))
    leaky = Graph(body.invars, [outer, body.outvars[1]], body.nodes)
    bad = Graph(g.invars, g.outvars, [node.with_regions(lambda r: leaky)])
    with pytest.raises(IRError, match=r"region 0: graph output .* is never defined"):
        bad.verify()
    # a body whose carry output type differs from its carry input: the shape rule says so
    x64 = Var(ShapedArray((), np.float64))
    wrong = Graph(body.invars, [x64, body.outvars[1]],
                  body.nodes + [Node("convert", [body.outvars[0]], [x64],
                                     {"dtype": np.dtype(np.float64)})])
    bad = Graph(g.invars, g.outvars, [node.with_regions(lambda r: wrong)])
    with pytest.raises(IRError, match=r"shape rule rejects.*carry outputs has types "
                                      r"\['f64\[\]'\] but the node needs \['f32\[\]'\]"):
        bad.verify()


def test_dce_cse_and_folding_work_inside_regions():
    def body(c, x):
        dead = tnp.exp(x)                      # noqa: F841  (dce removes it)
        two = tnp.ones((), np.float32) * 2     # a constant subexpression: folded
        return c * tnp.sin(x) + tnp.sin(x) * two, c
    g = scan_graph(body)
    inner = only(g, "scan").attrs["body"]
    assert "exp" in inner.kernels() and [n.kernel for n in inner.nodes].count("sin") == 2
    opt = dce(cse(fold_constants(g, lambda n, v: run_node(n, v))))
    opt.verify()
    inner = only(opt, "scan").attrs["body"]
    kernels = [n.kernel for n in inner.nodes]
    assert "exp" not in kernels and kernels.count("sin") == 1 and "broadcast_to" not in kernels
    assert len(inner.invars) == 2           # the signature is kept
    np.testing.assert_allclose(evaluate(opt, [np.float32(1), X])[0],
                               evaluate(g, [np.float32(1), X])[0])


def test_passes_never_move_values_across_a_region_boundary():
    w = np.full(3, 2, np.float32)

    def f(x):
        outer = tnp.exp(x)                     # used inside: must stay a node input
        return lax.fori_loop(0, 3, lambda i, v: v * outer + tnp.exp(x), x)
    g = tracer.make_graph(f)(X)
    opt = dce(cse(g))
    node = only(opt, "scan")
    body = node.attrs["body"]
    assert "exp" not in body.kernels()       # both exps are outer values: captured inputs
    assert node.attrs["n_consts"] == 2 and opt.verify()
    np.testing.assert_allclose(tracer.jit(f, backend="numpy")(w), f(w), rtol=1e-6)


def test_custom_call_body_is_a_region_and_inlines():
    @tracer.custom_vjp
    def f(x):
        return tnp.tanh(x) * 2
    f.defvjp(lambda x: (f(x), x), lambda x, dy: (dy,))
    g = tracer.make_graph(lambda x: lax.scan(lambda c, _: (f(c), None), x, None,
                                             length=2)[0])(X)
    node = only(only(g, "scan").attrs["body"], "custom_call")
    assert node.regions == [node.attrs["body"]] and "tanh" in g.kernels()
    flat = inline_calls(g)
    assert "custom_call" not in flat.kernels() and "tanh" in flat.kernels()
    np.testing.assert_allclose(evaluate(flat, [X])[0], np.tanh(np.tanh(X) * 2) * 2, rtol=1e-6)


def test_printer_nests_regions_with_names_running_on():
    g = tracer.make_graph(lambda p, x: lax.cond(p, tnp.sin, lambda a: a * 2, x))(True, X)
    assert str(g) == """\
{ lambda ; a:bool[] b:f32[3]. let
    c:i32[] = convert[dtype=int32] a
    d:f32[3] = cond[
      branches=(
        { lambda ; e:f32[3]. let
            f:f32[3] = broadcast_to[shape=(3,)] 2.0:f32[]
            g:f32[3] = mul e f
          in (g) }
        { lambda ; h:f32[3]. let
            i:f32[3] = sin h
          in (i) }
      )
    ] c b
  in (d) }"""


def test_printer_scan_with_a_captured_value():
    def f(w, xs):
        return lax.scan(lambda c, x: (c * w + x, c), np.float32(0), xs)
    g = tracer.make_graph(f)(np.float32(2), X)
    assert str(g) == """\
{ lambda ; a:f32[] b:f32[3]. let
    c:f32[] d:f32[3] = scan[
      body={ lambda ; e:f32[] f:f32[] g:f32[]. let
          h:f32[] = mul f e
          i:f32[] = add h g
        in (i f) }
      length=3
      n_carry=1
      n_consts=1
      reverse=False
      unroll=1
    ] a 0.0:f32[] b
  in (c d) }"""


def test_networkx_and_dot_show_regions_nested():
    g = tracer.make_graph(lambda p, x: lax.cond(p, tnp.sin, tnp.cos, x) + 1)(True, X)
    nx_g = g.to_networkx()
    i = [k for k, d in nx_g.nodes(data=True) if d["kernel"] == "cond"][0]
    inner = nx_g.nodes[i]["regions"]
    assert [[d["kernel"] for _, d in r.nodes(data=True)] for r in inner] == [["cos"], ["sin"]]
    assert "regions" not in nx_g.nodes[0]          # plain nodes are as before
    dot = g.to_dot()
    assert f"subgraph cluster_n{i}_0_{{" in dot and f"subgraph cluster_n{i}_1_{{" in dot
    assert f'n{i}_1_0 [label="sin' in dot and dot.count("{") == dot.count("}")


def test_dce_prunes_dead_outputs_of_region_nodes_and_the_inputs_behind_them():
    def f(x, w):
        c, ys = lax.scan(lambda c, x: (c + x, tnp.exp(c * w)), np.float32(0), x)
        a, b = lax.cond(x[0] > 0, lambda x, w: (x * 2, tnp.sin(w)), lambda x, w: (x, w), x, w)
        return c, a
    g = tracer.make_graph(f)(X, np.float32(2))
    opt = dce(g)
    scan, cond = only(opt, "scan"), only(opt, "cond")
    assert len(scan.outputs) == 1 and scan.attrs["n_consts"] == 0 and len(scan.inputs) == 2
    assert "exp" not in scan.attrs["body"].kernels()
    assert len(cond.outputs) == 1 and len(cond.inputs) == 2      # w is read by no branch
    assert all(len(b.invars) == 1 and "sin" not in b.kernels() for b in cond.regions)
    opt.verify()
    for a, b in zip(evaluate(opt, [X, np.float32(2)]), evaluate(g, [X, np.float32(2)])):
        np.testing.assert_allclose(a, b)
