"""Graph export: networkx.DiGraph and Graphviz DOT, both built from the same records.

Each graph node becomes one exported node (in graph order, id = its index) carrying the
kernel name, attrs, and input/output shapes and dtypes; an edge u->v means node v reads a
value that node u defines. networkx is imported only here, and only when asked for.
"""
from ir.graph import Literal
from ir.printer import _Names, format_attr


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


def _dot_escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph):
    records, edges = node_records(graph)
    lines = ["digraph G {", "  node [shape=box, fontname=monospace];"]
    for i, r in enumerate(records):
        attrs = " ".join(f"{k}={v}" for k, v in r["attrs"].items())
        outs = ", ".join(f"{d}{list(s)}" for s, d in zip(r["shapes"], r["dtypes"]))
        head = r["kernel"] + (f"[{attrs}]" if attrs else "")
        label = _dot_escape(head) + "\\n" + _dot_escape(outs)
        lines.append(f'  n{i} [label="{label}", kernel="{_dot_escape(r["kernel"])}"];')
    seen = set()
    for u, v, _ in edges:
        if (u, v) not in seen:
            seen.add((u, v))
            lines.append(f"  n{u} -> n{v};")
    lines.append("}")
    return "\n".join(lines) + "\n"
