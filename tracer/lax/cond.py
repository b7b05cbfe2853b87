"""`cond` and `switch`: one `cond` node holding every branch as a region.

    outs = cond[branches=(g0, g1, ...)](index, *operands)

`index` is an int32 scalar already clamped to [0, len(branches)); every branch maps the
operands (the user's operand leaves, then the outer values any branch closes over) to
outputs of one type. The gradient differentiates the taken branch: it is a `cond` over
the branches' VJPs, so it is itself differentiable, and jvp transposes it.

Batched with an unbatched index it is one cond whose branches are batched. With a
batched index *every* branch runs on every lane and each lane's result is selected (a
select per output), as in JAX: a branch's error or NaN in a lane that does not take it
is computed and discarded, and costs as much as the lanes that do.
"""
import numpy as np

import registry
from ir import Graph, Node
from ir.errors import ArgumentError, ArgumentValueError, DTypeError
from ir.types import dtype_kind
from tracer import core
from tracer import numpy as tnp
from tracer.autodiff import backward
from tracer.lax._regions import (check_same, check_signature, is_float, leaf_avals,
                                 prune_region, read_ids, taking, trace_region, union)
from tracer.lax.region_batching import at_dim, lanes, probe
from tracer.pytree import flatten, unflatten
from tracer.sources import user_source
from tracer.vmap import batch_size, batch_values


def switch(index, branches, *operands):
    """`branches[clamp(index, 0, len(branches) - 1)](*operands)`, as jax.lax.switch."""
    branches = list(branches)
    if not all(callable(b) for b in branches):
        raise ArgumentError("switch: branches must be a non-empty sequence of functions")
    shape = tuple(np.shape(index)) if not isinstance(index, core.Tracer) else index.shape
    dtype = index.dtype if isinstance(index, core.Tracer) else np.asarray(index).dtype
    if shape != () or dtype_kind(dtype) not in "iub":
        raise DTypeError(f"switch: the index must be an integer scalar, got "
                         f"{dtype}{list(shape)}")
    if not branches:                        # a ValueError, as jax's "Empty branch sequence"
        raise ArgumentValueError("switch: branches must be a non-empty sequence of functions")
    index = tnp.astype(tnp.clip(index, 0, len(branches) - 1), np.int32)
    return _cond(index, branches, operands, "switch", user_source())


def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands) if pred else false_fun(*operands)`, as jax.lax.cond; both
    branches are traced, one runs."""
    shape = tuple(np.shape(pred)) if not isinstance(pred, core.Tracer) else pred.shape
    if shape != ():
        raise DTypeError(f"cond: the predicate must be a scalar, got shape {list(shape)}")
    dtype = pred.dtype if isinstance(pred, core.Tracer) else np.asarray(pred).dtype
    index = tnp.astype(pred if dtype_kind(dtype) == "b" else tnp.not_equal(pred, 0), np.int32)
    return _cond(index, [false_fun, true_fun], operands, "cond", user_source())


def _cond(index, funs, operands, where, source):
    leaves, in_tree = flatten(list(operands))
    avals = leaf_avals(leaves, where)
    regions = {}                 # a function given as several branches is traced once
    for f in funs:
        if id(f) not in regions:
            regions[id(f)] = trace_region(f, in_tree, avals)
    traced = [regions[id(f)] for f in funs]
    names = ["false_fun", "true_fun"] if where == "cond" else [
        f"branch {k}" for k in range(len(funs))]
    g0, tree0, _ = traced[0]
    for name, (g, tree, _) in zip(names[1:], traced[1:]):
        check_same(where, (names[0] + "'s output", name + "'s output"), tree0, g0.out_avals,
                   tree, g.out_avals, source)
    captured = union([c for _, _, c in traced])
    branches = tuple(taking(g, len(leaves), c, captured) for g, _, c in traced)
    outs = core.run_kernel("cond", [index] + leaves + captured, {"branches": branches})
    return unflatten(tree0, list(outs) if isinstance(outs, tuple) else [outs])


def _rule(index, *operands, branches):
    if index.shape != () or index.dtype != np.int32:
        raise DTypeError(f"cond: the index must be an int32 scalar, got {index}")
    for k, b in enumerate(branches):
        check_signature("cond", f"branch {k}'s inputs", b.in_avals, operands)
        check_signature("cond", f"branch {k}'s outputs", b.out_avals, branches[0].out_avals)
    return tuple(a.strip_weak() for a in branches[0].out_avals)


def _grad(dy, inputs, outputs, attrs):
    branches = attrs["branches"]
    index, ops = inputs[0], list(inputs[1:])
    dys = list(dy) if isinstance(dy, tuple) else [dy]
    wrt = [is_float(v.aval) for v in branches[0].invars]
    outs = branches[0].outvars
    ct_pos = [j for j, d in enumerate(dys) if d is not None and is_float(outs[j].aval)]
    if not any(wrt) or not ct_pos:
        return [None] * len(inputs)

    def vjp_of(branch):
        def f(xs, cts):
            full = [None] * len(outs)
            for j, c in zip(ct_pos, cts):
                full[j] = c
            return backward(branch, list(xs), full, wrt)[1]
        return f
    grads = iter(_cond(index, [vjp_of(b) for b in branches],
                       (ops, [dys[j] for j in ct_pos]), "cond", None))
    return [None] + [next(grads) if w else None for w in wrt]


def _prune(node, used):
    """dce of a cond: dead outputs go from every branch, then operands none reads."""
    keep = [j for j, u in enumerate(used) if u]
    pruned = [prune_region(b, keep, set()) for b in node.attrs["branches"]]
    reads = [read_ids(b) for b, _ in pruned]
    kept = [k for k in range(len(node.inputs) - 1)
            if any(id(b.invars[k]) in r for (b, _), r in zip(pruned, reads))]
    branches = tuple(Graph([b.invars[k] for k in kept], b.outvars, b.nodes, b.constvars,
                           b.consts) for b, _ in pruned)
    return Node("cond", [node.inputs[0]] + [node.inputs[1 + k] for k in kept],
                [node.outputs[j] for j in keep], {"branches": branches}, node.source)


def _batched(inputs, dims, attrs):
    (index, *ops), (di, *dops) = inputs, dims
    branches, size = attrs["branches"], batch_size(inputs, dims)
    if di is None:
        out = [any(p[j] is not None for p in [probe(b, size, dops) for b in branches])
               for j in range(len(branches[0].outvars))]
        dst = [0 if b else None for b in out]
        funs = [lambda *xs, b=b: [at_dim(o, d, t, size) for (o, d), t in zip(
            batch_values(b, size, list(xs), dops), dst)] for b in branches]
        return tuple(_cond(index, funs, ops, "switch", None)), tuple(dst)
    index = at_dim(index, di, 0, size)       # every branch runs; each lane picks its own
    results = [batch_values(b, size, ops, dops) for b in branches]
    if len(branches) == 1:
        return tuple(o for o, _ in results[0]), tuple(d for _, d in results[0])
    outs = []
    for j, v in enumerate(branches[0].outvars):
        vals = [o if d is None else at_dim(o, d, 0, size) for o, d in (r[j] for r in results)]
        out = vals[0]
        for k, val in enumerate(vals[1:], 1):
            out = tnp.where(lanes(tnp.equal(index, k), len(v.aval.shape) + 1), val, out)
        outs.append(out)
    return tuple(outs), (0,) * len(outs)


registry.declare_kernel("cond", shape=_rule, family="control_flow", gradient=_grad,
                        batching=_batched, pruner=_prune)
