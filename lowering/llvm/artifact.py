"""Phase 4, the artifact: what compiling a graph made, as the graph cache stores it and
Program loads it -- the module text and everything the call path needs besides native
code. `encode` and `decode` turn it into plain values (marshal-able, naming graph values
by position) and back, against the optimized graph it was made for.
"""
from dataclasses import dataclass

import numpy as np

import ir.errors
from ir import Graph, Literal
from lowering.llvm.fusion import display_graph, fusion_node
from lowering.llvm.liveness import Plan, plan


@dataclass(frozen=True)
class Artifact:
    """`text`: the LLVM module; `errors`: its error table ((exception class, message);
    failure code k is entry k - 1); `specs`: (shape, dtype) of each per-call buffer after
    the inputs and consts (None, None: filled by a Python step); `steps`: ("segment",
    buffers, [(function, positions in buffers, work items)]) | ("parallel", [(function, buffers, work items, grain)], threads) |
    ("python", node, ins, outs); `outs`: each output's buffer number (or its Literal);
    `plan`: which buffers share memory (lowering.llvm.liveness); `graph`: the optimized
    graph with each fused group shown as one `fusion` node; `callbacks`: the host
    callbacks its code calls, by site number (lowering.llvm.callbacks). Plain tuples
    throughout, but for the classes, dtypes, graphs, Python steps' nodes and callbacks."""
    text: str
    errors: tuple
    specs: tuple
    steps: tuple
    outs: tuple
    plan: Plan
    graph: Graph
    callbacks: tuple = ()


def build(sched, mb):
    """The artifact of schedule `sched` whose module `mb` codegen built."""
    return Artifact(mb.text(), tuple(mb.errors), sched.specs,
                    tuple(s.program_step(mb.forwarded) for s in sched.steps), sched.outs,
                    plan(sched), display_graph(sched.part.graph, sched.part.groups),
                    tuple(mb.callbacks))


def cacheable(art):
    """Whether `encode` can store it: no Python steps (they hold graph nodes) nor host
    callbacks, and only errors of classes in ir.errors."""
    return not art.callbacks and all(s[0] != "python" for s in art.steps) and all(
        getattr(ir.errors, cls.__name__, None) is cls for cls, _ in art.errors)


def numbering(g):
    """({id(value): number} over inputs, consts, node outputs in order; [values])."""
    values = g.invars + g.constvars
    for n in g.nodes:
        values.extend(n.outputs)
    return {id(v): k for k, v in enumerate(values)}, values


def encode(art, g):
    """`art` (made for graph `g`, and cacheable) as nested tuples of plain values."""
    number = numbering(g)[0]
    index = {id(n): i for i, n in enumerate(g.nodes)}
    return (
        art.text,
        tuple((cls.__name__, message) for cls, message in art.errors),
        tuple((shape, dtype and dtype.name) for shape, dtype in art.specs),
        art.steps,
        tuple(None if type(k) is Literal else k for k in art.outs),
        (art.plan.offsets, art.plan.size, art.plan.donors),
        tuple(index[id(n)] if id(n) in index else
              (n.attrs["kind"], tuple(index[id(m)] for m in n.attrs["body"].nodes),
               tuple(number[id(x)] for x in n.inputs), tuple(number[id(r)] for r in n.outputs))
              for n in art.graph.nodes))


def decode(data, g):
    """The artifact `encode` made, for graph `g` (structurally the graph it was made for)."""
    text, errors, specs, steps, outs, shared, shown = data
    values = numbering(g)[1]
    nodes = [g.nodes[s] if type(s) is int else fusion_node(
        s[0], [values[x] for x in s[2]], [values[r] for r in s[3]], [g.nodes[i] for i in s[1]])
        for s in shown]
    return Artifact(
        text, tuple((getattr(ir.errors, cls), message) for cls, message in errors),
        tuple((shape, dtype and np.dtype(dtype)) for shape, dtype in specs),
        steps,
        tuple(g.outvars[j] if k is None else k for j, k in enumerate(outs)), Plan(*shared),
        Graph(g.invars, g.outvars, nodes, g.constvars, g.consts))
