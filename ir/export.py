"""Graph export: networkx.DiGraph and Graphviz DOT, both built from the same records.

Each graph node becomes one exported node (in graph order, id = its index) carrying the
kernel name, attrs, and input/output shapes and dtypes; an edge u->v means node v reads a
value that node u defines. networkx is imported only here, and only when asked for.
"""
from ir.graph import Literal
from ir.printer import _Names, format_attr
from ir.types import ShapedArray


def node_records(graph):
    """One dict per node plus the edge list: the single source for both exports."""
    names = _Names()
    for v in graph.constvars + graph.invars:
        names(v)
    producer = {}
    records, edges = [], []
    for i, n in enumerate(graph.nodes):
        for x in n.inputs:
            if not isinstance(x, Literal) and id(x) in producer:
                edges.append((producer[id(x)], i, names(x)))
        for o in n.outputs:
            producer[id(o)] = i
        records.append(dict(
            kernel=n.kernel,
            attrs={k: format_attr(v, 0).strip() for k, v in n.attr_items},
            inputs=[names(x) for x in n.inputs],
            outputs=[names(o) for o in n.outputs],
            in_shapes=[x.aval.shape for x in n.inputs],
            in_dtypes=[str(x.aval.dtype) for x in n.inputs],
            shapes=[o.aval.shape for o in n.outputs],
            dtypes=[str(o.aval.dtype) for o in n.outputs],
            source=n.source or "",
        ))
    return records, edges


def to_networkx(graph):
    import networkx as nx
    records, edges = node_records(graph)
    g = nx.DiGraph(inputs=[str(v.aval) for v in graph.invars],
                   outputs=[str(v.aval) for v in graph.outvars])
    for i, r in enumerate(records):
        g.add_node(i, **r)
    for u, v, var in edges:
        if g.has_edge(u, v):
            g.edges[u, v]["vars"].append(var)
        else:
            g.add_edge(u, v, vars=[var])
    return g


def _dot_quote(value):
    """A DOT string literal: str fields as they are, others as their Python repr (so a
    reader can `ast.literal_eval` them back to the networkx values)."""
    text = value if isinstance(value, str) else repr(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph):
    """Graphviz DOT text: one box per node labelled like the printer, carrying the same
    fields as `to_networkx` as DOT attributes; edges are labelled with the value names."""
    records, edges = node_records(graph)
    lines = ["digraph G {", "  node [shape=box, fontname=monospace];",
             f"  graph [inputs={_dot_quote([str(v.aval) for v in graph.invars])}, "
             f"outputs={_dot_quote([str(v.aval) for v in graph.outvars])}];"]
    for i, r in enumerate(records):
        attrs = " ".join(f"{k}={v}" for k, v in r["attrs"].items())
        outs = ", ".join(str(ShapedArray(s, d)) for s, d in zip(r["shapes"], r["dtypes"]))
        label = r["kernel"] + (f"[{attrs}]" if attrs else "") + "\n" + outs
        fields = ", ".join(f"{k}={_dot_quote(v)}" for k, v in [("label", label), *r.items()])
        lines.append(f"  n{i} [{fields}];")
    for u, v, var in edges:
        lines.append(f"  n{u} -> n{v} [label={_dot_quote(var)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
