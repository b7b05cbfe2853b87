"""jacfwd, jacrev, hessian and linearize, as in JAX: vmap over jvp / vjp.

jacfwd pushes every basis tangent through one jvp graph at once (vmap over the rows of an
identity); jacrev pulls every basis cotangent through one vjp. Pytrees follow JAX: the
Jacobian is a tree shaped like the output whose leaves are trees shaped like the
differentiated arguments, each of shape out_leaf.shape + in_leaf.shape. linearize traces
one jvp graph and splits it (autodiff.partition) into the primal part, run now, and the
linear tangent part, run by each call of f_jvp. Keywords as JAX's: has_aux (aux is
computed once, not per basis vector), holomorphic (only False), jacrev's allow_int. The
Jacobian block of an int input (jacrev) or output (jacfwd) is zeros of its dtype, as
JAX's, where jvp and vjp give float0.
"""
import math

import numpy as np

from ir import Graph
from ir.errors import DTypeError, GradientError, GradientTypeError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.autodiff import partition
from tracer.concrete import Known
from tracer.core import eval_graph, trace_flat
from tracer.float0s import Float0Leaves, float0, is_float0
from tracer.signature import leaf_aval, presents
from tracer.pytree import flatten, num_leaves, unflatten
from tracer.transform_checks import check_tangent_dtypes, matching_leaves
from tracer.transforms import Linear, _argnums, compiled_when_jitted, jvp, partial_args, vjp
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


def _without_float0(leaves, like):
    """Each float0 leaf (an int value's tangent) as zeros of its value's dtype (`like`:
    the values, or their types): the Jacobian block JAX gives for an int value."""
    return [np.zeros(x.shape, a.dtype) if is_float0(x) else x for x, a in zip(leaves, like)]


def _inputs(fun, argnums, args, kwargs, where, holomorphic, allow_int=False):
    """(fun of the differentiated arguments only, those arguments, their leaves' tree and
    types): what both Jacobians start from."""
    nums = _argnums(argnums, args, where, allow_int, holomorphic)
    g, primals = partial_args(fun, args, nums, kwargs)
    leaves, in_tree = flatten(list(primals))
    return g, primals, in_tree, [leaf_aval(x, where) for x in leaves]


_JACOBIAN_DOC = ("Jacobian of {fun} with respect to positional argument(s) {argnums}. "
                 "Takes the same arguments as {fun} but returns the jacobian of the "
                 "output with respect to the arguments at positions {argnums}.")


def _named(jac, fun, kind, argnums):
    """jac presenting fun's signature, as JAX's jacobians."""
    return presents(jac, fun, f"{kind}_{getattr(fun, '__name__', 'function')}",
                    _JACOBIAN_DOC.replace("{argnums}", str(argnums)))


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` by forward mode (one batched jvp): best for few inputs. With
    has_aux, (jacobian, aux)."""
    def jac(*args, **kwargs):
        g, primals, in_tree, in_avals = _inputs(fun, argnums, args, kwargs, "jacfwd",
                                                holomorphic)

        def push(t):
            tans = unflatten(in_tree, [r.astype(a.dtype) for r, a in
                                       zip(_split_rows(t, in_avals), in_avals)])
            out, tan, *aux = jvp(g, primals, tuple(tans), has_aux=has_aux)
            tan, tree = flatten(tan)
            return (unflatten(tree, _without_float0(tan, flatten(out)[0])), *aux)
        # tangents: a tree of (n_in, *out shape); aux, not batched
        out_axes = (0, None) if has_aux else (0,)
        tangents, *aux = vmap(push, out_axes=out_axes)(_basis(in_avals))
        outs, out_tree = flatten(tangents)
        blocks = [[_to_back(b, a) for b, a in zip(_split_rows(o, in_avals), in_avals)]
                  for o in outs]
        return _with_aux(_assemble(argnums, in_tree, out_tree, blocks), aux)
    return _named(compiled_when_jitted(fun, jacfwd, (argnums, has_aux, holomorphic), jac),
                  fun, "jacfwd", argnums)


def _with_aux(jacobian, aux):
    """jacobian, or (jacobian, aux) when aux = [the aux of has_aux]."""
    return (jacobian, *aux) if aux else jacobian


def _to_back(block, in_aval):
    """(*in shape, *out shape) -> (*out shape, *in shape)."""
    k = len(in_aval.shape)
    perm = tuple(range(k, block.ndim)) + tuple(range(k))
    return tnp.transpose(block, perm)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of `fun` by reverse mode (one batched vjp): best for few outputs. With
    has_aux, (jacobian, aux); with allow_int, an int or bool input's blocks are zeros of
    its dtype (as JAX's for int inputs; JAX fails on bool ones)."""
    def jac(*args, **kwargs):
        g, primals, in_tree, in_avals = _inputs(fun, argnums, args, kwargs, "jacrev",
                                                holomorphic, allow_int)
        out, pull, *aux = vjp(g, *primals, has_aux=has_aux)
        outs, out_tree = flatten(out)
        out_avals = [leaf_aval(o, "jacrev") for o in outs]
        for a in out_avals:
            if dtype_kind(a.dtype) != "f":
                raise GradientError(f"jacrev: output of dtype {a.dtype} is not float")

        def pull_row(c):
            cts = [r.astype(a.dtype) for r, a in zip(_split_rows(c, out_avals), out_avals)]
            return _without_float0(flatten(list(pull(unflatten(out_tree, cts))))[0],
                                   in_avals)
        grads = vmap(pull_row)(_basis(out_avals))    # per input leaf: (n_out, *in shape)
        by_out = [_split_rows(gr, out_avals) for gr in grads]   # [in][out]
        blocks = [[by_out[i][o] for i in range(len(in_avals))] for o in range(len(outs))]
        return _with_aux(_assemble(argnums, in_tree, out_tree, blocks), aux)
    return _named(compiled_when_jitted(fun, jacrev, (argnums, has_aux, holomorphic, allow_int),
                                       jac), fun, "jacrev", argnums)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jacfwd(jacrev(fun)): forward over reverse, as JAX; with has_aux, (hessian, aux)."""
    hess = jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)

    def checked(*args, **kwargs):
        _argnums(argnums, args, "hessian", holomorphic=holomorphic)
        return hess(*args, **kwargs)
    return _named(compiled_when_jitted(fun, hessian, (argnums, has_aux, holomorphic),
                                       checked), fun, "hessian", argnums)


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp), or with has_aux (output, f_jvp, aux): f_jvp(*tangents) =
    J @ tangents, evaluating only the linear part of one jvp graph traced here (the primal
    part runs once, now); f_jvp is a `Linear`, a pytree of its residuals. As in jvp, the
    tangent of an integer or bool primal is float0 and carries nothing into the graph."""
    leaves, in_tree = flatten(list(primals))
    avals = [leaf_aval(x, "linearize") for x in leaves]
    floats = [dtype_kind(a.dtype) == "f" for a in avals]
    trees = {}
    n, m = len(leaves), sum(floats)

    def both(*xs):
        it = iter(xs[n:])
        ts = [next(it) if f else np.zeros(a.shape, float0) for a, f in zip(avals, floats)]
        out, tan, *aux = jvp(fun, tuple(unflatten(in_tree, xs[:n])),
                             tuple(unflatten(in_tree, ts)), has_aux=has_aux)
        outs, trees["out"] = flatten(out)
        aux_leaves, trees["aux"] = flatten(aux)
        tans = flatten(tan)[0]          # an int output's is float0: kept out of the graph
        trees["float0"], trees["k"] = Float0Leaves(tans), len(outs) + len(aux_leaves)
        return outs + aux_leaves + trees["float0"].others(tans)
    graph, captured = trace_flat(both, avals + [a.strip_weak() for a, f in zip(avals, floats)
                                                if f], Known(leaves))
    inv = graph.invars     # primals, tangents, captured: put the tangents last
    graph = Graph(inv[:n] + inv[n + m:] + inv[n:n + m], graph.outvars, graph.nodes,
                  graph.constvars, graph.consts)
    k = trees["k"]                                          # outputs and aux
    early, late = partition(graph, n + len(captured), k)
    vals = eval_graph(early, list(leaves) + captured)
    outs, residuals = vals[:k], vals[k:]

    def f_jvp(residuals, *tangents):
        where = "linearize's f_jvp"
        try:
            ts = matching_leaves(where, "tangent", list(tangents), in_tree,
                                 [a.shape for a in avals])
            check_tangent_dtypes(where, [a.dtype for a in avals], ts)
        except (GradientError, DTypeError) as e:    # JAX's ValueError and words (a
            raise GradientTypeError(f"linearized function called on tangent values "
                                    f"inconsistent with the original primal values: {e}"
                                    ) from None
        ts = [t for t, f in zip(ts, floats) if f]
        return unflatten(trees["out"], trees["float0"].merge(eval_graph(late, residuals + ts)))
    n_out = num_leaves(trees["out"])
    out = unflatten(trees["out"], outs[:n_out])
    return (out, Linear(f_jvp, residuals), *unflatten(trees["aux"], outs[n_out:]))
