"""User-facing transformations: vjp, grad, value_and_grad, jvp.

Each one traces the function to a graph, transforms the graph (tracer.autodiff), and
evaluates the result with `eval_graph`: on arrays that runs it, on tracers it inlines it
into the enclosing trace. So every pair nests: grad(grad(f)), jit(grad(f)), jvp(grad(f)).
They take JAX's keywords: has_aux; holomorphic (only False: there are no complex dtypes);
allow_int (an int or bool argument's gradient is float0 zeros); reduce_axes (only ()).
As in JAX, the tangent of an int or bool output (jvp) and the cotangent of an int or bool
input (vjp, grad with allow_int) are float0 zeros, also under jit, vmap or another
transform (tracer.float0s).
"""
import numpy as np

from ir import cse, dce
from ir.errors import DTypeError, GradientError, GradientTypeError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.autodiff import backward, check_differentiable, partition, replaying, vjp_graph
from tracer.concrete import Known
from tracer.core import Tracer, eval_graph, trace_flat
from tracer.float0s import is_float0, zeros
from tracer.pytree import flatten, num_leaves, register_pytree_node, unflatten
from tracer.signature import leaf_aval, presents
from tracer.transform_checks import check_cotangents, check_reduce_axes, check_tangent_dtypes


def _trace_fun(fun, args, has_aux=False, where="vjp", wrt=None):
    """Trace fun(*args) -> (graph, leaves, in_tree, out_tree, aux_tree, captured).

    Graph inputs are the argument leaves then captured outer values; outputs are the
    result leaves then the aux leaves. The trace knows the leaves' values, so `fun` may
    branch on its arguments' values when they are concrete (tracer.concrete); `wrt`
    flags the differentiated leaves (default all)."""
    leaves, in_tree = flatten(list(args))
    trees = {}

    def flat_fun(*xs):
        out = fun(*unflatten(in_tree, xs))
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                got = (f"a {type(out).__name__} of {len(out)} elements"
                       if isinstance(out, (tuple, list)) else f"a {type(out).__name__}")
                raise GradientTypeError(f"expected function with aux output to return a "
                                        f"two-element tuple, but got {got}: {where}"
                                        f"(has_aux=True) needs the function to return a "
                                        f"pair (output, aux)")
            out, aux = out
        outs, trees["out"] = flatten(out)
        aux_leaves, trees["aux"] = flatten(aux)
        return outs + aux_leaves
    known = Known(leaves, [True] * len(leaves) if wrt is None else wrt)
    graph, captured = trace_flat(flat_fun, [leaf_aval(x, where) for x in leaves], known)
    return graph, leaves, in_tree, trees["out"], trees["aux"], captured


def _as_dtype(x, dtype):
    if is_float0(x):            # the cotangent of an int or bool output, as JAX's
        return np.zeros(x.shape, dtype)
    if isinstance(x, Tracer):
        return tnp.astype(x, dtype)
    return np.asarray(x, dtype)


class Linear:
    """vjp's pullback and linearize's f_jvp: `apply(residuals, *args)`, a graph evaluated
    on the forward pass's residual arrays. A pytree whose leaves are those residuals (as
    JAX's), so it can be passed into and returned from jit and vmap, and flattened."""

    def __init__(self, apply, residuals):
        self.apply, self.residuals = apply, list(residuals)

    def __call__(self, *args):
        return self.apply(self.residuals, *args)

    def __repr__(self):
        return f"Linear({self.apply.__name__}, {len(self.residuals)} residuals)"


register_pytree_node(Linear, lambda f: (f.residuals, f.apply),
                     lambda apply, residuals: Linear(apply, residuals))


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(out, vjp_fn) or (out, vjp_fn, aux); vjp_fn(cotangent) returns one tuple entry per
    primal. The forward pass runs now; vjp_fn (a `Linear`) runs only the backward part.
    Of a jitted `fun`, both run compiled (_jitted)."""
    check_reduce_axes(reduce_axes, "vjp")
    forward = _jitted(fun, _vjp_of, (has_aux,))
    if forward is not None:
        out = forward(*primals)
        return (out[0], _compiled_pullback(out[1], fun.backend)) + tuple(out[2:])
    graph, leaves, in_tree, out_tree, aux_tree, captured = _trace_fun(fun, primals, has_aux)
    n_in, n_out, n_all = len(leaves) + len(captured), num_leaves(out_tree), len(graph.outvars)
    wrt = [True] * len(leaves) + [False] * len(captured)
    fwd, bwd = partition(vjp_graph(graph, wrt, n_out, Known(leaves + captured)), n_in,
                         n_all)
    vals = eval_graph(fwd, leaves + captured)
    outs, aux, residuals = vals[:n_out], vals[n_out:n_all], vals[n_all:]
    out_avals = [v.aval for v in graph.outvars[:n_out]]
    in_avals = [v.aval for v in graph.invars[:len(leaves)]]

    name = getattr(fun, "__name__", "function")

    def vjp_fn(residuals, *cotangent):
        if len(cotangent) != 1:
            raise GradientTypeError(
                f"The function returned by `jax.vjp` applied to {name} was called with "
                f"{len(cotangent)} arguments, but functions returned by `jax.vjp` must be "
                f"called with a single argument corresponding to the single value returned "
                f"by the function being differentiated (even if that returned value is a "
                f"tuple or other container): call vjp_fn(cotangent), e.g. vjp_fn((ct0, "
                f"ct1)) for a function returning a pair")
        cts = check_cotangents(name, cotangent[0], out_tree, out_avals)
        grads = eval_graph(bwd, residuals + [_as_dtype(c, a.dtype)
                                             for c, a in zip(cts, out_avals)])
        return tuple(unflatten(in_tree, [tangent_like(g, a) for g, a in
                                         zip(grads, in_avals)]))
    out = unflatten(out_tree, outs)
    pullback = Linear(vjp_fn, residuals)
    return (out, pullback, unflatten(aux_tree, aux)) if has_aux else (out, pullback)


def _jitted(fun, transform, options):
    """The jitted `transform(fun's function, *options)` of a jitted `fun` without static
    arguments called outside any trace (Jitted.transformed), else None: as JAX compiles
    vjp's and jvp's passes of a jitted function, which op by op through the interpreter
    took 5-8x the compiled time (examples/bench_jit_in_loop.py's vjp form)."""
    transformed = getattr(fun, "transformed", None)
    if transformed is None or getattr(fun, "static_argnums", ()) or getattr(
            fun, "static_argnames", ()):
        return None
    return transformed(transform, options)


def _vjp_of(fun, has_aux):
    def forward(*primals):
        return vjp(fun, *primals, has_aux=has_aux)
    forward.__name__ = f"vjp_{getattr(fun, '__name__', 'function')}"
    return forward


def _jvp_of(fun, has_aux, n):
    def push(*args):
        return jvp(fun, args[:n], args[n:], has_aux=has_aux)
    push.__name__ = f"jvp_{getattr(fun, '__name__', 'function')}"
    return push


def _compiled_pullback(pullback, backend):
    """`pullback` (made by a jitted forward pass: its residuals are that call's outputs,
    its apply function the one that trace made) with its backward pass jitted too, on the
    forward pass's `backend`: one jitted function per forward trace, kept on its apply
    function (so it lives as long)."""
    apply = pullback.apply
    if not hasattr(apply, "jitted"):
        from tracer.jit import jit

        def backward(residuals, *ct):
            return apply(residuals, *ct)
        apply.jitted = jit(backward, backend=backend)
    return Linear(apply.jitted, pullback.residuals)


def _argnums(argnums, args, where, allow_int=False, holomorphic=False):
    """argnums as a tuple of non-negative ints; checks every differentiated leaf is float
    (or, with allow_int, int or bool), and that holomorphic is False."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    top = max((i for i in nums if isinstance(i, int)), default=-1)
    if top >= len(args):        # JAX's words, for a missing positional argument
        raise GradientTypeError(f"differentiating with respect to argnums={argnums} "
                                f"requires at least {top + 1} positional arguments to be "
                                f"passed by the caller, but got only {len(args)} "
                                f"positional arguments. {where}: pass the differentiated "
                                f"arguments positionally, not as keywords")
    for i in nums:
        if not isinstance(i, int) or not -len(args) <= i < len(args):
            raise GradientTypeError(f"{where}: argnums={argnums} but the function got "
                                    f"{len(args)} positional arguments")
    nums = tuple(i % len(args) for i in nums)
    dtypes = [(i, leaf_aval(x, where).dtype) for i in nums for x in flatten(args[i])[0]]
    if holomorphic:
        got = f", but got {dtypes[0][1]}" if dtypes else ""
        raise DTypeError(f"{where.split('(')[0]} with holomorphic=True requires inputs with "
                         f"complex dtype{got}; this project has no complex dtypes, so "
                         f"{where} cannot differentiate holomorphically (leave "
                         f"holomorphic=False)")
    for i, dt in dtypes:
        if dtype_kind(dt) != "f" and not allow_int:
            raise DTypeError(f"grad requires real- or complex-valued inputs (input dtype "
                             f"that is a sub-dtype of np.inexact), but got {dt.name}. "
                             f"{where}: argument {i} has dtype {dt}; grad needs float "
                             f"inputs (cast with astype(float32)), or leave it out of "
                             f"argnums, or pass allow_int=True (its gradient is float0)")
    return nums


def tangent_like(t, aval):
    """`t` as the tangent or cotangent of a value of type `aval`: float0 zeros of its
    shape unless it is a float (inside a trace too: a float0 is a constant)."""
    return t if dtype_kind(aval.dtype) == "f" else zeros(aval.shape)


def partial_args(fun, args, nums, kwargs):
    """fun as a function of args[nums] only (the others and kwargs fixed), and those."""
    def g(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return fun(*full, **kwargs)
    return g, tuple(args[i] for i in nums)


_GRAD_DOC = ("Gradient of {fun} with respect to positional argument(s) {argnums}. Takes "
             "the same arguments as {fun} but returns the gradient, which has the same "
             "shape as the arguments at positions {argnums}.")
_VALUE_AND_GRAD_DOC = ("Value and gradient of {fun} with respect to positional argument(s) "
                       "{argnums}. Takes the same arguments as {fun} but returns a "
                       "two-element tuple where the first element is the value of {fun} "
                       "and the second element is the gradient, which has the same shape "
                       "as the arguments at positions {argnums}.")


def _has_axes(x):
    """x is an array of rank >= 1; a class (np.ndarray's `ndim` is a descriptor) is not."""
    return not isinstance(x, type) and np.ndim(x) > 0


def _value_and_grad(fun, argnums, has_aux, with_value, holomorphic, allow_int, reduce_axes):
    """Keyword arguments, and positional arguments outside argnums whose leaves are all
    scalars (sizes, axes, counts, flags), reach fun as they are (as JAX), so shapes may
    take them. Other undifferentiated arrays stay graph inputs, since a constant would be
    copied into the graph on every call; fun sees their values as any traced value's
    (tracer.concrete)."""
    name = getattr(fun, "__name__", "function")
    where = f"grad({name})"
    check_reduce_axes(reduce_axes, where)

    def value_and_grad_f(*args, **kwargs):
        nums = _argnums(argnums, args, where, allow_int, holomorphic)
        traced = [i for i, a in enumerate(args)
                  if i in nums or any(_has_axes(x) for x in flatten(a)[0])]
        f, diff = partial_args(fun, args, traced, kwargs)
        arg_trees = [flatten(args[i])[1] for i in traced]
        wrt = [i in nums for i, t in zip(traced, arg_trees) for _ in range(num_leaves(t))]
        graph, leaves, in_tree, out_tree, aux_tree, captured = _trace_fun(f, diff, has_aux,
                                                                          "grad", wrt)
        out = graph.outvars[0] if graph.outvars else None
        if num_leaves(out_tree) != 1 or out.aval.shape != ():
            n = num_leaves(out_tree)
            got, ours = ((f"was a pytree of {n} arrays", f"{n} outputs") if n != 1 else
                         (f"had shape: {out.aval.shape}", str(out.aval.strip_weak())))
            raise GradientTypeError(f"Gradient only defined for scalar-output functions. "
                                    f"Output {got}. {where}: the function must return a "
                                    f"float scalar, got {ours}. For non-scalar outputs use "
                                    f"vjp(f, *args) and call vjp_fn with a cotangent.")
        if dtype_kind(out.aval.dtype) != "f":
            raise GradientTypeError(f"grad requires real-valued outputs (output dtype that "
                                    f"is a sub-dtype of np.floating), but got "
                                    f"{out.aval.dtype.name}. {where}: the function must "
                                    f"return a float scalar, got {out.aval}; cast it, e.g. "
                                    f"out.astype(float32)")
        wrt += [False] * len(captured)
        check_differentiable(graph, wrt)
        n_aux = len(graph.outvars) - 1

        def joint(*xs):
            seed = [tnp.ones((), out.aval.dtype)] + [None] * n_aux
            outs, grads = backward(graph, xs, seed, wrt)
            return (outs if with_value else outs[1:]) + grads
        g, _ = trace_flat(joint, graph.in_avals, Known(leaves + captured))
        vals = eval_graph(dce(cse(g)), leaves + captured)
        if with_value:
            value, vals = vals[0], vals[1:]
        aux = vals[:n_aux]
        diff_avals = [v.aval for v, w in zip(graph.invars, wrt) if w]
        grads = iter([tangent_like(g, a) for g, a in zip(vals[n_aux:], diff_avals)])
        by_position = {i: unflatten(t, [next(grads) for _ in range(num_leaves(t))])
                       for i, t in zip(traced, arg_trees) if i in nums}
        per_arg = tuple(by_position[i] for i in nums)      # in the order asked, as JAX
        grad_out = per_arg[0] if isinstance(argnums, int) else per_arg
        if with_value:
            return ((value, unflatten(aux_tree, aux)) if has_aux else value), grad_out
        return (grad_out, unflatten(aux_tree, aux)) if has_aux else grad_out
    kind = "value_and_grad" if with_value else "grad"
    doc = (_VALUE_AND_GRAD_DOC if with_value else _GRAD_DOC).replace("{argnums}", str(argnums))
    either = compiled_when_jitted(fun, _value_and_grad, (argnums, has_aux, with_value,
                                                         holomorphic, allow_int, ()),
                                  value_and_grad_f)
    return presents(either, fun, f"{kind}_{name}", doc)


def compiled_when_jitted(fun, transform, options, eager):
    """`eager`, an eager transform of `fun`; when `fun` is jitted and called outside any
    trace, the jitted `transform(f, *options)` of its function instead (one per transform
    and options, kept with f's jit cache), as JAX compiles the forward and backward passes
    of a jitted function: run by `eager`, they would go op by op through the interpreter."""
    transformed = getattr(fun, "transformed", None)
    if transformed is None:
        return eager

    def either(*args, **kwargs):
        return (transformed(transform, options) or eager)(*args, **kwargs)
    return either


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function computing (fun(*args), gradient wrt args[argnums]); with has_aux,
    ((value, aux), gradient). argnums may be an int or a tuple (then a tuple of grads).
    Keywords as grad's."""
    return _value_and_grad(fun, argnums, has_aux, True, holomorphic, allow_int, reduce_axes)


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """Gradient of a float-scalar-valued function wrt args[argnums] (the value itself is
    not computed unless the gradient needs it); with has_aux, (gradient, aux).
    holomorphic=True raises (no complex dtypes here); with allow_int, an int or bool
    argument's gradient is float0 zeros of its shape, as in JAX (under jit and vmap too).
    reduce_axes must be () (as JAX, which deprecated it)."""
    return _value_and_grad(fun, argnums, has_aux, False, holomorphic, allow_int, reduce_axes)


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), J @ tangents), by transposing the reverse-mode graph; with has_aux
    (fun returns (output, aux)), (output, J @ tangents, aux). The tangent of an int or
    bool output is float0 zeros, as JAX's.

    The pullback ct -> J^T ct is linear in ct, so its VJP with respect to ct, evaluated at
    any ct (zeros), is J: differentiating the pullback once more gives forward mode from
    the same gradient registry (built-in, overridden, or custom)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise GradientTypeError(f"primal and tangent arguments to jax.jvp must be tuples or "
                                f"lists; found {type(primals).__name__} and "
                                f"{type(tangents).__name__}. jvp: pass one entry per "
                                f"argument of the function, e.g. jvp(f, (x,), (t,))")
    p_leaves, p_tree = flatten(primals)      # checked before fun runs, as JAX's
    t_leaves, t_tree = flatten(tangents)
    if p_tree != t_tree:
        raise GradientTypeError(f"primal and tangent arguments to jax.jvp must have the same "
                                f"tree structure; primals have tree structure {p_tree} "
                                f"whereas tangents have tree structure {t_tree}. jvp: pass "
                                f"one tangent per primal leaf, in a container of the same "
                                f"type (tuple or list)")
    check_tangent_dtypes("jvp", [leaf_aval(x, "jvp").dtype for x in p_leaves], t_leaves)
    for p, t in zip(p_leaves, t_leaves):
        if np.shape(p) != np.shape(t):
            raise GradientError(f"jvp called with different primal and tangent shapes; got "
                                f"primal shape {np.shape(p)} and tangent shape "
                                f"{np.shape(t)}: jvp: a tangent has its primal's shape")
    jitted = _jitted(fun, _jvp_of, (has_aux, len(primals)))
    if jitted is not None:
        return jitted(*primals, *tangents)
    graph, leaves, in_tree, out_tree, aux_tree, captured = _trace_fun(fun, primals, has_aux,
                                                                      "jvp")
    n = len(leaves) + len(captured)
    in_dtypes = [leaf_aval(x, "jvp").dtype for x in leaves]
    wrt = [dtype_kind(dt) == "f" for dt in in_dtypes] + [False] * len(captured)
    check_differentiable(graph, wrt)
    out_avals = [v.aval.strip_weak() for v in graph.outvars[:num_leaves(out_tree)]]
    with replaying():       # (push runs the primal graph, and its debug callbacks, once)
        pullback, _ = trace_flat(lambda *a: backward(graph, a[:n], a[n:], wrt)[1],
                                 graph.in_avals + out_avals, Known(leaves + captured))
    pullback = dce(cse(pullback))
    wrt_ct = [False] * n + [True] * len(out_avals)
    check_differentiable(pullback, wrt_ct)

    def push(*a):
        primal, tans = list(a[:n]), list(a[n:])
        zero_cts = [tnp.zeros(av.shape, av.dtype) for av in out_avals]
        tangents_out = backward(pullback, primal + zero_cts, tans, wrt_ct)[1]
        return eval_graph(graph, primal) + tangents_out
    float_avals = [v.aval.strip_weak() for v, w in zip(graph.invars, wrt) if w]
    g, _ = trace_flat(push, graph.in_avals + float_avals)
    tans = [t for t, w in zip(t_leaves, wrt) if w]
    vals = eval_graph(dce(cse(g)), leaves + captured + tans)
    k, n_all = len(out_avals), len(graph.outvars)
    tangent_out = unflatten(out_tree, [tangent_like(t, a) for t, a in
                                       zip(vals[n_all:], out_avals)])
    out = unflatten(out_tree, vals[:k])
    return (out, tangent_out, unflatten(aux_tree, vals[k:n_all])) if has_aux else (
        out, tangent_out)

