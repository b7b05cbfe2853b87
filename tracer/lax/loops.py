"""`while_loop` and `fori_loop`: a `while` node with two regions, or a counted `scan`.

    carry... = while[cond, body, n_cond, n_body](cond_consts..., body_consts..., init...)

cond: (cond_consts..., carry...) -> bool[]; body: (body_consts..., carry...) -> carry.
With `count=True` (the form autodiff runs) the node also outputs its trip count (i64[]).
fori_loop with Python-int (static) bounds is a scan of known length (a counted loop a
compiler can unroll or vectorize); with traced bounds it is a while loop.

The gradient of `while` (reverse mode, which JAX lacks) is by checkpointing. The trip
count n is not known when the graph is traced, so the loop cannot store one carry per
iteration in a buffer of static shape. Instead:

1. The forward loop that runs is the differentiable form `while[count=True]`: it also
   returns n.
2. The backward picks a stride s = max(1, ceil(n / C)), C static (`checkpoints`: as many
   carries as fit in CHECKPOINT_BYTES, at most MAX_CHECKPOINTS), and re-runs the loop
   from its input in ceil(n / s) <= C segments of s steps, storing each segment's first
   carry in a (C, ...) buffer.
3. It then walks the segments last to first; within one, for t = m-1 .. 0 it recomputes
   carry_t from the segment's checkpoint (t body steps) and applies the body's VJP to
   the running cotangent, accumulating the gradients of the body's constants.

Cost: memory C carries (plus the loop's own); time about 3n body evaluations and n body
VJPs while n <= C (s = 1: nothing is recomputed), and about n * s / 2 = O(n^2 / C) more
body evaluations beyond. On the numpy backend each checkpoint store copies the buffer
(pure kernels), so pass 2 also moves ceil(n/s) * C carries. Everything is written with
lax loops, so the gradient is itself differentiable (jvp, grad of grad).

Batched with an unbatched predicate it is one loop over the batched body (carries
batched as for scan). With a batched predicate every carry is batched, the loop runs
while any lane's predicate holds, and a lane whose predicate is false keeps its carry (a
select), so each lane ends with the value it would have alone. The body still runs on
finished lanes (its result discarded): as with jnp.where, a body that makes NaN there
(e.g. 1/x at x = 0) can make a NaN gradient. Its trip count is per lane.
"""
import numpy as np

import registry
from ir import ShapedArray
from ir.errors import ArgumentError, DTypeError
from ir.types import dtype_kind
from tracer import core
from tracer import numpy as tnp
from tracer.autodiff import backward
from tracer.lax._regions import (check_same, check_signature, closed, is_float, leaf_avals,
                                 promote_weak, trace_region)
from tracer.lax.indexing import dynamic_index, dynamic_update_index
from tracer.lax.region_batching import at_dim, carry_dims, lanes, probe, split
from tracer.lax.scan import scan
from tracer.pytree import flatten, unflatten
from tracer.signature import leaf_aval
from tracer.sources import user_source
from tracer.vmap import batch_size, batch_values


def while_loop(cond_fun, body_fun, init_val):
    """`while cond_fun(val): val = body_fun(val)`, as jax.lax.while_loop (and, unlike
    JAX, differentiable in reverse mode too)."""
    source = user_source()
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
    """x as a Python int (a float bound truncated, as JAX's int(x)) if it is concrete,
    else None."""
    return None if isinstance(x, core.Tracer) else int(np.asarray(x)[()])


def _index_dtype(lower, upper):
    """The dtype of the bounds, checked as jax.lax.fori_loop checks them: equal, except
    that a weakly typed bound (a Python scalar) takes the other's dtype when both are
    integers or both floats. (JAX allows this for signed integers; its Python float is
    float32, so a Python float beside a float32 bound passes there too.)"""
    lo, hi = leaf_aval(lower, "fori_loop"), leaf_aval(upper, "fori_loop")
    if lo.dtype == hi.dtype:
        dt = lo.dtype
    elif lo.weak_type != hi.weak_type and dtype_kind(lo.dtype) == dtype_kind(hi.dtype):
        dt = hi.dtype if lo.weak_type else lo.dtype
    else:
        raise DTypeError(f"lower and upper arguments to fori_loop must have equal types, "
                         f"got {lo.dtype.name} and {hi.dtype.name}")
    if lo.shape or hi.shape or dtype_kind(dt) not in "iuf":
        raise DTypeError(f"fori_loop: bounds must be integer or float scalars, got {lo} "
                         f"and {hi}")
    return dt


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`, as jax.lax.fori_loop.
    Concrete bounds give a scan of static length (unrolled as `unroll` says, as scan's)
    whose i is a Python int, float bounds truncated; traced bounds a while loop, which
    cannot be unrolled, whose i has the bounds' dtype (float bounds: a float i)."""
    if not callable(body_fun):
        raise ArgumentError("fori_loop: body_fun must be a function body_fun(i, val)")
    dt = _index_dtype(lower, upper)
    lo, hi = _static_int(lower), _static_int(upper)
    step = lambda c: (c[0] + 1, body_fun(c[0], c[1]))   # noqa: E731
    if lo is not None and hi is not None:       # i is a Python int (weak), as JAX's
        return scan(lambda c, _: (step(c), None), (lo, init_val), length=max(hi - lo, 0),
                    unroll=1 if unroll is None else unroll)[0][1]
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(f"fori_loop: unroll={unroll!r} needs loop bounds known when traced "
                         f"(Python ints or concrete arrays), got traced bounds")
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


CHECKPOINT_BYTES = 64 << 20
MAX_CHECKPOINTS = 4096


def checkpoints(avals):
    """C: how many carries of these types the backward keeps at once."""
    nbytes = sum(int(np.prod(a.shape, dtype=np.int64)) * a.dtype.itemsize for a in avals)
    return max(1, min(MAX_CHECKPOINTS, CHECKPOINT_BYTES // max(nbytes, 1)))


def _ceil_div(a, b):
    return core.run_kernel("div", [a + (b - 1), b])     # `div` of integers floors


def _grad(dy, inputs, outputs, attrs):
    body, ncc, nbc = attrs["body"], attrs["n_cond"], attrs["n_body"]
    bc, init = list(inputs[ncc:ncc + nbc]), list(inputs[ncc + nbc:])
    nk, n = len(init), outputs[-1]
    dys = list(dy) if isinstance(dy, tuple) else [dy]
    wrt = [is_float(v.aval) for v in body.invars]
    fl = [k for k in range(nk) if wrt[nbc + k]]
    if all(dys[k] is None for k in fl):
        return [None] * len(inputs)
    fb = [i for i in range(nbc) if wrt[i]]
    C = checkpoints([v.aval for v in body.invars[nbc:]])
    s = tnp.maximum(1, _ceil_div(n, np.int64(C)))
    nseg = _ceil_div(n, s)

    def run(t, carry):
        return core.eval_graph(body, bc + list(carry))

    def store(j, state):            # pass 2: segment j's first carry into slot j
        carry, bufs = state
        bufs = [dynamic_update_index(b, j, c) for b, c in zip(bufs, carry)]
        return fori_loop(0, tnp.minimum(s, n - j * s), run, carry), bufs
    bufs0 = [tnp.zeros((C,) + tuple(x.aval.shape), x.aval.dtype) for x in body.invars[nbc:]]
    bufs = fori_loop(0, nseg, store, (init, bufs0))[1]

    def segment(jj, state):         # pass 3: segments last to first
        j = nseg - 1 - jj
        start = [dynamic_index(b, j) for b in bufs]
        m = tnp.minimum(s, n - j * s)

        def step(tt, st):
            acc, ct = st
            carry = fori_loop(0, m - 1 - tt, run, start)
            cts = [None] * nk
            for k, c in zip(fl, ct):
                cts[k] = c
            g = iter(backward(body, bc + list(carry), cts, wrt)[1])
            full = [next(g) if w else None for w in wrt]
            return [a + full[i] for a, i in zip(acc, fb)], [full[nbc + k] for k in fl]
        return fori_loop(0, m, step, state)
    ct0 = [tnp.zeros(init[k].shape, init[k].dtype) if dys[k] is None else dys[k] for k in fl]
    acc0 = [tnp.zeros(bc[i].shape, bc[i].dtype) for i in fb]
    acc, ct = fori_loop(0, nseg, segment, (acc0, ct0))
    grads = [None] * len(inputs)
    for i, a in zip(fb, acc):
        grads[ncc + i] = a
    for k, c in zip(fl, ct):
        grads[ncc + nbc + k] = c
    return grads


def _batched(inputs, dims, attrs):
    cond, body, ncc, nbc = attrs["cond"], attrs["body"], attrs["n_cond"], attrs["n_body"]
    count, size = int(attrs.get("count", False)), batch_size(inputs, dims)
    cc, bc, init = split(inputs, ncc, nbc)
    dcc, dbc, dk = split(dims, ncc, nbc)
    nk = len(init)
    cd, _ = carry_dims(body, size, dbc, dk, [])
    if probe(cond, size, dcc + cd)[0] is None:
        def pred(c):
            return batch_values(cond, size, cc + c[:nk], dcc + cd)[0][0]

        def step(c):
            outs = batch_values(body, size, bc + c[:nk], dbc + cd)
            return [at_dim(o, d, t, size) for (o, d), t in zip(outs, cd)] + [
                c[nk] + 1 for _ in range(count)]
        out = while_loop(pred, step, [at_dim(x, d, t, size) for x, d, t in zip(init, dk, cd)]
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
        return at_dim(p, d, 0, size)

    def step(state):
        p, c = state[0], state[1:1 + nk]
        outs = batch_values(body, size, bc + c, dbc + cd)
        new = [tnp.where(lanes(p, len(x.shape)), at_dim(o, d, 0, size), x)
               for (o, d), x in zip(outs, c)]
        counts = [state[-1] + tnp.astype(p, np.int64) for _ in range(count)]
        return [tnp.logical_and(p, lanes_pred(new))] + new + counts
    carry = [at_dim(x, d, 0, size) for x, d in zip(init, dk)]
    out = while_loop(lambda s: tnp.any(s[0]), step, [lanes_pred(carry)] + carry + [
        tnp.zeros((size,), np.int64) for _ in range(count)])
    return tuple(out[1:]), (0,) * (nk + count)


registry.declare_kernel("while", shape=_rule, family="control_flow", gradient=_grad,
                        batching=_batched, form=lambda attrs: {**attrs, "count": True})
