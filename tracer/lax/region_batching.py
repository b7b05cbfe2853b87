"""What the control-flow kernels' batching rules share (each rule is declared with its
kernel: cond.py, scan.py, loops.py, remat.py). A rule batches its regions with
`vmap.batch_values` inside a region traced by the primitive's own API, so the new node is
built, checked and differentiated like one a user wrote; a carry that a batched value
reaches is batched from the start (a fixed point over the carries)."""
import weakref

import registry
from ir import ShapedArray
from tracer import numpy as tnp
from tracer.core import trace_flat
from tracer.vmap import batch_values, to_dim

_probed = weakref.WeakKeyDictionary()     # region -> (epoch, {in dims: out dims})


def at_dim(x, d, dst, size):
    """x with its batch dim (at d; None: unbatched, broadcast) moved to `dst`; dst None:
    x stays unbatched (the carries' fixed point says it is)."""
    if dst is None:
        assert d is None, "a carry the fixed point left unbatched came out batched"
        return x
    return to_dim(x, d, size, dst)


def probe(graph, size, in_dims):
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


def carry_dims(body, size, before, init_dims, after):
    """(carry dims, body output dims): carries batched at 0 wherever a batched value
    reaches them, for a body taking (before..., carry..., after...)."""
    batched = [d is not None for d in init_dims]
    while True:
        dims = [0 if b else None for b in batched]
        out = probe(body, size, list(before) + dims + list(after))
        grown = [b or d is not None for b, d in zip(batched, out)]
        if grown == batched:
            return dims, out
        batched = grown


def lanes(mask, ndim):
    """A (size,) mask shaped to select along dim 0 of a rank-`ndim` value."""
    return tnp.reshape(mask, (mask.shape[0],) + (1,) * (ndim - 1))


def split(values, *counts):
    """`values` cut into lists of `counts` items each, then the rest."""
    out, k = [], 0
    for n in counts:
        out.append(list(values[k:k + n]))
        k += n
    return out + [list(values[k:])]
