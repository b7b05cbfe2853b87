"""Graph export: networkx.DiGraph and Graphviz DOT, both built from the same records.

Each graph node becomes one exported node (in graph order, id = its index) carrying the
kernel name, attrs, and input/output shapes and dtypes; an edge u->v means node v reads a
value that node u defines. networkx is imported only here, and only when asked for.

A node holding regions (control flow, custom_call) also carries them: in networkx as a
`regions` list of nested DiGraphs (built the same way), in DOT as one cluster subgraph
per region, after the node, whose node ids are prefixed with the node's.
"""
from ir.graph import Literal, is_region
from ir.printer import ValueNames, format_attr
from ir.types import ShapedArray


def node_records(graph):
    """One dict per node plus the edge list: the single source for both exports."""
    names = ValueNames()
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
    for i, (r, n) in enumerate(zip(records, graph.nodes)):
        g.add_node(i, **r)
        if n.regions:
            g.nodes[i]["regions"] = [to_networkx(sub) for sub in n.regions]
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
    fields as `to_networkx` as DOT attributes; edges are labelled with the value names;
    regions are clusters (see the module docstring)."""
    lines = ["digraph G {", "  node [shape=box, fontname=monospace];",
             f"  graph [inputs={_dot_quote([str(v.aval) for v in graph.invars])}, "
             f"outputs={_dot_quote([str(v.aval) for v in graph.outvars])}];"]
    _dot_nodes(graph, "n", "  ", lines)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_nodes(graph, prefix, pad, lines):
    records, edges = node_records(graph)
    for i, (r, n) in enumerate(zip(records, graph.nodes)):
        region_keys = {k for k, v in n.attr_items if is_region(v)}
        attrs = " ".join(f"{k}={v}" for k, v in r["attrs"].items() if k not in region_keys)
        outs = ", ".join(str(ShapedArray(s, d)) for s, d in zip(r["shapes"], r["dtypes"]))
        label = r["kernel"] + (f"[{attrs}]" if attrs else "") + "\n" + outs
        fields = ", ".join(f"{k}={_dot_quote(v)}" for k, v in [("label", label), *r.items()])
        lines.append(f"{pad}{prefix}{i} [{fields}];")
        for k, sub in enumerate(n.regions):
            inner = f"{prefix}{i}_{k}_"
            lines.append(f"{pad}subgraph cluster_{inner}{{")
            lines.append(f"{pad}  label={_dot_quote(r['kernel'] + f' region {k}')};")
            _dot_nodes(sub, inner, pad + "  ", lines)
            lines.append(f"{pad}}}")
    for u, v, var in edges:
        lines.append(f"{pad}{prefix}{u} -> {prefix}{v} [label={_dot_quote(var)}];")
