"""Deterministic jaxpr-like text for graphs (pinned by golden tests).

    { lambda ; a:f32[3] b:f32[3]. let
        c:f32[3] = mul a b
        d:f32[] = reduce_sum[axes=(0,)] c
      in (d) }
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


class _Names:
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


def format_attr(value, indent):
    if isinstance(value, Graph):
        return "\n" + format_graph(value, indent + 4)
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


def format_graph(graph, indent=0):
    names = _Names()
    pad = " " * indent
    consts = " ".join(names.typed(v) for v in graph.constvars)
    ins = " ".join(names.typed(v) for v in graph.invars)
    lines = [f"{pad}{{ lambda {consts}; {ins}. let"]
    for n in graph.nodes:
        outs = " ".join(names.typed(o) for o in n.outputs)
        attrs = ""
        if n.attr_items:
            attrs = "[" + " ".join(f"{k}={format_attr(v, indent + 4)}"
                                   for k, v in n.attr_items) + "]"
        args = " ".join(names(x) for x in n.inputs)
        lines.append(f"{pad}    {outs} = {n.kernel}{attrs} {args}".rstrip())
    outs = " ".join(names(v) for v in graph.outvars)
    lines.append(f"{pad}  in ({outs}) }}")
    return "\n".join(lines)
