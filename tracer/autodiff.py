"""Reverse mode as a graph transform, and forward mode by transposing it.

`backward(graph, args, cts, wrt)` re-emits the graph's nodes on `args` and walks them in
reverse, calling each kernel's registered gradient (written with traceable ops) and
accumulating cotangents. Run under a fresh trace it produces a new graph (forward +
backward) that prints, optimizes, compiles and differentiates again like any other.

Forward mode needs no second registration: the VJP is linear in the cotangent, so the
VJP of the VJP (taken with respect to the cotangent) is the JVP (see transforms.jvp).

Where `where`/select picks one branch, the other branch's cotangent is an exact zero, and
the chain rule would multiply that zero by the branch's own local derivatives: 0 * inf
and 0 * nan are NaN, so `where(x > 0, sqrt(x), 0)` at x < 0 would get a NaN gradient
(JAX gives NaN there). To prevent that, every cotangent carries an optional boolean
*zero mask* (true where it is known to be exactly zero): select creates one for each
branch, it flows backward through the built-in elementwise kernels, whose gradients are
local, and each of their input gradients is re-zeroed under it. Guarantee: a value used
only inside the untaken branches of selects (through elementwise ops) gets exactly zero
gradient from them, whatever its derivative there (inf, nan). A mask stops at any other
kernel (reductions, reshapes, matmul, custom_call): past one, the IEEE product applies.

Host debug callbacks (tracer.debug) run in the primal pass only: a gradient rule (a
loop's or a branch's, which re-emits its region's forward nodes) and jvp's pullback run
`replaying()`, and a graph differentiated while replaying leaves its debug_callback nodes
out (in its regions too), as JAX's linearize keeps them in the primal part.
"""
import contextlib
import threading

import numpy as np

import registry
from ir import Graph, Var, cse, dce
from ir.errors import GradientError, GradientNotFoundError
from ir.types import dtype_kind
from registry.families import FORMS, differentiable, family
from tracer import core
from tracer import numpy as tnp
from tracer.core import trace_flat


def _differentiable(aval):
    return dtype_kind(aval.dtype) == "f"


def _active(graph, wrt):
    """(path, active): the nodes on a path from a differentiated input to an output, and
    the ids of the values that depend on a differentiated input."""
    active = {id(v) for v, w in zip(graph.invars, wrt) if w and _differentiable(v.aval)}
    forward = []
    for n in graph.nodes:
        # kernels declared not differentiable (registry.families: sign, stop_gradient)
        # and kernels with only integer/bool outputs give values that act as constants
        if differentiable(n.kernel) and any(
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
    return path[::-1], active


def describe(node):
    """`kernel (in types -> out types)` plus the user's source line, for messages."""
    name = node.kernel
    rule = node.attrs.get("rule") if node.kernel == "custom_call" else None
    if rule is not None:
        name = f"{name} of {rule}"
    types = (f"{', '.join(str(x.aval) for x in node.inputs)} -> "
             f"{', '.join(str(o.aval) for o in node.outputs)}")
    where = f", created at {node.source}" if node.source else ""
    return f"{name!r} ({types}{where})"


def check_differentiable(graph, wrt):
    """Raise before anything runs if a node on the differentiated path has no gradient
    (or is a custom gradient closing over a differentiated value). Records the kernels
    whose gradients will be used, so a jit cache entry is rebuilt when one changes."""
    path, active = _active(graph, wrt)
    for n in path:
        if not registry.has_gradient(n.kernel):
            raise GradientNotFoundError(
                f"cannot differentiate through kernel {describe(n)}: it has no registered "
                f"gradient. Register one with registry.register_gradient({n.kernel!r}, "
                f"lambda dy, inputs, outputs, attrs: (...one gradient or None per "
                f"input...)), written with tracer.numpy ops.")
        if n.kernel == "custom_call":       # its gradient is its own rule, not its regions'
            rule = n.attrs["rule"]
            if any(isinstance(x, Var) and id(x) in active for x in n.inputs[rule.n_args:]):
                raise GradientError(
                    f"{rule} (called at {n.source}) closes over a value that is being "
                    f"differentiated, and its backward cannot return a gradient for it. "
                    f"Pass that value as an argument of the function instead.")
        elif family(n.kernel) == "control_flow":
            for g in n.regions:
                check_differentiable(g, [True] * len(g.invars))
        core.note_kernel(n.kernel)


def register_differentiable_form(kernel, form):
    """Differentiate `kernel`'s nodes in another form: `form(attrs)` gives the attrs of a
    node that computes the same outputs first, then residuals its gradient reads (a
    custom_call's fwd; a scan that also stacks its carries). The forward pass then runs
    that form once, and the gradient gets its residuals as extra outputs."""
    FORMS.register(kernel, form)


def _differentiable_attrs(node):
    form = FORMS.entries.get(node.kernel)
    return node.attrs if form is None else form(node.attrs)


class _Replay(threading.local):
    depth = 0


_replay = _Replay()


@contextlib.contextmanager
def replaying():
    """While the block runs, `backward` re-emits forward nodes that already ran in the
    primal pass: host debug callbacks are left out (see the module doc)."""
    _replay.depth += 1
    try:
        yield
    finally:
        _replay.depth -= 1


def _has_debug(graph):
    return any(n.kernel == "debug_callback" or any(_has_debug(g) for g in n.regions)
               for n in graph.nodes)


def _without_debug(graph):
    """`graph` without its debug_callback nodes, in its regions too (itself if none)."""
    if not _has_debug(graph):
        return graph
    nodes = [n.with_regions(_without_debug) for n in graph.nodes
             if n.kernel != "debug_callback"]
    return Graph(graph.invars, graph.outvars, nodes, graph.constvars, graph.consts)


def _zeros(aval):
    return tnp.zeros(aval.shape, aval.dtype)


def _select_masks(cond, mask):
    """Zero masks of select's inputs (cond, on_true, on_false): on_true's cotangent is
    zero where mask | ~cond, on_false's where mask | cond."""
    not_cond = tnp.equal(cond, False)
    if mask is None:
        return None, not_cond, cond
    return None, tnp.where(mask, True, not_cond), tnp.where(mask, True, cond)


def backward(graph, args, cts, wrt, saved=None):
    """Evaluate `graph` on `args`, then pull `cts` (one per output, None = zero) back.

    `saved` maps id(node) to that node's outputs (in its own form) stored by a forward
    pass: they are read, not recomputed, and the gradient still flows through the node.
    Returns (outputs, grads) with one grad per input flagged in `wrt`.
    """
    if _replay.depth:
        graph = _without_debug(graph)
    path, active = _active(graph, wrt)
    forms = {id(n): _differentiable_attrs(n) for n in path}
    env = core.inline(graph, args, core.innermost_trace(args) or core.current_trace(),
                      lambda n: forms.get(id(n)) or n.attrs, saved)
    outs = [core.read(env, v) for v in graph.outvars]
    ct_env, masks = {}, {}   # id(var) -> cotangent, and its zero mask (None: unknown)

    def accumulate(v, g, mask):
        if id(v) in ct_env:
            ct_env[id(v)] = ct_env[id(v)] + g
            old = masks[id(v)]
            masks[id(v)] = None if old is None or mask is None else tnp.where(old, mask, False)
        else:
            ct_env[id(v)], masks[id(v)] = g, mask
    for v, ct in zip(graph.outvars, cts):
        if isinstance(v, Var) and ct is not None:
            accumulate(v, ct, None)
    with replaying():     # gradient rules re-emit forward nodes: their debug callbacks ran
        for n in reversed(path):
            if not any(id(o) in ct_env for o in n.outputs):
                continue
            outputs = list(env[id(n)])        # the differentiable form's: maybe more
            dys = [ct_env.get(id(o)) for o in n.outputs]
            dys += [None] * (len(outputs) - len(dys))
            # a control-flow kernel's gradient takes None for an output with no cotangent, so
            # residual or stacked outputs nobody reads cost nothing; others get zeros
            if family(n.kernel) != "control_flow":
                dys = [_zeros(o.aval) if d is None else d for d, o in zip(dys, n.outputs)]
            ins = [core.read(env, x) for x in n.inputs]
            multi = len(outputs) > 1
            dy = tuple(dys) if multi else dys[0]
            grads = _check_grads(n, registry.get_gradient(n.kernel)(
                dy, ins, outputs if multi else outputs[0], forms[id(n)]))
            # zero masks flow through the elementwise family, whose gradients are local
            mask = masks.get(id(n.outputs[0])) if family(n.kernel) == "elementwise" else None
            in_masks = (_select_masks(ins[0], mask) if n.kernel == "select" else
                        [mask] * len(ins))
            for x, g, m in zip(n.inputs, grads, in_masks):
                if g is None or id(x) not in active:   # constants need no cotangent
                    continue
                if mask is not None and g is not dy:
                    g = tnp.where(mask, 0, g)
                accumulate(x, g, m)
    grads = [ct_env[id(v)] if id(v) in ct_env else _zeros(v.aval)
             for v, w in zip(graph.invars, wrt) if w]
    return outs, grads


def _check_grads(node, grads):
    """One gradient (or None) per input, each of its input's shape, cast to its dtype."""
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)
    if len(grads) != len(node.inputs):
        raise GradientError(f"the gradient of kernel {describe(node)} returned "
                            f"{len(grads)} values for {len(node.inputs)} inputs (return one "
                            f"gradient, or None, per input)")
    out = []
    for i, (x, g) in enumerate(zip(node.inputs, grads)):
        if g is not None:
            shape = tuple(np.shape(g)) if not hasattr(g, "shape") else tuple(g.shape)
            if shape != x.aval.shape:
                raise GradientError(f"the gradient of kernel {describe(node)} for input "
                                    f"{i} has shape {shape}, but the input has shape "
                                    f"{x.aval.shape}")
            if _differentiable(x.aval):
                g = tnp.astype(g, x.aval.dtype)
        out.append(g)
    return out


def vjp_graph(graph, wrt, n_ct, known=None):
    """The graph (inputs..., cotangents of the first `n_ct` outputs...) ->
    (outputs..., grads of the inputs flagged in `wrt`...); `known`: as trace_flat's."""
    check_differentiable(graph, wrt)
    n = len(graph.invars)
    in_avals = graph.in_avals + [v.aval.strip_weak() for v in graph.outvars[:n_ct]]

    def joint(*a):
        outs, grads = backward(graph, a[:n], a[n:], wrt)
        return outs + grads
    g, captured = trace_flat(joint, in_avals, known)
    assert not captured
    return dce(cse(g))


def partition(graph, n_early, n_early_out):
    """Split a graph into what its first `n_early` inputs determine and the rest.

    Returns (early, late): `early` maps those inputs to the first `n_early_out` outputs
    plus residuals; `late` maps (residuals, remaining inputs) to the remaining outputs.
    This turns a joint forward+backward graph into a forward pass and a backward pass.
    """
    late = {id(v) for v in graph.invars[n_early:]}
    early_nodes, late_nodes = [], []
    for nd in graph.nodes:
        if any(isinstance(x, Var) and id(x) in late for x in nd.inputs):
            late.update(id(o) for o in nd.outputs)
            late_nodes.append(nd)
        else:
            early_nodes.append(nd)
    late_outs = graph.outvars[n_early_out:]
    residuals, seen = [], late | {id(v) for v in graph.constvars}
    for x in [x for nd in late_nodes for x in nd.inputs] + late_outs:
        if isinstance(x, Var) and id(x) not in seen:
            seen.add(id(x))
            residuals.append(x)
    early = Graph(graph.invars[:n_early], graph.outvars[:n_early_out] + residuals,
                  early_nodes, graph.constvars, graph.consts)
    late_g = Graph(residuals + graph.invars[n_early:], late_outs, late_nodes,
                   graph.constvars, graph.consts)
    return dce(early), dce(late_g)
