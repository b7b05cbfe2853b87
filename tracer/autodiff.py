"""Reverse mode as a graph transform, and forward mode by transposing it.

`backward(graph, args, cts, wrt)` re-emits the graph's nodes on `args` (tracers or arrays)
and walks them in reverse, calling each kernel's registered gradient (written with
traceable ops) and accumulating cotangents. Run under a fresh trace it produces a new
graph (forward + backward) that prints, optimizes, compiles and differentiates again.

Forward mode needs no second registration: the VJP is linear in the cotangent, so the
VJP of the VJP (taken with respect to the cotangent) is the JVP.
"""
import numpy as np

import registry
from ir import Var, cse, dce
from ir.errors import GradientError, GradientNotFoundError
from tracer import core
from tracer.core import trace_flat

# Kernels whose outputs carry no gradient: comparisons, integer results, sign (zero a.e.).
NON_DIFFERENTIABLE = frozenset({"gt", "ge", "lt", "le", "eq", "ne", "argmax", "argmin",
                                "sign"})


def _differentiable(aval):
    return aval.dtype.kind == "f"


def _active_nodes(graph, wrt):
    """Nodes on a path from a differentiated input to an output."""
    active = {id(v) for v, w in zip(graph.invars, wrt) if w and _differentiable(v.aval)}
    forward = []
    for n in graph.nodes:
        if n.kernel not in NON_DIFFERENTIABLE and any(
                isinstance(x, Var) and id(x) in active for x in n.inputs):
            outs = [o for o in n.outputs if _differentiable(o.aval)]
            active.update(id(o) for o in outs)
            if outs:
                forward.append(n)
    needed = {id(v) for v in graph.outvars if isinstance(v, Var)}
    path = []
    for n in reversed(forward):
        if any(id(o) in needed for o in n.outputs):
            path.append(n)
            needed.update(id(x) for x in n.inputs if isinstance(x, Var))
    return path[::-1]


def check_differentiable(graph, wrt):
    """Raise before anything runs if a node on the differentiated path has no gradient."""
    for n in _active_nodes(graph, wrt):
        if not registry.has_gradient(n.kernel):
            where = f" (created at {n.source})" if n.source else ""
            raise GradientNotFoundError(
                f"cannot differentiate through kernel {n.kernel!r}{where}: it has no "
                f"registered gradient. Register one with registry.register_gradient("
                f"{n.kernel!r}, lambda dy, inputs, outputs, attrs: (...one gradient or None "
                f"per input...)).")
        core.note_kernel(n.kernel)


def _zeros(aval):
    from tracer import numpy as tnp
    return tnp.zeros(aval.shape, aval.dtype)


def backward(graph, args, cts, wrt):
    """Evaluate `graph` on `args`, then pull `cts` (one per output, None = zero) back.

    Returns (outputs, grads) with one grad per input flagged in `wrt`.
    """
    path = _active_nodes(graph, wrt)
    env = core.inline(graph, args, core.innermost_trace(args) or core._stack[-1])

    def read(x):
        return core.read(env, x)
    outs = [read(v) for v in graph.outvars]

    ct_env = {}

    def accumulate(v, g):
        prev = ct_env.get(id(v))
        ct_env[id(v)] = g if prev is None else prev + g
    for v, ct in zip(graph.outvars, cts):
        if isinstance(v, Var) and ct is not None:
            accumulate(v, ct)
    for n in reversed(path):
        if not any(id(o) in ct_env for o in n.outputs):
            continue
        dys = [ct_env.get(id(o)) for o in n.outputs]
        dys = [_zeros(o.aval) if d is None else d for d, o in zip(dys, n.outputs)]
        dy = tuple(dys) if len(n.outputs) > 1 else dys[0]
        grads = registry.get_gradient(n.kernel)(
            dy, [read(x) for x in n.inputs],
            [env[id(o)] for o in n.outputs] if len(n.outputs) > 1 else env[id(n.outputs[0])],
            n.attrs)
        grads = _check_grads(n, grads)
        for x, g in zip(n.inputs, grads):
            if g is not None and isinstance(x, Var) and _differentiable(x.aval):
                accumulate(x, g)
    grads = [ct_env.get(id(v)) for v, w in zip(graph.invars, wrt) if w]
    grads = [_zeros(v.aval) if g is None else g
             for g, v in zip(grads, [v for v, w in zip(graph.invars, wrt) if w])]
    return outs, grads


def _check_grads(node, grads):
    from tracer import numpy as tnp
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)
    if len(grads) != len(node.inputs):
        raise GradientError(f"gradient of kernel {node.kernel!r} returned {len(grads)} "
                            f"values for {len(node.inputs)} inputs (return one gradient, or "
                            f"None, per input)")
    out = []
    for i, (x, g) in enumerate(zip(node.inputs, grads)):
        if g is not None:
            shape = g.shape if hasattr(g, "shape") else np.shape(g)
            if tuple(shape) != x.aval.shape:
                raise GradientError(f"gradient of kernel {node.kernel!r} for input {i} has "
                                    f"shape {tuple(shape)}, but the input has shape "
                                    f"{x.aval.shape}")
            if _differentiable(x.aval):
                g = tnp.astype(g, x.aval.dtype)
        out.append(g)
    return out


def vjp_graph(graph, wrt):
    """The graph (inputs..., cotangents...) -> (outputs..., grads of wrt inputs...)."""
    check_differentiable(graph, wrt)
    n = len(graph.invars)
    in_avals = graph.in_avals + [v.aval.strip_weak() for v in graph.outvars]

    def joint(*a):
        outs, grads = backward(graph, a[:n], a[n:], wrt)
        return outs + grads
    g, captured = trace_flat(joint, in_avals)
    assert not captured
    return dce(cse(g))


def partition(graph, n_early, n_early_out):
    """Split a graph into what its first `n_early` inputs determine and the rest.

    Returns (early, late): `early` maps those inputs to the first `n_early_out` outputs
    plus residuals; `late` maps (residuals, remaining inputs) to the remaining outputs.
    This turns a joint forward+backward graph into `vjp`'s forward pass and `vjp_fn`.
    """
    from ir import Graph
    late = {id(v) for v in graph.invars[n_early:]}
    consts = {id(v) for v in graph.constvars}
    early_nodes, late_nodes = [], []
    for nd in graph.nodes:
        if any(isinstance(x, Var) and id(x) in late for x in nd.inputs):
            late.update(id(o) for o in nd.outputs)
            late_nodes.append(nd)
        else:
            early_nodes.append(nd)
    late_outs = graph.outvars[n_early_out:]
    residuals, seen = [], set()
    for x in [x for nd in late_nodes for x in nd.inputs] + late_outs:
        if isinstance(x, Var) and id(x) not in late and id(x) not in consts and id(x) not in seen:
            seen.add(id(x))
            residuals.append(x)
    early = Graph(graph.invars[:n_early], graph.outvars[:n_early_out] + residuals,
                  early_nodes, graph.constvars, graph.consts)
    late_g = Graph(residuals + graph.invars[n_early:], late_outs, late_nodes,
                   graph.constvars, graph.consts)
    return dce(early), dce(late_g)
