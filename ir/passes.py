"""Graph -> graph passes: dead-code elimination, common-subexpression elimination,
constant folding. Each returns a new Graph and never mutates its argument."""
import numpy as np

from ir.graph import Graph, Literal, Node, Var


def _subst(x, env):
    return env.get(id(x), x) if isinstance(x, Var) else x


def dce(graph):
    """Drop nodes whose outputs nothing uses, and constvars nothing reads."""
    live = {id(v) for v in graph.outvars if isinstance(v, Var)}
    kept = []
    for n in reversed(graph.nodes):
        if any(id(o) in live for o in n.outputs):
            kept.append(n)
            live.update(id(x) for x in n.inputs if isinstance(x, Var))
    kept.reverse()
    cv = [(v, c) for v, c in zip(graph.constvars, graph.consts) if id(v) in live]
    return Graph(graph.invars, graph.outvars, kept, [v for v, _ in cv], [c for _, c in cv])


def _input_key(x):
    return ("lit", x.key) if isinstance(x, Literal) else ("var", id(x))


def cse(graph):
    """Merge nodes with the same kernel, inputs and attrs (kernels are pure)."""
    env, seen, nodes = {}, {}, []
    for n in graph.nodes:
        inputs = tuple(_subst(x, env) for x in n.inputs)
        key = (n.kernel, tuple(_input_key(x) for x in inputs), n.attr_items)
        prev = seen.get(key)
        if prev is not None:
            for o, p in zip(n.outputs, prev.outputs):
                env[id(o)] = p
            continue
        new = n if inputs == n.inputs else Node(n.kernel, inputs, n.outputs, n.attrs, n.source)
        seen[key] = new
        nodes.append(new)
    outs = [_subst(v, env) for v in graph.outvars]
    return Graph(graph.invars, outs, nodes, graph.constvars, graph.consts)


def fold_constants(graph, evaluate, max_size=1 << 16):
    """Evaluate nodes whose inputs are all constants.

    `evaluate(node, values)` runs one node on concrete values and returns its outputs.
    A result is kept only if it does not grow the constants (no folding a broadcast of a
    scalar into a big array) and is at most `max_size` elements.
    """
    consts = {id(v): np.asarray(c) for v, c in zip(graph.constvars, graph.consts)}
    env, nodes = {}, []
    new_constvars, new_consts = list(graph.constvars), list(graph.consts)
    for n in graph.nodes:
        inputs = tuple(_subst(x, env) for x in n.inputs)
        values = [x.value if isinstance(x, Literal) else consts.get(id(x)) for x in inputs]
        in_size = sum(np.size(v) for v in values if v is not None)
        out_size = sum(o.aval.size for o in n.outputs)
        foldable = (all(v is not None for v in values)
                    and out_size <= max(in_size, 1) and out_size <= max_size)
        if foldable:
            outs = evaluate(n, values)
            for o, val in zip(n.outputs, outs):
                val = np.asarray(val, dtype=o.aval.dtype)
                if val.ndim == 0:
                    env[id(o)] = Literal(val)
                else:
                    consts[id(o)] = val
                    new_constvars.append(o)
                    new_consts.append(val)
            continue
        nodes.append(n if inputs == n.inputs else Node(n.kernel, inputs, n.outputs, n.attrs, n.source))
    outs = [_subst(v, env) for v in graph.outvars]
    return dce(Graph(graph.invars, outs, nodes, new_constvars, new_consts))
