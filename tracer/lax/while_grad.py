"""Reverse-mode gradient of `while` (JAX has none), by checkpointing.

The trip count n is not known when the graph is traced, so the loop cannot store one
carry per iteration in a buffer of static shape. Instead:

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
"""
import numpy as np

import registry
from tracer import numpy as tnp
from tracer.autodiff import backward, register_differentiable_form
from tracer.core import eval_graph, run_kernel
from tracer.lax._regions import is_float
from tracer.lax.indexing import dynamic_index, dynamic_update_index
from tracer.lax.loops import fori_loop

CHECKPOINT_BYTES = 64 << 20
MAX_CHECKPOINTS = 4096


def checkpoints(avals):
    """C: how many carries of these types the backward keeps at once."""
    nbytes = sum(int(np.prod(a.shape, dtype=np.int64)) * a.dtype.itemsize for a in avals)
    return max(1, min(MAX_CHECKPOINTS, CHECKPOINT_BYTES // max(nbytes, 1)))


def _ceil_div(a, b):
    return run_kernel("div", [a + (b - 1), b])     # `div` of integers floors


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
        return eval_graph(body, bc + list(carry))

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


registry.register_gradient("while", _grad)
register_differentiable_form("while", lambda attrs: {**attrs, "count": True})
