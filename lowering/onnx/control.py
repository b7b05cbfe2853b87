"""ONNX rules of the control-flow kernels: regions become ONNX subgraphs.

A region is closed (outer values it reads are explicit node inputs), so exporting one is
exporting a graph with its inputs bound to ONNX names: `g.subgraph()` builds a Loop body
or an If branch, whose nodes read the node's inputs as outer-scope names.

- scan -> Loop with a static trip count: iteration t reads slice t (length-1-t when
  reversed) of each xs with Gather and emits its ys as scan outputs, reversed at the end
  when the scan runs backwards (Loop stacks them in iteration order). Loop rather than
  Scan: Scan needs at least one scanned input, and a scan without xs (fori_loop) has none.
- while -> Loop without a trip count: cond runs once on the initial carry, then in the
  body after each step; count=True adds a loop-carried counter.
- cond -> nested Ifs on index == 0, 1, ...; the last branch is the innermost else.
- remat and custom_call are inlined (the recomputation is a differentiation concern).
"""
import numpy as np

from lowering.onnx.idioms import BOOL, INT64, reverse

SCALAR_I64, SCALAR_BOOL = (INT64, ()), (BOOL, ())


def _names(outs):
    return [outs] if isinstance(outs, str) else list(outs)


def _inline(g, inputs, attrs):
    return g.emit(attrs["body"], inputs)


def _scan(g, inputs, attrs):
    body, nc, nk = attrs["body"], attrs["n_consts"], attrs["n_carry"]
    consts, init, xs = inputs[:nc], inputs[nc:nc + nk], inputs[nc + nk:]
    length = g.ints("length")         # follows the batch when the scan runs over it
    trips = g.op("Squeeze", length, g.const(np.zeros(1, np.int64)))
    sub = g.subgraph()
    t = sub.input("iter", SCALAR_I64)
    go = sub.input("cond", SCALAR_BOOL)
    carry = [sub.input("carry", g.type_of(v)) for v in body.invars[nc:nc + nk]]
    if attrs["reverse"]:
        t = sub.op("Sub", g.op("Sub", trips, g.const(np.int64(1))), t)
    slices = [sub.op("Gather", x, t, axis=0) for x in xs]
    outs = sub.emit(body, consts + carry + slices)
    loop = sub.finish([go] + outs, [SCALAR_BOOL] + [g.type_of(v) for v in body.outvars],
                      "scan_body")
    res = _names(g.op("Loop", trips, "", *init, body=loop, outputs=len(outs)))
    if attrs["reverse"]:
        res[nk:] = [reverse(g, y, (0,)) for y in res[nk:]]
    return res


def _while(g, inputs, attrs):
    cond, body, ncc, nbc = attrs["cond"], attrs["body"], attrs["n_cond"], attrs["n_body"]
    count = int(attrs.get("count", False))
    cc, bc, init = inputs[:ncc], inputs[ncc:ncc + nbc], inputs[ncc + nbc:]
    first = g.emit(cond, cc + init)[0]
    sub = g.subgraph()
    sub.input("iter", SCALAR_I64)
    sub.input("cond", SCALAR_BOOL)
    trips = [sub.input("trips", SCALAR_I64) for _ in range(count)]
    carry = [sub.input("carry", g.type_of(v)) for v in body.invars[nbc:]]
    new = sub.emit(body, bc + carry)
    again = sub.emit(cond, cc + new)[0]
    trips = [sub.op("Add", n, sub.const(np.int64(1))) for n in trips]
    loop = sub.finish([again] + trips + new, [SCALAR_BOOL] + [SCALAR_I64] * count + [
        g.type_of(v) for v in body.outvars], "while_body")
    res = _names(g.op("Loop", "", first, *[g.const(np.int64(0))] * count, *init, body=loop,
                      outputs=count + len(init)))
    return res[count:] + res[:count]       # the trip count is the last output


def _cond(g, inputs, attrs):
    types = [g.type_of(o) for o in g.node.outputs]
    return _switch(g, inputs[0], attrs["branches"], 0, inputs[1:], types)


def _switch(g, index, branches, k, operands, types):
    """branches[k] if index == k, else the switch over the branches after it."""
    if k == len(branches) - 1:
        return g.emit(branches[k], operands)
    then, other = g.subgraph(), g.subgraph()
    then = then.finish(then.emit(branches[k], operands), types, f"branch_{k}")
    other = other.finish(_switch(other, index, branches, k + 1, operands, types), types,
                         f"branches_after_{k}")
    taken = g.op("Equal", index, g.const(np.int32(k)))
    return _names(g.op("If", taken, then_branch=then, else_branch=other,
                       outputs=len(types)))


RULES = {"scan": _scan, "while": _while, "cond": _cond, "remat": _inline,
         "custom_call": _inline}
