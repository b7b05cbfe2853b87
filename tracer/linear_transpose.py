"""jax.linear_transpose: the transpose of a linear function, from the same reverse pass as
vjp. The function is traced on its arguments' types alone; its joint forward/backward
graph is split as vjp's is, and the backward part may read no value the arguments
determine (else the function is not linear: TypeError). Integer -> integer functions are
transposed through float64, as linear maps over the integers are over the reals."""
import numpy as np

from ir import ShapedArray, Var
from ir.errors import ArgumentError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.autodiff import partition, vjp_graph
from tracer.core import eval_graph, trace_flat
from tracer.pytree import flatten, unflatten
from tracer.signature import leaf_aval
from tracer.transform_checks import check_reduce_axes
from tracer.tree_util import Partial


def _aval(x, where):
    """An argument's type: an array, a scalar, or anything with .shape and .dtype."""
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))
    return leaf_aval(x, where).strip_weak()


def _kinds(avals):
    return {"float" if dtype_kind(a.dtype) == "f" else "integer" for a in avals}


def linear_transpose(fun, *primals, reduce_axes=()):
    """A function taking a cotangent of fun's output (its structure, shapes and dtypes)
    to the tuple of cotangents of `primals`, for fun linear; `primals` give the argument
    types only (arrays, scalars or tracer.ShapeDtypeStruct). The result is a pytree
    (tree_util.Partial), so jit may take and return it."""
    name = getattr(fun, "__name__", "function")
    where = f"linear_transpose({name})"
    check_reduce_axes(reduce_axes, where)
    leaves, in_tree = flatten(list(primals))
    in_avals = [_aval(x, where) for x in leaves]
    tree = {}

    def flat(*xs):
        outs, tree["out"] = flatten(fun(*unflatten(in_tree, xs)))
        return outs
    graph, captured = trace_flat(flat, in_avals)
    out_avals = [v.aval.strip_weak() for v in graph.outvars]
    kinds = _kinds(in_avals) | _kinds(out_avals)
    if len(kinds) > 1:
        raise ArgumentError(
            f"{where}: linear_transpose only supports [float or complex] -> [float or "
            f"complex], and integer -> integer functions, but got "
            f"{[str(a.dtype) for a in in_avals]} -> {[str(a.dtype) for a in out_avals]}.")
    if kinds == {"integer"}:        # the same map over float64, cast back
        graph, captured = trace_flat(flat, [ShapedArray(a.shape, np.float64) for a in in_avals])
    n, n_out = len(leaves), len(out_avals)
    joint = vjp_graph(graph, [True] * n + [False] * len(captured), n_out)
    fwd, bwd = partition(joint, n + len(captured), n_out)
    _check_linear(fwd, n, n_out, where)
    residuals = eval_graph(fwd, [np.zeros(v.aval.shape, v.aval.dtype)
                                 for v in fwd.invars[:n]] + captured)[n_out:]

    def transposed(*args):
        res, cotangent = args[:-1], args[-1]
        cts, got = flatten(cotangent)
        if got != tree["out"]:
            raise ArgumentError(f"{where}: cotangent tree does not match function output, "
                                f"expected {tree['out']} but got {got}")
        for c, a in zip(cts, out_avals):
            ca = _aval(c, where)
            if ca.shape != a.shape or ca.dtype != a.dtype:
                raise ArgumentError(f"{where}: cotangent type does not match function "
                                    f"output, expected {a} but got {ca}")
        grads = eval_graph(bwd, list(res) + [tnp.astype(c, v.aval.dtype) for c, v in
                                             zip(cts, graph.outvars)])
        return tuple(unflatten(in_tree, [tnp.zeros(a.shape, a.dtype) if g is None else
                                         tnp.astype(g, a.dtype)
                                         for g, a in zip(grads, in_avals)]))
    return Partial(transposed, *residuals)


def _check_linear(fwd, n, n_out, where):
    """TypeError if a residual the backward pass reads depends on the first n inputs."""
    seen = {id(v) for v in fwd.invars[:n]}
    for node in fwd.nodes:
        if any(isinstance(x, Var) and id(x) in seen for x in node.inputs):
            seen.update(id(o) for o in node.outputs)
    if any(isinstance(r, Var) and id(r) in seen for r in fwd.outvars[n_out:]):
        raise ArgumentError(f"{where}: the function is not linear in its arguments: its "
                            f"transpose would read their values (only linear functions, "
                            f"such as sums, products by constants, slicing and reshapes, "
                            f"have a transpose); use tracer.vjp for a nonlinear one")
