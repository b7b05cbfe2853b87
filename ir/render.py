"""Graphs as pictures: `render(graph, "g.svg")` draws a graph with matplotlib, no Graphviz.

A picture shows what the text form hides: how values flow and where the work is. Boxes
come from the networkx export (kernel, attrs, output shapes and dtypes); inputs, outputs
and constants get their own colours; a node that holds graphs (a `fusion` node of the
llvm backend's `lower(...).graph`, a custom_call's rule, a control-flow region) is drawn
as a cluster holding its sub-graph's layout, as are the `fusion_groups` passed in. The
layout is layered: `networkx.topological_generations` gives each box a row, sources sit
just above their first consumer, and a few barycenter sweeps order each row so edges
stay short. matplotlib and networkx are imported only here, and only when drawing.
"""
import os

from ir.errors import IRError
from ir.graph import Graph, Node, Var
from ir.networkx_dot import to_networkx
from ir.printer import ValueNames
from ir.types import ShapedArray

FONT = 7.0                    # points; monospace, so a line's width is known in advance
CHAR_W, LINE_H = 0.66 * FONT, 1.3 * FONT    # (rendered glyphs run a little wide)
PAD, HGAP, VGAP, LANE = 4.0, 10.0, 18.0, 4.0
MAX_ATTR = 28                 # attrs longer than this are left to the text form
COLORS = {"input": "#d8f0d2", "output": "#fbdcc0", "const": "#e6e6e6", "node": "#dbe6f6",
          "cluster": "#f7f7fb"}


class _Box:
    """One drawn item; a cluster also holds the `_Layout` of its sub-graph. A box with
    no lines is a lane: where a long edge crosses a row (it keeps boxes out of its way)."""

    def __init__(self, kind, lines, inner=None):
        self.kind, self.lines, self.inner = kind, lines, inner
        self.w = max(map(len, lines), default=0) * CHAR_W + 2 * PAD if lines else LANE
        self.h = len(lines) * LINE_H + 2 * PAD if lines else 0.0
        if inner:
            self.w = max(self.w, inner.w + 2 * PAD)
            self.h += inner.h + PAD
        self.x = self.y = 0.0


class _Layout:
    """Placed boxes (lanes included) and edges (source, target, lanes on the way)."""

    def __init__(self, boxes, edges):
        self.boxes, self.edges = boxes, edges
        self.w = self.h = 0.0


def _node_lines(record):
    attrs = " ".join(f"{k}={v}" for k, v in record["attrs"].items()
                     if "\n" not in v and len(v) <= MAX_ATTR)
    types = ", ".join(str(ShapedArray(s, d)) for s, d in zip(record["shapes"], record["dtypes"]))
    return [record["kernel"]] + ([attrs] if attrs else []) + [types]


def _layout(graph, top):
    """Boxes and edges of `graph` (with input/const/output boxes when `top`), placed."""
    import networkx as nx
    export = to_networkx(graph)
    names = ValueNames()
    boxes, producer, edges = [], {}, set()
    if top:
        for kind, vs in (("const", graph.constvars), ("input", graph.invars)):
            for v in vs:
                producer[id(v)] = len(boxes)
                boxes.append(_Box(kind, [f"{names(v)}: {v.aval}"]))   # the printer's names
    first = len(boxes)
    for i, n in enumerate(graph.nodes):
        subs = n.regions
        inner = _stack([_layout(s, False) for s in subs]) if subs else None
        boxes.append(_Box("cluster" if inner else "node", _node_lines(export.nodes[i]), inner))
        for x in n.inputs:
            if isinstance(x, Var) and id(x) in producer:
                edges.add((producer[id(x)], first + i))
        for o in n.outputs:
            producer[id(o)] = first + i
    if top:
        for k, v in enumerate(graph.outvars):
            boxes.append(_Box("output", [f"out {k}: {v.aval}"]))
            if isinstance(v, Var) and id(v) in producer:
                edges.add((producer[id(v)], len(boxes) - 1))
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(boxes)))
    dag.add_edges_from(edges)
    row = _rows(dag)
    routed = []
    for u, v in sorted(edges):      # a long edge gets a lane in every row it crosses
        lanes = []
        for r in range(row[u] + 1, row[v]):
            row[len(boxes)] = r
            lanes.append(len(boxes))
            boxes.append(_Box("lane", []))
        chain = [u] + lanes + [v]
        dag.add_edges_from(zip(chain, chain[1:]))
        routed.append((u, v, lanes))
    dag.remove_edges_from([(u, v) for u, v, lanes in routed if lanes])
    lay = _Layout(boxes, routed)
    _place(lay, dag, row)
    return lay


def _rows(dag):
    """Rows from topological generations, each source moved down to just above its
    first consumer (a parameter used late does not sit at the top with a long edge)."""
    import networkx as nx
    row = {b: r for r, gen in enumerate(nx.topological_generations(dag)) for b in gen}
    for b in dag.nodes:
        succ = [row[s] for s in dag.successors(b)]
        if dag.in_degree(b) == 0 and succ:
            row[b] = min(succ) - 1
    return row


def _place(lay, dag, row):
    """Order rows by barycenters (down and up sweeps), then give boxes coordinates:
    each box as close as it can get to the mean x of its neighbours without overlap."""
    boxes = lay.boxes
    layers = [[] for _ in range(max(row.values(), default=-1) + 1)]
    for b in sorted(row):
        layers[row[b]].append(b)
    layers = [layer for layer in layers if layer]
    cx = {}

    def pack(layer, want):
        x = 0.0
        for b in sorted(layer, key=lambda b: want.get(b, 0.0)):
            left = max(x, want[b] - boxes[b].w / 2) if want else x
            boxes[b].x, x = left, left + boxes[b].w + (HGAP if boxes[b].lines else LANE)
            cx[b] = left + boxes[b].w / 2

    for layer in layers:
        pack(layer, {})
    for sweep in range(6):
        down = sweep % 2 == 0
        for layer in (layers if down else layers[::-1]):
            near = {b: [cx[n] for n in (dag.predecessors(b) if down else dag.successors(b))]
                    for b in layer}
            pack(layer, {b: sum(v) / len(v) if v else cx[b] for b, v in near.items()})
    shift = min((bx.x for bx in boxes), default=0.0)
    y = 0.0
    for layer in layers:
        height = max(boxes[b].h for b in layer)
        for b in layer:
            boxes[b].x -= shift
            boxes[b].y = y
            if not boxes[b].lines:
                boxes[b].h = height         # a lane runs through its whole row
        y += height + VGAP
    lay.w = max((bx.x + bx.w for bx in boxes), default=0.0)
    lay.h = max(y - VGAP, 0.0)


def _stack(layouts):
    """Several sub-graphs of one node, side by side."""
    if len(layouts) == 1:
        return layouts[0]
    out = _Layout([], [])
    x = 0.0
    for lay in layouts:
        base = len(out.boxes)
        for b in lay.boxes:
            b.x += x
            out.boxes.append(b)
        out.edges += [(u + base, v + base, [k + base for k in lanes])
                      for u, v, lanes in lay.edges]
        x += lay.w + HGAP
        out.h = max(out.h, lay.h)
    out.w = x - HGAP
    return out


def _grouped(graph, groups):
    """`graph` with each group of nodes (ir.Nodes or their indices) collapsed into one
    `fusion` node holding it as a sub-graph. Groups must be disjoint and convex (no path
    leaves a group and comes back), else IRError."""
    import networkx as nx
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    owner = {}
    for g, members in enumerate(groups):
        for m in members:
            i = m if isinstance(m, int) else index[id(m)]
            if owner.setdefault(i, g) != g:
                raise IRError(f"render: node {i} ({graph.nodes[i].kernel}) is in fusion "
                              f"groups {owner[i]} and {g}; groups must be disjoint")
    consumers = {id(v): {"out"} for v in graph.outvars}
    for i, n in enumerate(graph.nodes):
        for x in n.inputs:
            consumers.setdefault(id(x), set()).add(owner.get(i, ("node", i)))
    units = []
    for g in range(len(groups)):
        members = [n for i, n in enumerate(graph.nodes) if owner.get(i) == g]
        defined = {id(o) for n in members for o in n.outputs}
        leaves = list({id(x): x for n in members for x in n.inputs
                       if isinstance(x, Var) and id(x) not in defined}.values())
        roots = [o for n in members for o in n.outputs if consumers.get(id(o), set()) - {g}]
        units.append(Node("fusion", leaves, roots, {"kind": f"group {g}",
                                                     "body": Graph(leaves, roots, members)}))
    units += [n for i, n in enumerate(graph.nodes) if i not in owner]
    producer = {id(o): u for u, n in enumerate(units) for o in n.outputs}
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(units)))
    dag.add_edges_from((producer[id(x)], u) for u, n in enumerate(units) for x in n.inputs
                       if id(x) in producer)
    try:
        order = list(nx.topological_sort(dag))
    except nx.NetworkXUnfeasible:
        raise IRError("render: a fusion group reads a value computed from its own outputs "
                      "by nodes outside it; groups must be convex") from None
    return Graph(graph.invars, graph.outvars, [units[u] for u in order], graph.constvars,
                 graph.consts)


def _draw(ax, lay, ox, oy, prefix, depth=0):
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path
    for k, b in enumerate(lay.boxes):
        if not b.lines:
            continue
        x, y = ox + b.x, oy + b.y
        gid = f"{prefix}{b.kind}-{k}"
        ax.add_patch(FancyBboxPatch(
            (x, y), b.w, b.h, boxstyle="round,pad=0,rounding_size=3", gid=gid,
            facecolor=COLORS[b.kind], edgecolor="#7a7a90" if b.inner else "#5a6a8a",
            linestyle="--" if b.inner else "-", linewidth=0.6, zorder=3 * depth + 2))
        ax.text(x + PAD, y + PAD, "\n".join(b.lines), family="monospace", fontsize=FONT,
                va="top", ha="left", linespacing=1.3, zorder=3 * depth + 3, gid=f"label-{gid}",
                fontweight="bold" if b.inner else "normal")
        if b.inner:
            _draw(ax, b.inner, x + (b.w - b.inner.w) / 2, y + b.h - b.inner.h - PAD,
                  f"{gid}/", depth + 1)
    for u, v, lanes in lay.edges:
        s, t = lay.boxes[u], lay.boxes[v]
        points = [(s.x + s.w / 2, s.y + s.h)]
        for k in lanes:
            lane = lay.boxes[k]
            points += [(lane.x + lane.w / 2, lane.y), (lane.x + lane.w / 2, lane.y + lane.h)]
        points.append((t.x + t.w / 2, t.y))
        ax.add_patch(FancyArrowPatch(
            path=Path([(ox + px, oy + py) for px, py in points]), arrowstyle="-|>",
            mutation_scale=6, linewidth=0.5, color="#55607a", zorder=3 * depth + 1))


def render(graph, path, fusion_groups=None):
    """Write a picture of `graph` to `path`: SVG or PNG, chosen by the extension (needs
    matplotlib: the [viz] extra).

    fusion_groups: optional groups of the graph's nodes (ir.Nodes, or indices into
    graph.nodes) to draw as clusters, e.g. a backend's partition. Returns `path`.
    """
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".svg", ".png"):
        raise IRError(f"render: cannot tell the format of {str(path)!r}; use a .svg or "
                      f".png file name")
    import matplotlib
    from matplotlib.figure import Figure
    if fusion_groups:
        graph = _grouped(graph, [list(g) for g in fusion_groups])
    lay = _layout(graph, top=True)
    margin = 8.0
    w, h = lay.w + 2 * margin, lay.h + 2 * margin
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tracer"}):
        fig = Figure(figsize=(w / 72, h / 72))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(-margin, lay.w + margin)
        ax.set_ylim(lay.h + margin, -margin)
        ax.axis("off")
        _draw(ax, lay, 0.0, 0.0, "")
        fig.savefig(path, format=ext[1:], dpi=110, metadata={"Date": None}
                    if ext == ".svg" else None)
    return path
