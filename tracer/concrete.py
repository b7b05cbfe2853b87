"""Concrete values inside eager transforms, as JAX and autograd give them.

grad, vjp, jvp (and what is built on them) trace the function into a graph even when it
is called with arrays. Such a trace remembers its inputs (`Known`): arrays, or tracers of
an enclosing trace that may know theirs. Converting one of its values to a Python number
(`if x < 2:`, `int(n)`, `x.item()`) evaluates, with the active backend's kernels, only the
nodes built so far that the value depends on, and keeps every value computed, so a loop
that tests a value each iteration evaluates each node once. The graph still records the
branch taken. A trace that knows nothing (jit, make_graph, vmap, a lax region) keeps the
ConcretizationError.

As in JAX, float(), complex() and tolist() of a value that carries a gradient (a float
value reached from a differentiated input through differentiable kernels) raise instead:
the Python number would silently drop its gradient. Nothing here runs unless a value is
converted.
"""
import numpy as np

from ir import Graph, Literal
from ir.passes import inline_calls
from ir.types import dtype_kind
from lowering.interpreter import run
from registry.families import differentiable
from tracer import core


class Known:
    """What a trace knows concretely: its first len(values) inputs' values (arrays or
    outer tracers) and `env`, id(var) -> array of every value computed so far. Given to
    core.trace_flat(known=) by the eager transforms.

    An input carries a gradient if `differentiated` flags it, or if the outer tracer
    standing for it carries one, unless `detached` (custom_vjp's fwd, like JAX's, runs
    on its arguments' primal values)."""

    def __init__(self, values, differentiated=(), detached=False):
        self.values = list(values)
        self.differentiated = list(differentiated) + [False] * (len(self.values)
                                                                 - len(differentiated))
        self.detached = detached
        self.env = {}
        self.producer = {}     # id(output var) -> index of its node in trace.nodes
        self.hot = None        # ids of the indexed values that carry a gradient
        self.indexed = 0       # trace.nodes[:indexed] are in `producer` and `hot`
        self.captures = 0      # trace.capvars[:captures] are in `hot` if they carry one

    def _index(self, trace):
        """Index the nodes (and captured outer values) added since the last call."""
        hot = self.hot
        if hot is None:
            hot = self.hot = {id(v) for v, d, x in zip(trace.invars, self.differentiated,
                                                      self.values)
                              if dtype_kind(v.aval.dtype) == "f"
                              and (d or not self.detached and _carries(x))}
        for v, x in zip(trace.capvars[self.captures:], trace.captured[self.captures:]):
            if _carries(x):
                hot.add(id(v))
        self.captures = len(trace.capvars)
        nodes = trace.nodes
        for i in range(self.indexed, len(nodes)):
            n = nodes[i]
            live = differentiable(n.kernel) and any(
                type(u) is not Literal and id(u) in hot for u in n.inputs)
            for o in n.outputs:
                self.producer[id(o)] = i
                if live and dtype_kind(o.aval.dtype) == "f":
                    hot.add(id(o))
        self.indexed = len(nodes)

    def carries_gradient(self, x):
        """True if tracer `x` of this trace is a float value reached from a differentiated
        input (here or in an enclosing trace) through differentiable kernels."""
        self._index(x._trace)
        return id(x._var) in self.hot

    def value(self, x):
        """The concrete array tracer `x` of this trace stands for, or None when it is not
        known (it depends on an input of a trace made from types only)."""
        trace, env = x._trace, self.env
        if id(x._var) in env:
            return env[id(x._var)]
        self._index(trace)
        nodes = trace.nodes
        sources = dict(zip(map(id, trace.invars), self.values))
        sources.update(zip(map(id, trace.capvars), trace.captured))
        sources.update(zip(map(id, trace.constvars), trace.consts))
        need, feed, stack, seen = set(), [], [x._var], set()
        while stack:
            v = stack.pop()
            if id(v) in seen or id(v) in env:
                continue
            seen.add(id(v))
            i = self.producer.get(id(v))
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


def _carries(x):
    """carries_gradient of an outer value (False for an array or a tracer of an
    abstract trace)."""
    known = x._trace.known if isinstance(x, core.Tracer) else None
    return known is not None and known.carries_gradient(x)


def _input_value(x):
    """An array for a remembered input, None if only an abstract trace knows it."""
    if isinstance(x, core.Tracer):
        known = x._trace.known
        return None if known is None else known.value(x)
    return x if type(x) is np.ndarray and x.dtype.isnative else core.as_array(x, "concrete")
