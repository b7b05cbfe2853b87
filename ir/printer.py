"""Deterministic jaxpr-like text for graphs (pinned by golden tests).

    { lambda ; a:f32[3] b:f32[3]. let
        c:f32[3] = mul a b
        d:f32[] = reduce_sum[axes=(0,)] c
      in (d) }

A node holding regions (sub-graphs) prints one attr per line, its regions nested and
named on from the enclosing graph, as jaxpr does:

        c:f32[] = cond[
          branches=(
            { lambda ; d:f32[]. let
                e:f32[] = sin d
              in (e) }
            { lambda ; f:f32[]. let
                g:f32[] = cos f
              in (g) }
          )
        ] a b
"""
import numpy as np

from ir.graph import Graph, Literal
from ir.types import short_dtype


def _name(i):
    """a, b, ..., z, ba, bb, ... (jaxpr's scheme)."""
    s = ""
    while True:
        s = chr(ord("a") + i % 26) + s
        i //= 26
        if i == 0:
            return s


class ValueNames:
    """The printer's names of a graph's values, given in order of first use (a Literal
    prints as its value); the networkx/DOT export and pictures name values the same way."""

    def __init__(self):
        self.names = {}

    def __call__(self, v):
        if isinstance(v, Literal):
            return format_literal(v)
        key = id(v)
        if key not in self.names:
            self.names[key] = _name(len(self.names))
        return self.names[key]

    def typed(self, v):
        return f"{self(v)}:{v.aval}"


def format_literal(lit):
    """`2.0:f32[]`: the shortest text that reads back as the same value of its dtype."""
    return f"{str(lit.value)}:{short_dtype(lit.aval.dtype)}[]"


def format_attr(value, indent, names=None):
    if isinstance(value, Graph):
        return format_graph(value, indent, names).lstrip()
    if isinstance(value, tuple) and value and all(isinstance(g, Graph) for g in value):
        return "(\n" + "\n".join(format_graph(g, indent + 2, names) for g in value) + \
            "\n" + " " * indent + ")"
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, tuple):
        items = [format_attr(v, indent) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(value) if isinstance(value, (int, float, bool, str, type(None))) else str(value)


def format_graph(graph, indent=0, names=None):
    names = names or ValueNames()
    pad = " " * indent
    consts = " ".join(names.typed(v) for v in graph.constvars)
    ins = " ".join(names.typed(v) for v in graph.invars)
    lines = [f"{pad}{{ lambda {consts}; {ins}. let"]
    for n in graph.nodes:
        outs = " ".join(names.typed(o) for o in n.outputs)
        attrs = ""
        if n.regions:
            inner = " " * (indent + 6)
            attrs = "[\n" + "\n".join(f"{inner}{k}={format_attr(v, indent + 6, names)}"
                                       for k, v in n.attr_items) + f"\n{pad}    ]"
        elif n.attr_items:
            attrs = "[" + " ".join(f"{k}={format_attr(v, indent + 4)}"
                                   for k, v in n.attr_items) + "]"
        args = " ".join(names(x) for x in n.inputs)
        lhs = f"{outs} = " if outs else ""         # (a node for its effect has none, as JAX's)
        lines.append(f"{pad}    {lhs}{n.kernel}{attrs} {args}".rstrip())
    outs = " ".join(names(v) for v in graph.outvars)
    lines.append(f"{pad}  in ({outs}) }}")
    return "\n".join(lines)
