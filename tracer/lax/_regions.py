"""Tracing user functions into regions, and the checks every control-flow primitive shares.

A region is a closed graph: the outer values a function closes over (tracers of an
enclosing trace) become extra region inputs, and the node takes them as explicit inputs
(`captured`). Functions traced together (a cond's branches) take the union of what each
captures, so their signatures agree.
"""
import numpy as np

from ir import Graph, ShapedArray, Var, dce
from ir.errors import DTypeError, ShapeError
from ir.types import dtype_kind
from tracer import core
from tracer.pytree import flatten, unflatten
from tracer.signature import leaf_aval


def is_float(aval):
    return dtype_kind(aval.dtype) == "f"


def leaf_avals(leaves, where):
    return [leaf_aval(x, where) for x in leaves]


def taking(graph, n, captured, inputs):
    """`graph`, whose inputs are `n` own inputs then its `captured` values, taking the
    own inputs then all of `inputs` (a superset of `captured`) instead."""
    own = {id(x): v for x, v in zip(captured, graph.invars[n:])}
    invars = graph.invars[:n] + [own.get(id(x)) or Var(x.aval.strip_weak()) for x in inputs]
    return Graph(invars, graph.outvars, graph.nodes, graph.constvars, graph.consts)


def union(lists):
    """The captured values of several traces, each once, in first-seen order."""
    seen, out = set(), []
    for xs in lists:
        for x in xs:
            if id(x) not in seen:
                seen.add(id(x))
                out.append(x)
    return out


def trace_region(fun, in_tree, in_avals):
    """Trace `fun(*unflatten(in_tree, tracers))` -> (graph, out_tree, captured); the
    graph's inputs are the leaves then the captured values."""
    trees = []

    def flat(*xs):
        leaves, tree = flatten(fun(*unflatten(in_tree, xs)))
        trees.append(tree)
        return leaves
    graph, captured = core.trace_flat(flat, in_avals)
    return graph, trees[0], captured


def closed(graph, n, captured, inputs, first=True):
    """`taking(...)` with the captured inputs moved first (consts, then the rest) when
    `first`: the layout of a loop body's inputs."""
    g = taking(graph, n, captured, inputs)
    if not first:
        return g
    return Graph(g.invars[n:] + g.invars[:n], g.outvars, g.nodes, g.constvars, g.consts)


def types_text(tree, avals):
    """A pytree of types as text, e.g. `(f32[3], {'a': i64[]})`."""
    return str(unflatten(tree, [_Text(str(a)) for a in avals]))


class _Text(str):
    def __repr__(self):
        return str(self)


def same_types(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype
                                    for x, y in zip(a, b))


def check_same(where, what, tree_a, avals_a, tree_b, avals_b, source):
    """DTypeError showing both types unless the two pytrees of types agree."""
    if tree_a != tree_b or not same_types(avals_a, avals_b):
        raise DTypeError(f"{where}: {what[0]} has type {types_text(tree_a, avals_a)} but "
                         f"{what[1]} has type {types_text(tree_b, avals_b)}; they must have "
                         f"the same structure, shapes and dtypes (at {source})")


def promote_weak(leaves, in_avals, out_avals):
    """Leaves whose weak type (a Python scalar) took another dtype in the loop body, cast
    to that dtype (as JAX does), or None if no leaf needs it."""
    changed = False
    out = list(leaves)
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            out[k] = _cast(leaves[k], b.dtype)
            changed = True
    return out if changed else None


def _cast(x, dtype):
    from tracer import numpy as tnp
    return tnp.astype(x, dtype) if isinstance(x, core.Tracer) else np.asarray(x, dtype)


def read_ids(graph):
    return {id(x) for n in graph.nodes for x in n.inputs} | {id(v) for v in graph.outvars}


def prune_region(graph, keep_out, droppable):
    """`graph` with only the outputs at `keep_out`, dead nodes dropped, and the inputs at
    positions in `droppable` it no longer reads removed; returns (graph, kept inputs)."""
    g = dce(Graph(graph.invars, [graph.outvars[j] for j in keep_out], graph.nodes,
                  graph.constvars, graph.consts))
    read = read_ids(g)
    kept = [k for k, v in enumerate(g.invars) if k not in droppable or id(v) in read]
    return Graph([g.invars[k] for k in kept], g.outvars, g.nodes, g.constvars,
                 g.consts), kept


def check_signature(kernel, what, got, want):
    """Shape-rule check of a region's input or output types against the node's."""
    if not same_types(got, want):
        raise ShapeError(f"{kernel}: {what} has types {[str(a) for a in got]} but the node "
                         f"needs {[str(ShapedArray(a.shape, a.dtype)) for a in want]}")
