"""`tracer.checkpoint` (remat, as jax.checkpoint): one `remat` node holding `fun` as its
`body` region, and the node's `policy` (tracer.checkpoint_policies) if one is given;
`tracer.checkpoint_name`, the identity node that names a value for policies.

Differentiated, the node runs in a form whose body also returns the outputs of the body
nodes the policy saves (residuals). Its gradient is the body's VJP emitted into the
backward pass, reading the saved outputs and recomputing every other intermediate from
the node's inputs: memory for time. The forward stays opaque inside the node, so no pass
merges the recomputation back into it; residuals no backward reads are pruned by dce.

A control-flow node in the body (a loop, cond, nested checkpoint, custom_vjp) is never
saved as a whole: it is recomputed, and its own gradient decides what it stores.
"""
import functools
import logging
from collections.abc import Sequence

import numpy as np

import registry
from ir import Graph, Node, scalar_array
from ir.errors import ArgumentError
from tracer import config, core
from tracer.autodiff import backward
from tracer.lax._regions import (check_signature, is_float, leaf_avals, prune_region,
                                 trace_region)
from tracer.pytree import flatten, unflatten
from tracer.signature import UNSET, positional_names, static_spec
from tracer.vmap import batch_size, batch_values

_PYTHON = (bool, int, float)      # Python scalars, arrays inside the function
_logger = logging.getLogger("tracer.checkpoint")


_REMOVED = object()     # `concrete` not given


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=UNSET,
               static_argnames=UNSET, concrete=_REMOVED):
    """`fun`, whose intermediates the backward pass recomputes instead of storing,
    except those `policy(prim, *avals, **attrs)` says to save (tracer.checkpoint_policies;
    None saves nothing). Arguments at `static_argnums` or named in `static_argnames` are
    Python values `fun` sees as they are (not traced); each is completed from the other
    through fun's signature, as jit's, so a static parameter is static however it is
    passed (jax 0.10.2 ignores static_argnames unless its remat3 flag is on; with it, a
    name covers keyword arguments). `prevent_cse` (a bool, or a sequence of them, one per
    argument; its type checked as JAX checks it) is accepted for JAX's sake and changes
    nothing: the recomputation is never merged with the forward here, as the forward runs
    inside the node that no pass looks into across its boundary. `concrete` was removed
    in JAX 0.10: passing it is a NotImplementedError, as there."""
    if concrete is not _REMOVED:
        raise NotImplementedError("checkpoint: the `concrete` option was deprecated in JAX "
                                  "v0.8.2 and removed in v0.10.0; mark the arguments "
                                  "Python code branches on with static_argnums or "
                                  "static_argnames instead")
    if not isinstance(prevent_cse, (bool, Sequence)):    # JAX checks only this, too
        raise ArgumentError(f"prevent_cse must be a bool or tuple of bools, got "
                            f"{type(prevent_cse)=}")
    if policy is not None and not (callable(policy) and _hashable(policy)):
        raise ArgumentError(f"checkpoint(fun, policy=...): policy must be None or a "
                            f"hashable callable policy(prim, *avals, **attrs) -> bool such "
                            f"as tracer.checkpoint_policies.dots_saveable (the node keeps "
                            f"it as an attr), got {policy!r}")
    static, names = static_spec(fun, "checkpoint", static_argnums, static_argnames)
    attrs = {} if policy is None else {"policy": policy}

    @functools.wraps(fun)
    def remat(*args, **kwargs):
        bound, dynamic, dyn_kw = (_bind_static(fun, args, kwargs, static, names)
                                  if static or names else (fun, args, kwargs))
        leaves, in_tree = flatten((list(dynamic), dyn_kw))
        if core.innermost_trace(leaves) is None and core.current_trace() is None:
            # nothing is differentiated: just run it, on arrays as when traced (x.sum()
            # of a Python float argument works, as in JAX)
            a, k = unflatten(in_tree, [scalar_array(x, "checkpoint") if isinstance(
                x, _PYTHON) else x for x in leaves])
            return bound(*a, **k)
        graph, out_tree, captured = trace_region(lambda a, k: bound(*a, **k), in_tree,
                                                 leaf_avals(leaves, "checkpoint"))
        outs = core.run_kernel("remat", leaves + captured, {"body": graph, **attrs})
        return unflatten(out_tree, list(outs) if isinstance(outs, tuple) else [outs])
    return remat


def _hashable(policy):
    try:
        hash(policy)
    except TypeError:
        return False
    return True


def checkpoint_name(x, name):
    """`x` (a pytree of arrays) unchanged, each leaf named `name` for checkpoint
    policies: inside a traced function it is a `checkpoint_name` node, an identity that
    every backend runs (fused away by the llvm compiler) and whose gradient is `dy`."""
    if not isinstance(name, str):
        raise ArgumentError(f"checkpoint_name(x, name): name must be a str, got "
                            f"{type(name).__name__}")
    leaves, tree = flatten(x)
    return unflatten(tree, [core.run_kernel("checkpoint_name", [v], {"name": name})
                            for v in leaves])


def _positions(static, n):
    return {k % n for k in static if -n <= k < n}


def _bind_static(fun, args, kwargs, static, names):
    """(`fun` taking only the dynamic arguments, the static ones bound; the dynamic
    positional arguments; the dynamic keyword arguments). A static position the call
    does not reach is an error unless its parameter is passed by keyword."""
    params = positional_names(fun)
    bad = [k for k in static if not -len(args) <= k < len(args)
           and not (-len(params) <= k < len(params) and params[k] in kwargs)]
    if bad:
        raise ArgumentError(f"checkpoint: static_argnums={static} but the call passes "
                            f"{len(args)} positional arguments; each index must be in "
                            f"[-{len(args)}, {len(args)})")
    fixed = _positions(static, len(args))
    fixed_kw = {k: v for k, v in kwargs.items() if k in names}
    traced = [(f"argument {k} is in static_argnums", args[k]) for k in sorted(fixed)]
    traced += [(f"argument {k!r} is in static_argnames", v) for k, v in fixed_kw.items()]
    for what, v in traced:
        if isinstance(v, core.Tracer):
            raise ArgumentError(f"checkpoint: {what} but is a traced value ({v.aval}); pass "
                                f"a Python value there, or drop it from the static ones")

    def bound(*dynamic, **dyn_kw):
        it = iter(dynamic)
        return fun(*[args[k] if k in fixed else next(it) for k in range(len(args))],
                   **fixed_kw, **dyn_kw)
    return (bound, [a for k, a in enumerate(args) if k not in fixed],
            {k: v for k, v in kwargs.items() if k not in names})


class _Prim:
    """What a policy sees of a node: `.name`, its kernel (JAX passes a Primitive)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def _saved_nodes(body, policy):
    """The body nodes whose outputs `policy` has the forward pass save, in order."""
    if policy is None:
        return []
    return [n for n in body.nodes if registry.family(n.kernel) != "control_flow"
            and _decide(policy, n)]


def _decide(policy, node):
    out = policy(_Prim(node.kernel), *[x.aval for x in node.inputs], **node.attrs)
    if not isinstance(out, (bool, np.bool_)):
        raise ArgumentError(f"checkpoint: policy {policy!r} returned {out!r} for kernel "
                            f"{node.kernel!r}; a policy returns True (save) or False "
                            f"(recompute)")
    return bool(out)


def _form(attrs):
    """The body also returning the saved nodes' outputs, after its own."""
    body = attrs["body"]
    saved = _saved_nodes(body, attrs.get("policy"))
    _log_residuals(body, saved)
    residuals = [o for n in saved for o in n.outputs]
    if not residuals:
        return attrs
    return {**attrs, "body": Graph(body.invars, body.outvars + residuals, body.nodes,
                                   body.constvars, body.consts)}


def _log_residuals(body, saved):
    """What the gradient keeps from the forward pass, in JAX's log line (DEBUG; WARNING
    with tracer.config's jax_log_checkpoint_residuals): the inputs the recomputed nodes
    read, and the saved nodes' outputs."""
    level = logging.WARNING if config.log_checkpoint_residuals.value else logging.DEBUG
    if not _logger.isEnabledFor(level):
        return
    kept = {id(n) for n in saved}
    read = {id(x) for n in body.nodes if id(n) not in kept for x in n.inputs}
    parts = []
    inputs = [f"  {v.aval}\n" for v in body.invars if id(v) in read]
    if inputs:
        parts.append("saving inputs with shapes:\n" + "".join(inputs))
    if saved:
        parts.append("saving these intermediates:\n" + "".join(
            f"  {o.aval} output of {n.kernel} from {n.source}\n" for n in saved
            for o in n.outputs))
    _logger.log(level, "remat-decorated function " + "and ".join(parts))


def _rule(*avals, body, policy=None):
    check_signature("remat", "the body's inputs", body.in_avals, avals)
    return tuple(a.strip_weak() for a in body.out_avals)


def _grad(dy, inputs, outputs, attrs):
    body = attrs["body"]
    outs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    dys = list(dy) if isinstance(dy, tuple) else [dy]
    saved, given, at = _saved_nodes(body, attrs.get("policy")), {}, len(outs)
    for n in reversed(saved):             # the residuals close the body's outputs
        at -= len(n.outputs)
        given[id(n)] = tuple(outs[at:at + len(n.outputs)])
    cts = [d if is_float(v.aval) and k < at else None
           for k, (d, v) in enumerate(zip(dys, body.outvars))]
    wrt = [is_float(v.aval) for v in body.invars]
    grads = iter(backward(body, list(inputs), cts, wrt, given)[1])
    return [next(grads) if w else None for w in wrt]


def _prune(node, used):
    """dce of a remat: dead outputs (unread residuals) go, then inputs none reads."""
    a = node.attrs
    keep = [j for j, u in enumerate(used) if u]
    body, kept = prune_region(a["body"], keep, set(range(len(node.inputs))))
    return Node("remat", [node.inputs[k] for k in kept], [node.outputs[j] for j in keep],
                {**a, "body": body}, node.source)


def _batched(inputs, dims, attrs):
    """One remat of the batched body, under the same policy."""
    size, out_dims = batch_size(inputs, dims), []

    def fun(*xs):
        outs = batch_values(attrs["body"], size, list(xs), dims)
        out_dims.extend(d for _, d in outs)
        return [o for o, _ in outs]
    return tuple(checkpoint(fun, policy=attrs.get("policy"))(*inputs)), tuple(out_dims)


registry.declare_kernel("remat", shape=_rule, family="control_flow", gradient=_grad,
                        batching=_batched, form=_form, pruner=_prune)
registry.declare_kernel("checkpoint_name", shape=lambda x, *, name: x.strip_weak(),
                        family="elementwise", gradient=lambda dy, inputs, outputs, attrs: (dy,))
