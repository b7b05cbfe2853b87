"""User-facing transformations: vjp, grad, value_and_grad, jvp.

Each one traces the function to a graph, transforms the graph (tracer.autodiff), and
evaluates the result with `eval_graph`: on arrays that runs it, on tracers it inlines it
into the enclosing trace. So every pair nests: grad(grad(f)), jit(grad(f)), jvp(grad(f)).
"""
import numpy as np

from ir import cse, dce
from ir.errors import DTypeError, GradientError
from tracer.autodiff import backward, check_differentiable, partition, vjp_graph
from tracer.core import Tracer, eval_graph, trace_flat
from tracer.jit import _leaf_aval
from tracer.pytree import flatten, num_leaves, unflatten


def _trace_fun(fun, args, has_aux=False, where="vjp"):
    """Trace fun(*args) -> (graph, leaves, in_tree, out_tree, aux_tree, captured).

    Graph inputs are the argument leaves then captured outer values; outputs are the
    result leaves then the aux leaves."""
    leaves, in_tree = flatten(list(args))
    trees = {}

    def flat_fun(*xs):
        out = fun(*unflatten(in_tree, xs))
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise GradientError(f"{where}(has_aux=True) needs the function to return a "
                                    f"pair (output, aux), got {type(out).__name__}")
            out, aux = out
        outs, trees["out"] = flatten(out)
        aux_leaves, trees["aux"] = flatten(aux)
        return outs + aux_leaves
    graph, captured = trace_flat(flat_fun, [_leaf_aval(x, where) for x in leaves])
    return graph, leaves, in_tree, trees["out"], trees["aux"], captured


def vjp(fun, *primals, has_aux=False):
    """(out, vjp_fn) or (out, vjp_fn, aux); vjp_fn(cotangent) returns one tuple entry per
    primal. The forward pass runs now; vjp_fn runs only the backward part."""
    graph, leaves, in_tree, out_tree, aux_tree, captured = _trace_fun(fun, primals, has_aux)
    n_in, n_out = len(leaves) + len(captured), num_leaves(out_tree)
    wrt = [True] * len(leaves) + [False] * len(captured)
    body = type(graph)(graph.invars, graph.outvars[:n_out], graph.nodes, graph.constvars,
                       graph.consts)
    joint = vjp_graph(body, wrt)
    fwd, bwd = partition(joint, n_in, n_out)
    fwd_vals = eval_graph(fwd, leaves + captured)
    aux_vals = eval_graph(dce(type(graph)(graph.invars, graph.outvars[n_out:], graph.nodes,
                                          graph.constvars, graph.consts)),
                          leaves + captured) if has_aux else []
    outs, residuals = fwd_vals[:n_out], fwd_vals[n_out:]

    def vjp_fn(cotangent):
        cts, tree = flatten(cotangent)
        if tree != out_tree:
            raise GradientError(f"vjp_fn: cotangent structure {tree} does not match the "
                                f"output structure {out_tree}")
        for c, v in zip(cts, body.outvars):
            if tuple(np.shape(c)) != v.aval.shape:
                raise GradientError(f"vjp_fn: cotangent shape {np.shape(c)} does not match "
                                    f"output shape {v.aval.shape}")
        grads = eval_graph(bwd, residuals + [_as_dtype(c, v.aval.dtype)
                                             for c, v in zip(cts, body.outvars)])
        return tuple(unflatten(in_tree, grads))
    out = unflatten(out_tree, outs)
    if has_aux:
        return out, vjp_fn, unflatten(aux_tree, aux_vals)
    return out, vjp_fn


def _as_dtype(x, dtype):
    if isinstance(x, Tracer):
        from tracer import numpy as tnp
        return tnp.astype(x, dtype)
    return np.asarray(x, dtype)


def _argnums(argnums, nargs, where):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise GradientError(f"{where}: argnums={argnums} but the function got {nargs} "
                                f"positional arguments")
    return tuple(i % nargs for i in nums)


def value_and_grad(fun, argnums=0, has_aux=False):
    """Returns a function computing (fun(*args), gradient wrt args[argnums])."""
    name = getattr(fun, "__name__", "function")

    def value_and_grad_f(*args):
        where = f"grad({name})"
        nums = _argnums(argnums, len(args), where)
        graph, leaves, in_tree, out_tree, aux_tree, captured = _trace_fun(fun, args, has_aux,
                                                                          "grad")
        arg_trees = [flatten(a)[1] for a in args]
        wrt = []
        for i, a in enumerate(args):
            arg_leaves = flatten(a)[0]
            for x in arg_leaves:
                dt = _leaf_aval(x, where).dtype
                if i in nums and dt.kind != "f":
                    raise DTypeError(f"{where}: argument {i} has dtype {dt}; grad needs float "
                                     f"inputs (cast with astype(float32)), or leave it out of "
                                     f"argnums")
                wrt.append(i in nums)
        wrt += [False] * len(captured)
        out = graph.outvars[0] if graph.outvars else None
        if num_leaves(out_tree) != 1 or out.aval.shape != () or out.aval.dtype.kind != "f":
            got = "a pytree" if num_leaves(out_tree) != 1 else str(out.aval)
            raise GradientError(f"{where}: the function must return a float scalar, got "
                                f"{got}. For non-scalar outputs use vjp(f, *args) and call "
                                f"vjp_fn with a cotangent.")
        check_differentiable(graph, wrt)
        n_aux = len(graph.outvars) - 1

        def joint(*xs):
            from tracer import numpy as tnp
            one = tnp.ones((), out.aval.dtype)
            outs, grads = backward(graph, xs, [one] + [None] * n_aux, wrt)
            return outs + grads
        g, _ = trace_flat(joint, [v.aval for v in graph.invars])
        vals = eval_graph(dce(cse(g)), leaves + captured)
        value, aux, grads = vals[0], vals[1:1 + n_aux], iter(vals[1 + n_aux:])
        per_arg = [unflatten(arg_trees[i], [next(grads) for _ in range(num_leaves(arg_trees[i]))])
                   for i in nums]
        grad_out = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        if has_aux:
            return (value, unflatten(aux_tree, aux)), grad_out
        return value, grad_out
    value_and_grad_f.__name__ = f"value_and_grad_{name}"
    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False):
    """Gradient of a float-scalar-valued function wrt args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux)

    def grad_f(*args):
        value, g = vg(*args)
        return (g, value[1]) if has_aux else g
    grad_f.__name__ = f"grad_{getattr(fun, '__name__', 'function')}"
    return grad_f


def jvp(fun, primals, tangents):
    """(fun(*primals), J @ tangents), by transposing the reverse-mode graph."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise GradientError("jvp: primals and tangents must be tuples (one entry per argument)")
    graph, leaves, in_tree, out_tree, _, captured = _trace_fun(fun, primals, where="jvp")
    t_leaves, t_tree = flatten(list(tangents))
    if t_tree != in_tree:
        raise GradientError(f"jvp: tangents structure {t_tree} does not match primals {in_tree}")
    n = len(leaves) + len(captured)
    wrt = [_leaf_aval(x, "jvp").dtype.kind == "f" for x in leaves] + [False] * len(captured)
    for x, t in zip(leaves, t_leaves):
        if tuple(np.shape(t)) != tuple(np.shape(x)):
            raise GradientError(f"jvp: tangent shape {np.shape(t)} does not match primal "
                                f"shape {np.shape(x)}")
    check_differentiable(graph, wrt)
    out_avals = [v.aval.strip_weak() for v in graph.outvars]
    pullback, _ = trace_flat(lambda *a: backward(graph, a[:n], a[n:], wrt)[1],
                             [v.aval for v in graph.invars] + out_avals)
    wrt_ct = [False] * n + [True] * len(out_avals)
    check_differentiable(pullback, wrt_ct)
    float_avals = [v.aval for v, w in zip(graph.invars, wrt) if w]

    def push(*a):
        from tracer import numpy as tnp
        primal, tans = list(a[:n]), list(a[n:])
        outs = eval_graph(graph, primal)
        zero_cts = [tnp.zeros(av.shape, av.dtype) for av in out_avals]
        return outs + backward(pullback, primal + zero_cts, tans, wrt_ct)[1]
    g, _ = trace_flat(push, [v.aval for v in graph.invars] + float_avals)
    tans = [_as_dtype(t, _leaf_aval(x, "jvp").dtype) for t, x, w in zip(t_leaves, leaves, wrt) if w]
    vals = eval_graph(dce(cse(g)), leaves + captured + tans)
    k = len(out_avals)
    return unflatten(out_tree, vals[:k]), unflatten(out_tree, vals[k:])
