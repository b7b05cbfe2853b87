"""Graph -> graph passes: dead-code elimination, common-subexpression elimination,
constant folding, call inlining. Each returns a new Graph and never mutates its argument.

Each pass also runs inside every region (node.with_regions), treating the region as the
closed graph it is: its signature is kept, and nothing moves into or out of it (an outer
value is a node input, so folding or merging it outside is all a region ever sees).

A node with a side effect (its kernel declared with registry.declare_effects, e.g. a
collective, or a node whose regions hold one) is never folded, merged or removed, and no
pass moves a node: the order of effects is the order they were traced in."""
import numpy as np

from ir.graph import Graph, Literal, Node, Var


def _subst(x, env):
    return env.get(id(x), x) if isinstance(x, Var) else x


# Set by `registry` on import (its tables hold these per-kernel facts): kernel name -> True
# if its nodes have a side effect; kernel name -> its pruner (see dce) or None.
has_effects = lambda kernel: False  # noqa: E731
pruner = lambda kernel: None  # noqa: E731


def effectful(node):
    """True if `node` has a side effect: its kernel's, or one of a node in its regions
    (which are attrs: a node without attrs, most of them, has none)."""
    return has_effects(node.kernel) or bool(node.attr_items) and any(
        effectful(m) for g in node.regions for m in g.nodes)


def reads_axis(node, name=None):
    """True if `node` or a node in its regions is a collective (over axis `name`, or any
    axis): its value depends on the position along a vmap's named axis, so it cannot run
    eagerly, nor be left unbatched by that vmap."""
    axis = node.attrs.get("axis_name")
    if axis is not None and (name is None or axis == name):
        return True
    return bool(node.attr_items) and any(reads_axis(m, name) for g in node.regions
                                         for m in g.nodes)


def dce(graph):
    """Drop nodes whose outputs nothing uses (unless effectful), and constvars nothing
    reads; a node with some dead outputs is shrunk by its kernel's pruner
    (registry.register_pruner) if it has one."""
    live = {id(v) for v in graph.outvars if type(v) is Var}
    kept = []
    for n in reversed(graph.nodes):     # (loops within: on 3.11 a comprehension is a call)
        used = []
        for o in n.outputs:
            used.append(id(o) in live)
        if any(used) or effectful(n):
            prune = pruner(n.kernel) if any(used) else None
            n = prune(n, used) if prune is not None else n.with_regions(dce)
            kept.append(n)
            for x in n.inputs:
                if type(x) is Var:
                    live.add(id(x))
    kept.reverse()
    cv = [(v, c) for v, c in zip(graph.constvars, graph.consts) if id(v) in live]
    return Graph(graph.invars, graph.outvars, kept, [v for v, _ in cv], [c for _, c in cv])


def cse(graph):
    """Merge nodes with the same kernel, inputs and attrs (kernels without effects are
    pure; each effectful node happens once per occurrence)."""
    env, seen, nodes = {}, {}, []
    for n in graph.nodes:
        n = n.with_regions(cse)
        inputs = tuple([_subst(x, env) for x in n.inputs]) if env else n.inputs
        new = n if inputs == n.inputs else Node(n.kernel, inputs, n.outputs, n.attrs, n.source)
        if effectful(n):
            nodes.append(new)
            continue
        # a Var is keyed by its id (an int), a Literal by its (dtype, bytes) tuple
        ids = []
        for x in inputs:        # (a loop: on 3.11 a comprehension is a call)
            ids.append(x.key if type(x) is Literal else id(x))
        key = (n.kernel, tuple(ids), n.attr_items)
        prev = seen.get(key)
        if prev is not None:
            for o, p in zip(n.outputs, prev.outputs):
                env[id(o)] = p
            continue
        seen[key] = new
        nodes.append(new)
    outs = [_subst(v, env) for v in graph.outvars]
    return Graph(graph.invars, outs, nodes, graph.constvars, graph.consts)


def fold_constants(graph, evaluate, max_size=1 << 16):
    """Evaluate nodes whose inputs are all constants.

    `evaluate(node, values)` runs one node on concrete values and returns its outputs,
    or None when it cannot (e.g. the kernel has no `numpy` impl): the node then stays.
    A result is kept only if it does not grow the constants (no folding a broadcast of a
    scalar into a big array) and is at most `max_size` elements. Folded arrays are made
    read-only, so no view a program returns can change them.
    """
    consts = {id(v): np.asarray(c) for v, c in zip(graph.constvars, graph.consts)}
    env, nodes = {}, []
    new_constvars, new_consts = list(graph.constvars), list(graph.consts)
    def fold(region):
        return fold_constants(region, evaluate, max_size)
    for n in graph.nodes:
        n = n.with_regions(fold)
        inputs = tuple([_subst(x, env) for x in n.inputs]) if env else n.inputs
        outs = None
        for x in inputs:
            if type(x) is not Literal and id(x) not in consts:
                break
        else:       # every input is a constant
            values = [x.value if type(x) is Literal else consts[id(x)] for x in inputs]
            in_size = sum(np.size(v) for v in values)
            out_size = sum(o.aval.size for o in n.outputs)
            if out_size <= max(in_size, 1) and out_size <= max_size and not effectful(n):
                outs = evaluate(n, values)
        if outs is not None:
            for o, val in zip(n.outputs, outs):
                val = np.array(val, dtype=o.aval.dtype)
                val.flags.writeable = False
                if val.ndim == 0:
                    env[id(o)] = Literal(val)
                else:
                    consts[id(o)] = val
                    new_constvars.append(o)
                    new_consts.append(val)
            continue
        nodes.append(n if inputs == n.inputs else
                     Node(n.kernel, inputs, n.outputs, n.attrs, n.source))
    outs = [_subst(v, env) for v in graph.outvars]
    return dce(Graph(graph.invars, outs, nodes, new_constvars, new_consts))


def inline_calls(graph, kernel="custom_call"):
    """Replace every `kernel` node by the nodes of its region (`attrs["body"]`),
    recursively (inside other regions too), with fresh variables per call site, so a
    backend that compiles whole graphs never sees a call. The region's consts become the
    graph's consts."""
    if kernel not in graph.kernels():
        return Graph(graph.invars, graph.outvars, graph.nodes, graph.constvars, graph.consts)
    nodes, constvars, consts = [], list(graph.constvars), list(graph.consts)

    def emit(g, env, fresh):
        if fresh:
            for v, c in zip(g.constvars, g.consts):
                env[id(v)] = Var(v.aval)
                constvars.append(env[id(v)])
                consts.append(c)
        for n in g.nodes:
            ins = [_subst(x, env) for x in n.inputs]
            if n.kernel == kernel:
                sub = n.attrs["body"]
                outs = emit(sub, {id(v): x for v, x in zip(sub.invars, ins)}, True)
            else:
                n = n.with_regions(lambda r: inline_calls(r, kernel))
                outs = [Var(o.aval) for o in n.outputs] if fresh else list(n.outputs)
                same = not fresh and all(a is b for a, b in zip(ins, n.inputs))
                nodes.append(n if same else Node(n.kernel, ins, outs, n.attrs, n.source))
            env.update((id(o), x) for o, x in zip(n.outputs, outs))
        return [_subst(v, env) for v in g.outvars]

    outs = emit(graph, {}, False)
    return Graph(graph.invars, outs, nodes, constvars, consts)
