"""vmap's batching rules for the control-flow primitives, so that vmap of a loop or a
branch is one batched loop or branch, not a loop over the batch.

Each rule batches its regions with `vmap.batch_values` inside a region traced by the
primitive's own API (`while_loop`, `scan`, `cond`, `checkpoint`), so the new node is
built, checked and differentiated like one a user wrote. Semantics, as in JAX:

- cond/switch with an unbatched index is one cond whose branches are batched. With a
  batched index *every* branch runs on every lane and each lane's result is selected
  (a select per output): a branch's error or NaN in a lane that does not take it is
  computed and discarded, and costs as much as the lanes that do.
- scan batches its body; a carry that a batched value reaches (through a batched
  const, x or other carry) is batched from the start (a fixed point over the carries).
- while_loop with an unbatched predicate is one loop over the batched body (carries
  batched as for scan). With a batched predicate every carry is batched, the loop runs
  while any lane's predicate holds, and a lane whose predicate is false keeps its carry
  (a select), so each lane ends with the value it would have alone. The body still runs
  on finished lanes (its result discarded): as with jnp.where, a body that makes NaN
  there (e.g. 1/x at x = 0) can make a NaN gradient. Its trip count (the `count` output
  autodiff asks for) is per lane.
- dynamic_index / dynamic_update_index with a batched index read or write one slot per
  lane (a gather into the flattened batch, or a one-hot select).
"""
import weakref

import numpy as np

import registry
from ir import ShapedArray
from registry.batching import register_batching_rule
from tracer import numpy as tnp
from tracer.core import run_kernel, trace_flat
from tracer.lax.cond import _cond
from tracer.lax.indexing import dynamic_index, dynamic_update_index
from tracer.lax.loops import while_loop
from tracer.lax.remat import checkpoint
from tracer.lax.scan import scan
from tracer.vmap import batch_values, to_dim

_probed = weakref.WeakKeyDictionary()     # region -> (epoch, {in dims: out dims})


def _at(x, d, dst, size):
    """x with its batch dim (at d; None: unbatched, broadcast) moved to `dst`; dst None:
    x stays unbatched (the carries' fixed point says it is)."""
    if dst is None:
        assert d is None, "a carry the fixed point left unbatched came out batched"
        return x
    return to_dim(x, d, size, dst)


def _size(inputs, dims):
    return next(np.shape(x)[d] for x, d in zip(inputs, dims) if d is not None)


def _probe(graph, size, in_dims):
    """The batch dims of `graph`'s outputs for inputs batched at `in_dims`, found by
    batching it into a throwaway trace (cached: a nested loop is probed once per level)."""
    epoch, key = registry.epoch(), tuple(in_dims)
    seen, cache = _probed.get(graph, (None, None))
    if seen != epoch:                       # a table changed: rules may batch differently
        cache = {}
        _probed[graph] = (epoch, cache)
    if key not in cache:
        avals = [v.aval if d is None else ShapedArray(
            v.aval.shape[:d] + (size,) + v.aval.shape[d:], v.aval.dtype)
            for v, d in zip(graph.invars, in_dims)]
        dims = []

        def batched(*xs):
            dims.extend(d for _, d in batch_values(graph, size, list(xs), in_dims))
            return []
        trace_flat(batched, avals)
        cache[key] = tuple(dims)
    return cache[key]


def _carry_dims(body, size, before, init_dims, after):
    """(carry dims, body output dims): carries batched at 0 wherever a batched value
    reaches them, for a body taking (before..., carry..., after...)."""
    batched = [d is not None for d in init_dims]
    while True:
        dims = [0 if b else None for b in batched]
        out = _probe(body, size, list(before) + dims + list(after))
        grown = [b or d is not None for b, d in zip(batched, out)]
        if grown == batched:
            return dims, out
        batched = grown


def _lanes(mask, ndim):
    """A (size,) mask shaped to select along dim 0 of a rank-`ndim` value."""
    return tnp.reshape(mask, (mask.shape[0],) + (1,) * (ndim - 1))


def _split(values, *counts):
    out, k = [], 0
    for n in counts:
        out.append(list(values[k:k + n]))
        k += n
    return out + [list(values[k:])]


# ---- cond / switch ----------------------------------------------------------------------

def _cond_rule(inputs, dims, attrs):
    (index, *ops), (di, *dops) = inputs, dims
    branches, size = attrs["branches"], _size(inputs, dims)
    if di is None:
        out = [any(p[j] is not None for p in [_probe(b, size, dops) for b in branches])
               for j in range(len(branches[0].outvars))]
        dst = [0 if b else None for b in out]
        funs = [lambda *xs, b=b: [_at(o, d, t, size) for (o, d), t in zip(
            batch_values(b, size, list(xs), dops), dst)] for b in branches]
        return tuple(_cond(index, funs, ops, "switch", None)), tuple(dst)
    index = _at(index, di, 0, size)          # every branch runs; each lane picks its own
    results = [batch_values(b, size, ops, dops) for b in branches]
    if len(branches) == 1:
        return tuple(o for o, _ in results[0]), tuple(d for _, d in results[0])
    outs = []
    for j, v in enumerate(branches[0].outvars):
        vals = [o if d is None else _at(o, d, 0, size) for o, d in (r[j] for r in results)]
        out = vals[0]
        for k, val in enumerate(vals[1:], 1):
            out = tnp.where(_lanes(tnp.equal(index, k), len(v.aval.shape) + 1), val, out)
        outs.append(out)
    return tuple(outs), (0,) * len(outs)


# ---- scan -------------------------------------------------------------------------------

def _scan_rule(inputs, dims, attrs):
    body, nc, nk = attrs["body"], attrs["n_consts"], attrs["n_carry"]
    size = _size(inputs, dims)
    consts, init, xs = _split(inputs, nc, nk)
    dc, dk, dx = _split(dims, nc, nk)
    xs = [x if d is None else _at(x, d, 1, size) for x, d in zip(xs, dx)]  # scan axis first
    sd = [None if d is None else 0 for d in dx]
    cd, out = _carry_dims(body, size, dc, dk, sd)
    yd = [None if d is None else 0 for d in out[nk:]]

    def step(c, x):
        outs = batch_values(body, size, consts + list(c) + list(x), dc + cd + sd)
        placed = [_at(o, d, t, size) for (o, d), t in zip(outs, cd + yd)]
        return placed[:nk], placed[nk:]
    carry, ys = scan(step, [_at(x, d, t, size) for x, d, t in zip(init, dk, cd)], xs,
                     length=attrs["length"], reverse=attrs["reverse"], unroll=attrs["unroll"])
    return tuple(carry + ys), tuple(cd + [None if d is None else 1 for d in yd])


# ---- while ------------------------------------------------------------------------------

def _while_rule(inputs, dims, attrs):
    cond, body, ncc, nbc = attrs["cond"], attrs["body"], attrs["n_cond"], attrs["n_body"]
    count, size = int(attrs.get("count", False)), _size(inputs, dims)
    cc, bc, init = _split(inputs, ncc, nbc)
    dcc, dbc, dk = _split(dims, ncc, nbc)
    nk = len(init)
    cd, _ = _carry_dims(body, size, dbc, dk, [])
    if _probe(cond, size, dcc + cd)[0] is None:
        def pred(c):
            return batch_values(cond, size, cc + c[:nk], dcc + cd)[0][0]

        def step(c):
            outs = batch_values(body, size, bc + c[:nk], dbc + cd)
            return [_at(o, d, t, size) for (o, d), t in zip(outs, cd)] + [
                c[nk] + 1 for _ in range(count)]
        out = while_loop(pred, step, [_at(x, d, t, size) for x, d, t in zip(init, dk, cd)]
                         + [np.int64(0)] * count)
        return tuple(out), tuple(cd + [None] * count)
    return _while_batched_pred(cc, bc, dcc, dbc, init, dk, attrs, count, size)


def _while_batched_pred(cc, bc, dcc, dbc, init, dk, attrs, count, size):
    """Run while any lane's predicate holds; a finished lane keeps its carry. The carry
    is (lane predicates, carries..., [per-lane trip counts])."""
    cond, body, nk = attrs["cond"], attrs["body"], len(init)
    cd = [0] * nk

    def lanes_pred(c):
        (p, d), = batch_values(cond, size, cc + list(c), dcc + cd)
        return _at(p, d, 0, size)

    def step(state):
        p, c = state[0], state[1:1 + nk]
        outs = batch_values(body, size, bc + c, dbc + cd)
        new = [tnp.where(_lanes(p, len(x.shape)), _at(o, d, 0, size), x)
               for (o, d), x in zip(outs, c)]
        counts = [state[-1] + tnp.astype(p, np.int64) for _ in range(count)]
        return [tnp.logical_and(p, lanes_pred(new))] + new + counts
    carry = [_at(x, d, 0, size) for x, d in zip(init, dk)]
    out = while_loop(lambda s: tnp.any(s[0]), step, [lanes_pred(carry)] + carry + [
        tnp.zeros((size,), np.int64) for _ in range(count)])
    return tuple(out[1:]), (0,) * (nk + count)


# ---- remat, dynamic_index, dynamic_update_index -----------------------------------------

def _remat_rule(inputs, dims, attrs):
    size, out_dims = _size(inputs, dims), []

    def fun(*xs):
        outs = batch_values(attrs["body"], size, list(xs), dims)
        out_dims.extend(d for _, d in outs)
        return [o for o, _ in outs]
    return tuple(checkpoint(fun, policy=attrs.get("policy"))(*inputs)), tuple(out_dims)


def _slot(i, n):
    return tnp.clip(tnp.astype(i, np.int64), 0, n - 1)


def _dynamic_index_rule(inputs, dims, attrs):
    (x, i), (dx, di) = inputs, dims
    size = _size(inputs, dims)
    if di is None:                          # x is batched; its slot axis is 0, or 1 if dx is
        if dx == 0:
            return run_kernel("take", [x, _slot(i, x.shape[1])], {"axis": 1}), 0
        return dynamic_index(x, i), dx - 1
    i = _at(i, di, 0, size)
    if dx is None:
        return run_kernel("take", [x, _slot(i, np.shape(x)[0])], {"axis": 0}), 0
    x = _at(x, dx, 0, size)                 # lane b's slot i_b is row b * n + i_b
    n = x.shape[1]
    flat = tnp.reshape(x, (size * n,) + tuple(x.shape[2:]))
    rows = _slot(i, n) + tnp.arange(size, dtype=np.int64) * n
    return run_kernel("take", [flat, rows], {"axis": 0}), 0


def _dynamic_update_index_rule(inputs, dims, attrs):
    """x batched off axis 0 and i unbatched: one dynamic_update_index (in place in a
    loop). Otherwise a one-hot select writes each lane's slot (x batched at 0 or not)."""
    (x, i, v), (dx, di, dv) = inputs, dims
    size = _size(inputs, dims)
    if di is None and dx:
        return dynamic_update_index(x, i, _at(v, dv, dx - 1, size)), dx
    x = x if dx is None else _at(x, dx, 0, size)
    n, lanes = np.shape(x)[0 if dx is None else 1], 1 if di is None else size
    slots = tnp.reshape(_slot(i if di is None else _at(i, di, 0, size), n), (lanes, 1))
    hit = tnp.equal(tnp.reshape(tnp.arange(n, dtype=np.int64), (1, n)), slots)
    v = _at(v, dv, 0, size)
    slot_shape = tuple(np.shape(v)[1:])
    hit = tnp.reshape(hit, (lanes, n) + (1,) * len(slot_shape))
    return tnp.where(hit, tnp.reshape(v, (size, 1) + slot_shape), x), 0


for _name, _rule in {"cond": _cond_rule, "scan": _scan_rule, "while": _while_rule,
                     "remat": _remat_rule, "dynamic_index": _dynamic_index_rule,
                     "dynamic_update_index": _dynamic_update_index_rule}.items():
    register_batching_rule(_name, _rule)
