"""Concrete values inside eager transforms, as JAX and autograd give them.

grad, vjp, jvp (and what is built on them) trace the function into a graph even when it
is called with arrays. Such a trace remembers its inputs (`Known`): arrays, or tracers of
an enclosing trace that may know theirs. Converting one of its values to a Python number
(`if x < 2:`, `int(n)`, `x.item()`) evaluates, with the active backend's kernels, only the
nodes built so far that the value depends on, and keeps every value computed, so a loop
that tests a value each iteration evaluates each node once. The graph still records the
branch taken. A trace that knows nothing (jit, make_graph, vmap, a lax region) keeps the
ConcretizationError. Nothing here runs unless a value is converted.
"""
import numpy as np

from ir import Graph, Literal
from ir.passes import inline_calls
from lowering.interpreter import run
from tracer import core


class Known:
    """What a trace knows concretely: its first len(values) inputs' values (arrays or
    outer tracers) and `env`, id(var) -> array of every value computed so far."""

    def __init__(self, values):
        self.values = list(values)
        self.env = {}
        self.producer = {}     # id(output var) -> index of its node in trace.nodes
        self.indexed = 0       # trace.nodes[:indexed] are in `producer`


def _input_value(x):
    """An array for a remembered input, None if only an abstract trace knows it."""
    if isinstance(x, core.Tracer):
        return value_of(x)
    return x if type(x) is np.ndarray and x.dtype.isnative else core.as_array(x, "concrete")


def value_of(x):
    """The concrete array tracer `x` stands for, or None when its value is not known (it
    depends on an input of a trace made from types only)."""
    trace, known = x._trace, x._trace.known
    if known is None:
        return None
    core.check_live(x)
    env, nodes = known.env, trace.nodes
    if id(x._var) in env:
        return env[id(x._var)]
    for i in range(known.indexed, len(nodes)):
        for o in nodes[i].outputs:
            known.producer[id(o)] = i
    known.indexed = len(nodes)
    sources = dict(zip(map(id, trace.invars), known.values))
    sources.update(zip(map(id, trace.capvars), trace.captured))
    sources.update(zip(map(id, trace.constvars), trace.consts))
    need, feed, stack, seen = set(), [], [x._var], set()
    while stack:
        v = stack.pop()
        if id(v) in seen or id(v) in env:
            continue
        seen.add(id(v))
        i = known.producer.get(id(v))
        if i is not None:
            need.add(i)
            stack.extend(u for u in nodes[i].inputs if type(u) is not Literal)
        elif id(v) in sources:
            feed.append(v)
        else:
            return None      # an input given no value (linearize's tangents)
    for v in feed:
        val = _input_value(sources[id(v)])
        if val is None:
            return None
        env[id(v)] = val
    part = [nodes[i] for i in sorted(need)]
    made = {id(o) for n in part for o in n.outputs}
    ins = list({id(u): u for n in part for u in n.inputs
                if type(u) is not Literal and id(u) not in made}.values())
    outs = [o for n in part for o in n.outputs]
    graph = Graph(ins, outs, part)
    vals = run(inline_calls(graph), [env[id(u)] for u in ins], core.get_backend())
    env.update(zip(map(id, outs), vals))
    return env[id(x._var)]
