"""jacfwd, jacrev, hessian and linearize, as in JAX: vmap over jvp / vjp.

jacfwd pushes every basis tangent through one jvp graph at once (vmap over the rows of an
identity); jacrev pulls every basis cotangent through one vjp. Pytrees follow JAX: the
Jacobian is a tree shaped like the output whose leaves are trees shaped like the
differentiated arguments, each of shape out_leaf.shape + in_leaf.shape. linearize traces
one jvp graph and splits it (autodiff.partition) into the primal part, run now, and the
linear tangent part, run by each call of f_jvp.
"""
import math

import numpy as np

from ir import Graph
from ir.errors import GradientError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.autodiff import partition
from tracer.concrete import Known
from tracer.core import eval_graph, trace_flat
from tracer.signature import leaf_aval
from tracer.pytree import flatten, unflatten
from tracer.transforms import (_argnums, check_tangent_dtypes, float0, jvp, matching_leaves,
                               partial_args, vjp)
from tracer.vmap import vmap


def _split_rows(flat, avals):
    """(n, ...) -> one array per aval: (size_i, ...) rows reshaped to aval.shape + ..."""
    out, off = [], 0
    for a in avals:
        n = math.prod(a.shape)
        out.append(tnp.reshape(flat[off:off + n], a.shape + tuple(flat.shape[1:])))
        off += n
    return out


def _basis(avals):
    n = sum(math.prod(a.shape) for a in avals)
    dtype = np.result_type(*[a.dtype for a in avals]) if avals else np.float32
    return np.eye(n, dtype=dtype)


def _assemble(argnums, in_tree, out_tree, blocks):
    """blocks[o][i]: the Jacobian block of output leaf o and input leaf i -> JAX's tree."""
    per_out = []
    for row in blocks:
        per_arg = unflatten(in_tree, row)
        per_out.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
    return unflatten(out_tree, per_out)


def _inputs(fun, argnums, args, kwargs, where):
    """(fun of the differentiated arguments only, those arguments, their leaves' tree and
    types): what both Jacobians start from."""
    g, primals = partial_args(fun, args, _argnums(argnums, args, where), kwargs)
    leaves, in_tree = flatten(list(primals))
    return g, primals, in_tree, [leaf_aval(x, where) for x in leaves]


def jacfwd(fun, argnums=0):
    """The Jacobian of `fun` by forward mode (one batched jvp): best for few inputs."""
    def jac(*args, **kwargs):
        g, primals, in_tree, in_avals = _inputs(fun, argnums, args, kwargs, "jacfwd")

        def push(t):
            tans = unflatten(in_tree, [r.astype(a.dtype) for r, a in
                                       zip(_split_rows(t, in_avals), in_avals)])
            return jvp(g, primals, tuple(tans))[1]
        out = vmap(push)(_basis(in_avals))           # tree of (n_in, *out shape)
        outs, out_tree = flatten(out)
        blocks = [[_to_back(b, a) for b, a in zip(_split_rows(o, in_avals), in_avals)]
                  for o in outs]
        return _assemble(argnums, in_tree, out_tree, blocks)
    return jac


def _to_back(block, in_aval):
    """(*in shape, *out shape) -> (*out shape, *in shape)."""
    k = len(in_aval.shape)
    perm = tuple(range(k, block.ndim)) + tuple(range(k))
    return tnp.transpose(block, perm)


def jacrev(fun, argnums=0):
    """The Jacobian of `fun` by reverse mode (one batched vjp): best for few outputs."""
    def jac(*args, **kwargs):
        g, primals, in_tree, in_avals = _inputs(fun, argnums, args, kwargs, "jacrev")
        out, pull = vjp(g, *primals)
        outs, out_tree = flatten(out)
        out_avals = [leaf_aval(o, "jacrev") for o in outs]
        for a in out_avals:
            if dtype_kind(a.dtype) != "f":
                raise GradientError(f"jacrev: output of dtype {a.dtype} is not float")

        def pull_row(c):
            cts = [r.astype(a.dtype) for r, a in zip(_split_rows(c, out_avals), out_avals)]
            return flatten(list(pull(unflatten(out_tree, cts))))[0]
        grads = vmap(pull_row)(_basis(out_avals))    # per input leaf: (n_out, *in shape)
        by_out = [_split_rows(gr, out_avals) for gr in grads]   # [in][out]
        blocks = [[by_out[i][o] for i in range(len(in_avals))] for o in range(len(outs))]
        return _assemble(argnums, in_tree, out_tree, blocks)
    return jac


def hessian(fun, argnums=0):
    """jacfwd(jacrev(fun)): forward over reverse, as JAX."""
    return jacfwd(jacrev(fun, argnums), argnums)


def linearize(fun, *primals):
    """(fun(*primals), f_jvp): f_jvp(*tangents) = J @ tangents, evaluating only the linear
    part of one jvp graph traced here (the primal part runs once, now). As in jvp, the
    tangent of an integer or bool primal is float0 and carries nothing into the graph."""
    leaves, in_tree = flatten(list(primals))
    avals = [leaf_aval(x, "linearize") for x in leaves]
    floats = [dtype_kind(a.dtype) == "f" for a in avals]
    trees = {}
    n, m = len(leaves), sum(floats)

    def both(*xs):
        it = iter(xs[n:])
        ts = [next(it) if f else np.zeros(a.shape, float0) for a, f in zip(avals, floats)]
        out, tan = jvp(fun, tuple(unflatten(in_tree, xs[:n])), tuple(unflatten(in_tree, ts)))
        outs, trees["out"] = flatten(out)
        return outs + flatten(tan)[0]
    graph, captured = trace_flat(both, avals + [a.strip_weak() for a, f in zip(avals, floats)
                                                if f], Known(leaves))
    inv = graph.invars     # primals, tangents, captured: put the tangents last
    graph = Graph(inv[:n] + inv[n + m:] + inv[n:n + m], graph.outvars, graph.nodes,
                  graph.constvars, graph.consts)
    k = len(graph.outvars) // 2
    early, late = partition(graph, n + len(captured), k)
    vals = eval_graph(early, list(leaves) + captured)
    outs, residuals = vals[:k], vals[k:]

    def f_jvp(*tangents):
        where = "linearize's f_jvp"
        ts = matching_leaves(where, "tangent", list(tangents), in_tree, [a.shape for a in avals])
        check_tangent_dtypes(where, [a.dtype for a in avals], ts)
        ts = [t for t, f in zip(ts, floats) if f]
        return unflatten(trees["out"], eval_graph(late, residuals + ts))
    return unflatten(trees["out"], outs), f_jvp
