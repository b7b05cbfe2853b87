"""`scan`, `map` and static-bound `fori_loop`: one `scan` node whose body is a region.

    carry..., ys... = scan[body, n_consts, n_carry, length, reverse, unroll](
                          consts..., init..., xs...)

body: (consts..., carry..., x slices...) -> (new carry..., y slices...); the ys are
stacked along a new leading axis of size `length` (position k holds iteration k's y,
also when `reverse` runs k = length-1 .. 0). `unroll` is a hint for compiled backends.

Reverse mode stores the carries: the differentiable form appends the body's carry inputs
to its outputs, so the forward scan also returns them stacked (memory: length carries),
and the gradient is a scan running the other way over them, each step the body's VJP
(one more body evaluation per step). The forward scan that runs is the one that
stores them (autodiff emits the node in that form), and the backward is itself a scan,
so it differentiates again (to any order) and jvp transposes it.

Batched, it is one scan of the batched body (xs batched on their second axis, the scan
axis staying first); a carry that a batched value reaches is batched from the start.
"""
import operator

import registry
from ir import Graph, Node, ShapedArray
from ir.errors import ArgumentError, ShapeError
from tracer import core
from tracer import numpy as tnp
from tracer.autodiff import backward
from tracer.lax._regions import (check_same, check_signature, closed, is_float, leaf_avals,
                                 promote_weak, prune_region, trace_region)
from tracer.lax.region_batching import at_dim, carry_dims, split
from tracer.pytree import flatten, unflatten
from tracer.sources import user_source
from tracer.vmap import batch_size, batch_values, install_loop_rule, moveaxis


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """`f(carry, x) -> (carry, y)` over the leading axis of `xs` (pytrees), as
    jax.lax.scan; returns (final carry, stacked ys)."""
    source = user_source()
    carry, carry_tree = flatten(init)
    x_leaves, x_tree = flatten(xs)
    x_avals = leaf_avals(x_leaves, "scan")
    lengths = {a.shape[0] if a.shape else None for a in x_avals}
    if None in lengths:
        raise ShapeError(f"scan: every leaf of xs needs a leading axis to scan over, got "
                         f"{[str(a) for a in x_avals]} (at {source})")
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            raise ArgumentError(f"scan: length must be a Python int, got "
                                f"{type(length).__name__}") from None
        lengths.add(length)
    if len(lengths) != 1:
        raise ShapeError(f"scan: " + ("xs is empty, so length= is needed" if not lengths
                                      else f"xs leaves and length disagree on the length: "
                                           f"{sorted(lengths)}") + f" (at {source})")
    length, = lengths
    unroll = length if unroll is True else max(1, int(unroll))
    slices = [ShapedArray(a.shape[1:], a.dtype) for a in x_avals]

    def body(c, x):
        out = f(c, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ArgumentError(f"scan: f must return a pair (carry, y), got "
                                f"{type(out).__name__} (at {source})")
        return out
    for attempt in range(2):
        avals = leaf_avals(carry, "scan")
        in_tree = flatten([init, xs])[1]
        graph, out_tree, captured = trace_region(lambda c, x: list(body(c, x)), in_tree,
                                                 avals + slices)
        new_tree, y_tree = out_tree[1]
        nk = len(carry)
        promoted = promote_weak(carry, avals, graph.out_avals[:nk]) if not attempt else None
        if promoted is None:
            break
        carry, init = promoted, unflatten(carry_tree, promoted)
    check_same("scan", ("the carry f returns", "its input carry"), new_tree,
               graph.out_avals[:len(carry)], carry_tree, avals, source)
    n = len(carry) + len(x_leaves)
    attrs = {"body": closed(graph, n, captured, captured), "n_consts": len(captured),
             "n_carry": len(carry), "length": length, "reverse": bool(reverse),
             "unroll": unroll}
    outs = core.run_kernel("scan", captured + carry + x_leaves, attrs)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    return unflatten(carry_tree, outs[:len(carry)]), unflatten(y_tree, outs[len(carry):])


def map(f, xs):
    """`stack([f(x) for x in xs])` over the leading axis of the pytree xs, as one loop."""
    return scan(lambda _, x: (None, f(x)), None, xs)[1]


def _rule(*avals, body, n_consts, n_carry, length, reverse, unroll):
    nk = n_consts + n_carry
    if any(a.shape[:1] != (length,) for a in avals[nk:]):
        raise ShapeError(f"scan: every xs input needs leading axis {length}, got "
                         f"{[str(a) for a in avals[nk:]]}")
    check_signature("scan", "the body's inputs", body.in_avals, list(avals[:nk]) + [
        ShapedArray(a.shape[1:], a.dtype) for a in avals[nk:]])
    outs = body.out_avals
    check_signature("scan", "the body's carry outputs", outs[:n_carry], avals[n_consts:nk])
    return tuple([a.strip_weak() for a in outs[:n_carry]] +
                 [ShapedArray((length,) + a.shape, a.dtype) for a in outs[n_carry:]])


def _saves_carries(attrs):
    """Whether the body's last n_carry outputs are its carry inputs (stacked residuals)."""
    body, nc, nk = attrs["body"], attrs["n_consts"], attrs["n_carry"]
    outs, carries = body.outvars, body.invars[nc:nc + nk]
    return nk == 0 or len(outs) >= 2 * nk and all(a is b for a, b in zip(outs[-nk:], carries))


def _form(attrs):
    if _saves_carries(attrs):
        return attrs
    b, nc, nk = attrs["body"], attrs["n_consts"], attrs["n_carry"]
    return {**attrs, "body": Graph(b.invars, b.outvars + b.invars[nc:nc + nk], b.nodes,
                                   b.constvars, b.consts)}


def _grad(dy, inputs, outputs, attrs):
    body, nc, nk = attrs["body"], attrs["n_consts"], attrs["n_carry"]
    assert _saves_carries(attrs), "scan is differentiated in its differentiable form"
    dys = list(dy) if isinstance(dy, tuple) else [dy]
    outs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    consts, xs = list(inputs[:nc]), list(inputs[nc + nk:])
    stacked = outs[len(outs) - nk:] if nk else []
    wrt = [is_float(v.aval) for v in body.invars]
    fl = [k for k in range(nk) if wrt[nc + k]]          # float carries
    y_pos = [j for j in range(nk, len(dys)) if dys[j] is not None
             and is_float(body.outvars[j].aval)]
    if not y_pos and all(dys[k] is None for k in fl):
        return [None] * len(inputs)
    fc = [i for i in range(nc) if wrt[i]]               # float consts
    fx = [i for i in range(len(xs)) if wrt[nc + nk + i]]

    def step(carry, x):
        acc, ct = carry
        res, x_k, cty = x
        cts = [None] * len(body.outvars)
        for k, c in zip(fl, ct):
            cts[k] = c
        for j, c in zip(y_pos, cty):
            cts[j] = c
        g = iter(backward(body, consts + list(res) + list(x_k), cts, wrt)[1])
        full = [next(g) if w else None for w in wrt]
        return (([a + full[i] for a, i in zip(acc, fc)], [full[nc + k] for k in fl]),
                [full[nc + nk + i] for i in fx])
    ct0 = [tnp.zeros(o.shape, o.dtype) if dys[k] is None else dys[k]
           for k, o in zip(fl, [inputs[nc + k] for k in fl])]
    acc0 = [tnp.zeros(consts[i].shape, consts[i].dtype) for i in fc]
    (acc, ct), gx = scan(step, (acc0, ct0), (stacked, xs, [dys[j] for j in y_pos]),
                         length=attrs["length"], reverse=not attrs["reverse"])
    grads = [None] * len(inputs)
    for i, a in zip(fc, acc):
        grads[i] = a
    for k, c in zip(fl, ct):
        grads[nc + k] = c
    for i, g in zip(fx, gx):
        grads[nc + nk + i] = g
    return grads


def _prune(node, used):
    """dce of a scan: dead ys go, then the consts and xs the body no longer reads."""
    a = node.attrs
    nc, nk = a["n_consts"], a["n_carry"]
    ys = [j for j in range(nk, len(used)) if used[j]]
    n_in = len(node.inputs)
    body, kept = prune_region(a["body"], list(range(nk)) + ys,
                              set(range(nc)) | set(range(nc + nk, n_in)))
    return Node("scan", [node.inputs[k] for k in kept],
                list(node.outputs[:nk]) + [node.outputs[j] for j in ys],
                {**a, "body": body, "n_consts": sum(k < nc for k in kept)}, node.source)


def _batched(inputs, dims, attrs):
    body, nc, nk = attrs["body"], attrs["n_consts"], attrs["n_carry"]
    size = batch_size(inputs, dims)
    consts, init, xs = split(inputs, nc, nk)
    dc, dk, dx = split(dims, nc, nk)
    xs = [x if d is None else at_dim(x, d, 1, size) for x, d in zip(xs, dx)]  # scan axis 0
    sd = [None if d is None else 0 for d in dx]
    cd, out = carry_dims(body, size, dc, dk, sd)
    yd = [None if d is None else 0 for d in out[nk:]]

    def step(c, x):
        outs = batch_values(body, size, consts + list(c) + list(x), dc + cd + sd)
        placed = [at_dim(o, d, t, size) for (o, d), t in zip(outs, cd + yd)]
        return placed[:nk], placed[nk:]
    carry, ys = scan(step, [at_dim(x, d, t, size) for x, d, t in zip(init, dk, cd)], xs,
                     length=attrs["length"], reverse=attrs["reverse"], unroll=attrs["unroll"])
    return tuple(carry + ys), tuple(cd + [None if d is None else 1 for d in yd])


def _loop_rule(kernel):
    """vmap's rule for a kernel with none: the kernel applied per example, in one `map`."""
    def rule(inputs, dims, attrs):
        batched = [moveaxis(x, d, 0) for x, d in zip(inputs, dims) if d is not None]

        def one(xs):
            it = iter(xs)
            return core.run_kernel(kernel, [x if d is None else next(it)
                                            for x, d in zip(inputs, dims)], attrs)
        out = map(one, batched)
        return out, (0,) * len(out) if isinstance(out, tuple) else 0
    return rule


install_loop_rule(_loop_rule)
registry.declare_kernel("scan", shape=_rule, family="control_flow", gradient=_grad,
                        batching=_batched, form=_form, pruner=_prune)
