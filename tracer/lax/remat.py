"""`tracer.checkpoint` (remat, as jax.checkpoint): one `remat` node holding `fun` as its
`body` region.

The node's gradient is the body's VJP, emitted into the backward pass, so the backward
recomputes the body's intermediates from the node's inputs instead of the forward
storing them: memory for time. The node keeps the forward opaque, so no pass merges the
recomputation back into it.
"""
import functools

import registry
from lowering.interpreter import evaluate
from tracer import core
from tracer.autodiff import backward
from tracer.lax._regions import check_signature, is_float, leaf_avals, trace_region
from tracer.pytree import flatten, unflatten


def checkpoint(fun):
    """`fun`, whose intermediates the backward pass recomputes instead of storing."""
    @functools.wraps(fun)
    def remat(*args):
        leaves, in_tree = flatten(list(args))
        if core.innermost_trace(leaves) is None and core.current_trace() is None:
            return fun(*args)             # nothing is differentiated: just run it
        graph, out_tree, captured = trace_region(fun, in_tree, leaf_avals(leaves, "checkpoint"))
        outs = core.run_kernel("remat", leaves + captured, {"body": graph})
        return unflatten(out_tree, list(outs) if isinstance(outs, tuple) else [outs])
    return remat


def _rule(*avals, body):
    check_signature("remat", "the body's inputs", body.in_avals, avals)
    return tuple(a.strip_weak() for a in body.out_avals)


def _grad(dy, inputs, outputs, attrs):
    body = attrs["body"]
    dys = list(dy) if isinstance(dy, tuple) else [dy]
    cts = [d if is_float(v.aval) else None for d, v in zip(dys, body.outvars)]
    wrt = [is_float(v.aval) for v in body.invars]
    grads = iter(backward(body, list(inputs), cts, wrt)[1])
    return [next(grads) if w else None for w in wrt]


registry.register_shape_rule("remat", _rule)
registry.register_kernel("remat", "numpy", lambda *args, body: tuple(
    evaluate(body, list(args), "numpy")))
registry.register_gradient("remat", _grad)
