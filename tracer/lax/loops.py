"""`while_loop` and `fori_loop`: a `while` node with two regions, or a counted `scan`.

    carry... = while[cond, body, n_cond, n_body](cond_consts..., body_consts..., init...)

cond: (cond_consts..., carry...) -> bool[]; body: (body_consts..., carry...) -> carry.
With `count=True` (the form autodiff runs) the node also outputs its trip count (i64[]).
fori_loop with Python-int (static) bounds is a scan of known length (a counted loop a
compiler can unroll or vectorize); with traced bounds it is a while loop. The gradient of
`while` (reverse mode, which JAX lacks) is in `tracer.lax.while_grad`.
"""
import operator
import weakref
from collections import Counter

import numpy as np

import registry
from ir import Graph, ShapedArray
from ir.errors import ArgumentError, DTypeError
from ir.types import dtype_kind
from lowering.interpreter import own, run
from tracer import core
from tracer import numpy as tnp
from tracer.lax.indexing import slot
from tracer.lax._regions import (check_same, check_signature, closed, leaf_avals,
                                 promote_weak, trace_region)
from tracer.lax.scan import scan
from tracer.pytree import flatten, unflatten


def while_loop(cond_fun, body_fun, init_val):
    """`while cond_fun(val): val = body_fun(val)`, as jax.lax.while_loop (and, unlike
    JAX, differentiable in reverse mode too)."""
    source = core.user_source()
    carry, tree = flatten(init_val)
    in_tree = flatten([init_val])[1]
    for attempt in range(2):
        avals = leaf_avals(carry, "while_loop")
        body, body_tree, body_cap = trace_region(body_fun, in_tree, avals)
        promoted = promote_weak(carry, avals, body.out_avals) if not attempt else None
        if promoted is None:
            break
        carry = promoted
        in_tree = flatten([unflatten(tree, carry)])[1]
    check_same("while_loop", ("body_fun's output", "its input (init_val)"), body_tree,
               body.out_avals, tree, avals, source)
    cond, cond_tree, cond_cap = trace_region(cond_fun, in_tree, avals)
    outs = cond.out_avals
    if len(outs) != 1 or outs[0].shape != () or dtype_kind(outs[0].dtype) != "b":
        raise DTypeError(f"while_loop: cond_fun must return a boolean scalar, got "
                         f"{[str(a) for a in outs]} (at {source})")
    n = len(carry)
    attrs = {"cond": closed(cond, n, cond_cap, cond_cap), "body": closed(body, n, body_cap,
                                                                          body_cap),
             "n_cond": len(cond_cap), "n_body": len(body_cap)}
    out = core.run_kernel("while", cond_cap + body_cap + carry, attrs)
    return unflatten(tree, list(out) if isinstance(out, tuple) else [out])


def _static_int(x):
    """x as a Python int if it is a concrete integer scalar, else None."""
    if isinstance(x, core.Tracer):
        return None
    arr = np.asarray(x)
    if arr.ndim or dtype_kind(arr.dtype) not in "iu":
        raise DTypeError(f"fori_loop: bounds must be integer scalars, got {arr.dtype}"
                         f"{list(arr.shape)}")
    return operator.index(arr[()])


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`, as jax.lax.fori_loop.
    Concrete bounds give a scan of static length (unrolled as `unroll` says, as scan's);
    traced bounds a while loop, which cannot be unrolled."""
    if not callable(body_fun):
        raise ArgumentError("fori_loop: body_fun must be a function body_fun(i, val)")
    lo, hi = _static_int(lower), _static_int(upper)
    step = lambda c: (c[0] + 1, body_fun(c[0], c[1]))   # noqa: E731
    if lo is not None and hi is not None:
        if isinstance(lower, int) and isinstance(upper, int):
            i0 = lower                  # weak: i takes the dtype of what it meets
        else:
            i0 = np.asarray(lower, np.result_type(np.asarray(lower), np.asarray(upper)))
        return scan(lambda c, _: (step(c), None), (i0, init_val), length=max(hi - lo, 0),
                    unroll=1 if unroll is None else unroll)[0][1]
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(f"fori_loop: unroll={unroll!r} needs loop bounds known when traced "
                         f"(Python ints or concrete arrays), got traced bounds")
    dt = np.result_type(*[np.dtype(x.dtype) if hasattr(x, "dtype") else np.int64
                          for x in (lower, upper)])
    if dtype_kind(dt) not in "iu":
        raise DTypeError(f"fori_loop: bounds must be integers, got {dt}")
    up = tnp.astype(upper, dt)
    return while_loop(lambda c: c[0] < up, step, (tnp.astype(lower, dt), init_val))[1]


def _rule(*avals, cond, body, n_cond, n_body, count=False):
    carry = list(avals[n_cond + n_body:])
    check_signature("while", "cond's inputs", cond.in_avals, list(avals[:n_cond]) + carry)
    outs = cond.out_avals
    if len(outs) != 1 or outs[0].shape != () or dtype_kind(outs[0].dtype) != "b":
        raise DTypeError(f"while: cond must return one boolean scalar, got "
                         f"{[str(a) for a in outs]}")
    check_signature("while", "the body's inputs", body.in_avals,
                    list(avals[n_cond:n_cond + n_body]) + carry)
    check_signature("while", "the body's outputs", body.out_avals, carry)
    return tuple([a.strip_weak() for a in carry] + [ShapedArray((), np.int64)] * count)


def _impl(*args, cond, body, n_cond, n_body, count=False):
    cc, bc = list(args[:n_cond]), list(args[n_cond:n_cond + n_body])
    carry, trips = list(args[n_cond + n_body:]), 0
    body, slots = _in_place(body, n_body)
    nk = len(carry)
    for k in slots:
        carry[k] = np.array(carry[k])          # the loop's own buffer from now on
    while run(cond, cc + carry)[0]:
        outs = run(body, bc + carry)
        for j, k in enumerate(slots):
            i, v = outs[nk + 2 * j: nk + 2 * j + 2]
            buf = outs[k] = carry[k]
            for m, o in enumerate(outs[:nk]):   # a view of the buffer must not see it change
                if m != k and isinstance(o, np.ndarray) and np.may_share_memory(o, buf):
                    outs[m] = o.copy()
            buf[slot(buf, i)] = v
        carry = outs[:nk]
        trips += 1
    return tuple(own(carry, args) + [np.int64(trips)] * count)


_in_place_bodies = weakref.WeakKeyDictionary()


def _in_place(body, n_consts):
    """(graph, slots): where carry output k is `dynamic_update_index(carry input k, i, v)`
    (and nothing else reads that node), the graph returns (i, v) as two extra outputs
    instead, and the loop writes the slot into its own buffer after the iteration's
    reads: an iteration costs one slot, not a copy of the whole buffer (as a compiled
    loop-carried buffer would)."""
    cached = _in_place_bodies.get(body)
    if cached is not None:
        return cached
    uses = Counter([id(x) for n in body.nodes for x in n.inputs] +
                   [id(v) for v in body.outvars])      # of each dynamic_update_index result
    producer = {id(o): n for n in body.nodes for o in n.outputs}
    outs, extra, dropped, slots = list(body.outvars), [], set(), []
    for k, out in enumerate(body.outvars):
        node, var = producer.get(id(out)), body.invars[n_consts + k]
        if (node is not None and node.kernel == "dynamic_update_index" and
                node.inputs[0] is var and uses[id(out)] == 1):
            slots.append(k)
            dropped.add(id(node))
            outs[k] = var                     # a placeholder: the loop keeps its buffer
            extra += node.inputs[1:]
    graph = body if not slots else Graph(body.invars, outs + extra, [
        n for n in body.nodes if id(n) not in dropped], body.constvars, body.consts)
    _in_place_bodies[body] = graph, slots
    return graph, slots


registry.register_shape_rule("while", _rule)
registry.declare_family("while", "control_flow")
registry.register_kernel("while", "numpy", _impl)
