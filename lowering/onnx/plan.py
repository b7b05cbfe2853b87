"""What exporting a graph needs beyond the graph: each value's dims and, under
`to_onnx(..., dynamic_batch=True)`, which node attrs and literals are the batch size,
found by comparing two traces of the function with different batch sizes."""
import numpy as np

from ir.errors import ShapeError
from ir.graph import Literal, Var, is_region
from ir.printer import format_literal
from lowering.onnx.builder import describe


class Plan:
    """What export needs beyond the graph: each value's dims (ints, "batch", or None
    for unknown) and, under dynamic_batch, the node attrs and literals that are the
    batch size (keyed by node identity, so regions' nodes have theirs). Static (the
    example's shapes) unless `batch_plan` fills it in."""

    def __init__(self):
        self.dims, self.masks, self.batch_literals = {}, {}, set()

    def dims_of(self, v):
        return self.dims.get(id(v), v.aval.shape)


def _all_vars(g):
    return g.constvars + g.invars + [o for n in g.nodes for o in n.outputs]


def batch_plan(g1, g2, b1, b2, where):
    """The Plan of g1, traced with batch b1, from what differs in g2, the same function
    traced with batch b2: dims and int attrs that are b1 in g1 and b2 in g2 become the
    run-time batch size; anything else that changes (a reshape to (b*n,), a mean over the
    batch axis and another, a structure that depends on the batch) raises ShapeError
    naming the node (`where` says what is exported). Regions are compared the same way,
    recursively."""
    plan = Plan()
    _match(g1, g2, b1, b2, plan, where)
    return plan


def _match(g1, g2, b1, b2, plan, where):
    """Record in `plan` what differs between g1 (batch b1) and g2 (batch b2)."""
    vars1, vars2 = _all_vars(g1), _all_vars(g2)
    if (len(vars1) != len(vars2) or len(g1.nodes) != len(g2.nodes)
            or any(a.kernel != b.kernel for a, b in zip(g1.nodes, g2.nodes))):
        raise ShapeError(f"{where}: the graph changes with the batch size ({len(g1.nodes)} "
                         f"nodes at batch {b1}, {len(g2.nodes)} at {b2}); use an example "
                         f"batch size larger than 1 and unlike the other dimensions, or "
                         f"export with a fixed batch")
    for c1, c2 in zip(g1.consts, g2.consts):
        if np.shape(c1) != np.shape(c2) or not np.array_equal(c1, c2, equal_nan=True):
            raise ShapeError(f"{where}: a constant of shape {np.shape(c1)} depends on the "
                             f"batch size; export with a fixed batch")
    pos2 = {id(v): k for k, v in enumerate(vars2)}
    pos1 = {id(v): k for k, v in enumerate(vars1)}
    for v1, v2 in zip(vars1, vars2):
        s1, s2 = v1.aval.shape, v2.aval.shape
        if len(s1) != len(s2) or v1.aval.dtype != v2.aval.dtype:
            raise ShapeError(f"{where}: a value of type {v1.aval} becomes {v2.aval} at "
                             f"batch {b2}; export with a fixed batch")
        plan.dims[id(v1)] = tuple(d if d == e else "batch" if (d, e) == (b1, b2) else None
                                  for d, e in zip(s1, s2))
    for n1, n2 in zip(g1.nodes, g2.nodes):
        for j, (x1, x2) in enumerate(zip(n1.inputs, n2.inputs)):
            if isinstance(x1, Var) and isinstance(x2, Var) and pos1[id(x1)] == pos2[id(x2)]:
                continue
            if isinstance(x1, Literal) and isinstance(x2, Literal):
                if x1 == x2:
                    continue
                if x1.value == b1 and x2.value == b2:
                    plan.batch_literals.add((id(n1), j))
                    continue
            raise ShapeError(
                f"{where}: input {j} of {describe(n1)} changes with the batch size "
                f"({_show(x1)} at batch {b1}, {_show(x2)} at {b2}), e.g. a mean over the "
                f"batch axis and another, or the 1/n of a mean's gradient; export with a "
                f"fixed batch")
        for r1, r2 in zip(n1.regions, n2.regions):
            _match(r1, r2, b1, b2, plan, f"{where}, in a region of {n1.kernel}")
        masks = {}
        for (k, a1), (_, a2) in zip(n1.attr_items, n2.attr_items):
            if a1 != a2 and not is_region(a1):
                masks[k] = _batch_mask(a1, a2, b1, b2)
                if masks[k] is None:
                    raise ShapeError(
                        f"{where}: {describe(n1)} has attr {k}={a1} at batch {b1} but "
                        f"{a2} at batch {b2}; only entries equal to the batch size can "
                        f"follow it at run time (e.g. a reshape that merges the batch axis "
                        f"with another cannot); export with a fixed batch")
        if masks:
            plan.masks[id(n1)] = masks


def _show(x):
    return format_literal(x) if isinstance(x, Literal) else str(x.aval)


def _batch_mask(a1, a2, b1, b2):
    """Which entries of an int (or int tuple) attr are the batch size, or None if the
    attr changes in another way."""
    if isinstance(a1, tuple) and isinstance(a2, tuple) and len(a1) == len(a2):
        mask = [_batch_mask(x, y, b1, b2) for x, y in zip(a1, a2)]
        return None if None in mask else tuple(m[0] for m in mask)
    if isinstance(a1, (int, np.integer)) and not isinstance(a1, bool):
        return (True,) if (a1, a2) == (b1, b2) else (False,) if a1 == a2 else None
    return None
