"""The `numpy` backend's control-flow kernels: cond, remat, custom_call, scan and while
run their regions through the graph interpreter (one interpreted run of a region per
branch taken or per iteration), returning arrays of their own; and dynamic_index /
dynamic_update_index, the slot reads and writes of loops (an index clamped into range)."""
import weakref
from collections import Counter

import numpy as np

from ir import Graph
from lowering.interpreter import evaluate, own, run
from registry import register_kernel


def slot(x, i):
    return min(max(int(i), 0), x.shape[0] - 1)


def dynamic_update_index(x, i, v):
    out = np.array(x)
    out[slot(x, i)] = v
    return out


def cond(index, *operands, branches):
    return tuple(evaluate(branches[int(index)], list(operands), "numpy"))


def run_body(*args, body, **attrs):
    """remat and custom_call: their body region on the operands (a remat's policy and a
    custom_call's rule matter only to autodiff)."""
    return tuple(evaluate(body, list(args), "numpy"))


def scan(*args, body, n_consts, n_carry, length, reverse, unroll):
    consts, carry = list(args[:n_consts]), list(args[n_consts:n_consts + n_carry])
    xs = args[n_consts + n_carry:]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in body.out_avals[n_carry:]]
    for k in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = run(body, consts + carry + [x[k] for x in xs])
        carry = outs[:n_carry]
        for y, o in zip(ys, outs[n_carry:]):
            y[k] = o
    return tuple(own(carry, args) + ys)


def while_(*args, cond, body, n_cond, n_body, count=False):
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


for _name, _impl in {"cond": cond, "remat": run_body, "custom_call": run_body,
                     "scan": scan, "while": while_,
                     "dynamic_index": lambda x, i: np.array(x[slot(x, i)]),
                     "dynamic_update_index": dynamic_update_index}.items():
    register_kernel(_name, "numpy", _impl)
