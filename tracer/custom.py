"""Custom gradients: `custom_vjp` (JAX) and `custom_grad` (TensorFlow.js).

Both become one `custom_call` node whose `body` region is the traced primal graph (the
function's outputs only: what runs when nothing differentiates it) and whose `rule` attr
holds the forward graph, whose outputs are the function's outputs followed by residuals
(values the backward needs), and a backward callback returning one gradient (or None) per
argument leaf. autodiff re-emits the node with the forward graph as its body when it
differentiates it (custom_call's differentiable form), and the registered gradient of
`custom_call` calls the callback instead of differentiating the forward graph. The
callback runs on traced values, so a backward written with tracer.numpy ops is
differentiated again by grad(grad(...)) and transposed by jvp like any other gradient:
one rule serves both modes (jvp is exact when the backward is linear in the cotangent, as
a true VJP is). The numpy kernel (lowering.numpy_control) evaluates the body; the llvm
lowering and the interpreter inline it.
"""
import functools
import inspect
import threading

import numpy as np

import registry
from ir import Graph, dce
from ir.errors import ArgumentError, ArgumentValueError, GradientError
from tracer import core, sources
from tracer import numpy as tnp
from tracer.autodiff import backward, check_differentiable, partition
from tracer.concrete import Known
from tracer.core import eval_graph, run_kernel, trace_flat
from tracer.lax._regions import taking
from tracer.pytree import flatten, num_leaves, unflatten
from tracer.signature import UNSET, leaf_aval, static_spec
from tracer.tree_util import tree_map
from tracer.vmap import batch_graph, batch_size, to_dim, vmap


class CustomRule:
    """The `rule` attr of a custom_call node (hashed by identity, printed by name).

    forward: (argument leaves, captured outer values) -> the n_out outputs, then the
    computed residuals. backward(node inputs, computed residuals, cotangents of the
    outputs) -> one gradient or None per argument leaf (captured values get none:
    autodiff refuses to differentiate through them)."""

    def __init__(self, name, forward, n_out, n_args, backward):
        self.name, self.forward, self.n_out, self.n_args = name, forward, n_out, n_args
        self.backward = backward

    def __repr__(self):
        return self.name


def _emit(name, leaves, out_tree, primal, fwd, backward):
    """Run or emit the custom_call node; returns the function's outputs as a pytree.

    `primal` and `fwd` are (graph, captured) pairs: the primal graph maps (leaves,
    captured) to the outputs, the forward graph to (outputs, residuals), and
    `backward(residuals, cts)` returns one gradient per leaf. Residuals that are just
    inputs are not copied out of the node: the backward reads them from its inputs."""
    n, n_out = len(leaves), num_leaves(out_tree)
    captured = list(primal[1]) + [x for x in fwd[1] if all(x is not y for y in primal[1])]
    primal_g, fwd_g = (taking(g, n, cap, captured) for g, cap in (primal, fwd))
    pos = {id(v): i for i, v in enumerate(fwd_g.invars)}
    res = fwd_g.outvars[n_out:]
    fwd_g = Graph(fwd_g.invars, fwd_g.outvars[:n_out] + [r for r in res if id(r) not in pos],
                  fwd_g.nodes, fwd_g.constvars, fwd_g.consts)

    def node_backward(inputs, computed, cts):
        it = iter(computed)
        return backward([inputs[pos[id(r)]] if id(r) in pos else next(it) for r in res], cts)
    rule = CustomRule(name, fwd_g, n_out, n, node_backward)
    inputs = list(leaves) + captured
    if core.innermost_trace(inputs) is None:     # concrete: nothing to differentiate
        outs = eval_graph(primal_g, inputs)
    else:
        outs = run_kernel("custom_call", inputs, {"body": primal_g, "rule": rule})
    return unflatten(out_tree, list(outs))


def _leaf_grads(name, grads, in_tree, avals):
    """Validate per-argument gradients against the arguments; one per leaf (or None)."""
    n_args = len(in_tree[1])
    if not isinstance(grads, (tuple, list)) or len(grads) != n_args:
        got = (f"{len(grads)} values" if isinstance(grads, (tuple, list))
               else type(grads).__name__)
        raise GradientError(f"{name}: the backward must return a tuple with one gradient "
                            f"(or None) per argument: {n_args} expected, got {got}")
    flat = []
    for i, (g, sub) in enumerate(zip(grads, in_tree[1])):
        if g is None:
            flat += [None] * num_leaves(sub)
            continue
        leaves, tree = flatten(g)
        if tree != sub:
            raise GradientError(f"{name}: the gradient of argument {i} has structure "
                                f"{tree}, but the argument has {sub}")
        flat += leaves
    for i, (g, a) in enumerate(zip(flat, avals)):
        shape = None if g is None else tuple(g.shape if hasattr(g, "shape") else np.shape(g))
        if g is not None and shape != a.shape:
            raise GradientError(f"{name}: the backward returned a gradient of shape {shape} "
                                f"for an argument leaf of shape {a.shape} (leaf {i})")
    return flat


def nondiff_positions(fun, nums, names, where):
    """The positions of fun's `nondiff_argnums` and `nondiff_argnames` (names completed
    through fun's signature, as JAX's): a name must be a positional parameter, since
    calls bind every argument to a position; a position past the parameters or a name of
    none is a ValueError here (JAX ignores the name and fails at the call)."""
    positions, _ = static_spec(fun, where, nums or UNSET, names or UNSET, "nondiff")
    params = _params(fun)
    lost = sorted(n for n in ((names,) if isinstance(names, str) else names)
                  if n not in params)
    if lost:
        raise ArgumentValueError(f"{where}: nondiff_argnames {lost} are not positional "
                                 f"parameters of {getattr(fun, '__name__', fun)}; arguments "
                                 f"are bound to positions, so name positional ones")
    return positions


def _params(fun):
    try:
        ps = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def bind_positional(fun, args, kwargs, where):
    """The call's arguments as positions, defaults filled in (JAX's resolve_kwargs): a
    keyword-only argument is a TypeError, as in JAX."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentError(f"{where}: the arguments could not be bound to {fun}'s "
                            f"parameters: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise ArgumentError(f"{where}: the keyword arguments {sorted(bound.kwargs)} could "
                            f"not be resolved to positions (keyword-only parameters); "
                            f"pass them positionally or close over them")
    return bound.args


def split_nondiff(positions, args, where, fix=None):
    """(sorted fixed positions, their values, the other arguments, merge(others) -> all
    arguments) for a call with `args` (negative positions count from the end); `fix`, if
    given, replaces each fixed value first."""
    n = len(args)
    bad = [i for i in positions if not -n <= i < n]
    if bad:
        raise ArgumentValueError(f"{where}: nondiff_argnums {bad} are out of range for a "
                                 f"call with {n} positional arguments")
    fixed = sorted({i % n for i in positions})
    if fix is not None:
        args = [fix(a) if i in fixed else a for i, a in enumerate(args)]
    moving = [a for i, a in enumerate(args) if i not in fixed]

    def merge(xs):
        it = iter(xs)
        return [args[i] if i in fixed else next(it) for i in range(n)]
    return fixed, [args[i] for i in fixed], moving, merge


def known_value(x):
    """`x` as JAX would hold it if not a Tracer there: an array as it is, and a value an
    eager grad traces without differentiating it, its array (to JAX a concrete array);
    None for any other traced value (under jit or vmap, or carrying a gradient)."""
    if not isinstance(x, core.Tracer):
        return x
    known = x._trace.known
    return None if known is None or known.carries_gradient(x) else known.value(x)


def _nondiff_value(x, where):
    """A custom_vjp nondiff leaf: a traced value is JAX's UnexpectedTracerError."""
    value = known_value(x)
    if value is None:
        raise ArgumentError(
            f"{where}: an argument is marked non-differentiable (nondiff_argnums/"
            f"nondiff_argnames) but holds a traced value {x.aval}; as in JAX, those are for "
            f"Python values (functions, sizes): pass arrays as ordinary arguments (bwd may "
            f"return None for them)")
    return value


class _FwdTracing(threading.local):
    """The custom_vjp functions whose fwd this thread is tracing: a call of one of them
    inside its own fwd (JAX's `fwd = lambda x: (f(x), x)`) is its primal, not a node."""

    def __init__(self):
        self.functions = set()


_fwd_tracing = _FwdTracing()


class custom_vjp:
    """JAX's custom_vjp: `f.defvjp(fwd, bwd)`; fwd(*args) returns (out, residuals) and
    bwd(residuals, g) returns a tuple with one gradient (or None) per argument. Called
    outside differentiation, f runs `fun` itself; fwd and bwd run when f is
    differentiated (then the output is fwd's). fwd may call f.

    Arguments at `nondiff_argnums` / `nondiff_argnames` (Python values such as functions
    or sizes) are passed to fun and fwd as they are, and first to bwd:
    bwd(*nondiff_args, residuals, g) returns gradients of the other arguments only. As in
    JAX, a traced value there is an error (pass arrays as ordinary arguments)."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.__name__ = getattr(fun, "__name__", "custom_vjp")
        self.fun = fun
        self.fwd = self.bwd = None
        self.nondiff_argnums = nondiff_positions(fun, nondiff_argnums, nondiff_argnames,
                                                 f"custom_vjp({self.__name__})")

    def __reduce_ex__(self, protocol):
        """By name when it is what its module binds to that name (an @custom_vjp
        function, whose defvjp runs again on import), else with its functions."""
        return sources.global_name(self, self.fun) or super().__reduce_ex__(protocol)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args, **kwargs):
        name = f"custom_vjp({self.__name__})"
        if self.fwd is None:
            raise GradientError(f"custom_vjp function {self.__name__} has no rule: call "
                                f"{self.__name__}.defvjp(fwd, bwd) first")
        args = bind_positional(self.fun, args, kwargs, name)
        tracing = _fwd_tracing.functions
        if core.current_trace() is None or self in tracing:
            return self.fun(*args)
        _, static, args, merge = split_nondiff(self.nondiff_argnums, args, name, lambda a: (
            tree_map(lambda x: _nondiff_value(x, name), a)))
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        leaves, in_tree = flatten(list(args))
        avals = [leaf_aval(x, name) for x in leaves]
        trees = {}

        def flat_fun(*xs):
            outs, trees["out"] = flatten(fun(*merge(unflatten(in_tree, xs))))
            return outs

        def flat_fwd(*xs):
            tracing.add(self)
            try:
                pair = fwd(*merge(unflatten(in_tree, xs)))
            finally:
                tracing.discard(self)
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise GradientError(f"{name}: fwd must return a pair (output, residuals), "
                                    f"got {type(pair).__name__}")
            outs, tree = flatten(pair[0])
            if tree != trees["out"]:
                raise GradientError(f"{name}: fwd's output has structure {tree}, but the "
                                    f"function's has {trees['out']}")
            res, trees["res"] = flatten(pair[1])
            return outs + res
        primal = trace_flat(flat_fun, avals, Known(leaves, detached=True))
        forward = trace_flat(flat_fwd, avals, Known(leaves, detached=True))
        for p, f in zip(primal[0].out_avals, forward[0].out_avals):
            if p.strip_weak() != f.strip_weak():
                raise GradientError(f"{name}: fwd's output {f} does not match the "
                                    f"function's output {p}")

        def backward(residuals, cts):
            g = bwd(*static, unflatten(trees["res"], residuals), unflatten(trees["out"], cts))
            return _leaf_grads(name, g, in_tree, avals)
        return _emit(name, leaves, trees["out"], primal, forward, backward)


def custom_grad(fun):
    """TensorFlow.js's customGrad: fun(*xs) returns (value, grad_fn), and grad_fn(dy)
    returns one gradient per x (a bare gradient is accepted for a single x).

    fun and grad_fn are traced together once; the graph is split into the forward
    (xs -> value, residuals) and the backward (residuals, dy -> grads), so forward work
    that grad_fn reuses is computed once and saved, never recomputed. The primal is the
    forward graph without its residuals."""
    name = f"custom_grad({getattr(fun, '__name__', 'f')})"

    def wrapped(*xs):
        leaves, in_tree = flatten(list(xs))
        avals = [leaf_aval(x, name) for x in leaves]
        with core.new_trace(Known(leaves, detached=True)) as t:
            joint, out_tree, n_out, k, has_grad = _trace_pair(name, fun, t, in_tree, avals,
                                                              len(xs) == 1)
        n = len(leaves)
        inv = joint.invars   # ins, cts, captured: put the cotangents last to split there
        joint = Graph(inv[:n] + inv[n + k:] + inv[n:n + k], joint.outvars, joint.nodes,
                      joint.constvars, joint.consts)
        fwd, bwd = partition(joint, len(inv) - k, n_out)
        primal = dce(Graph(fwd.invars, fwd.outvars[:n_out], fwd.nodes, fwd.constvars,
                           fwd.consts))

        def backward(residuals, cts):
            it = iter(eval_graph(bwd, list(residuals) + list(cts)))
            return [next(it) if h else None for h in has_grad]
        return _emit(name, leaves, out_tree, (primal, t.captured), (fwd, t.captured),
                     backward)
    wrapped.__name__ = getattr(fun, "__name__", "custom_grad")
    return wrapped


def _trace_pair(name, fun, t, in_tree, avals, single):
    """custom_grad's joint graph of fun and its grad_fn in trace `t`, the output tree,
    the numbers of outputs and cotangents, and which inputs get a gradient. (A function
    of its own: no local of custom_grad's keeps the trace's values past it.)"""
    pair = fun(*unflatten(in_tree, [t.new_input(a) for a in avals]))
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and callable(pair[1])):
        raise GradientError(f"{name}: the function must return a pair (value, "
                            f"grad_fn), got {type(pair).__name__}")
    outs, out_tree = flatten(pair[0])
    cts = [t.new_input(t.lift(o).aval.strip_weak()) for o in outs]
    g = pair[1](unflatten(out_tree, cts))
    grads = _leaf_grads(name, (g,) if single and not isinstance(g, (tuple, list)) else g,
                        in_tree, avals)
    joint = t.to_graph(outs + [g for g in grads if g is not None])
    return joint, out_tree, len(outs), len(cts), [g is not None for g in grads]


def _custom_call_grad(dy, inputs, outputs, attrs):
    """The rule's backward for the outputs' cotangents. Residuals get cotangents only
    under higher-order differentiation (the backward used them); those flow back by
    ordinary autodiff of the forward graph, so fwd must be differentiable for that."""
    rule, g = attrs["rule"], attrs["body"]      # the forward graph (differentiable form)
    avals, n_out = g.out_avals, rule.n_out
    dys = list(dy) if isinstance(dy, tuple) else [dy]
    outs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    cts = [tnp.zeros(a.shape, a.dtype) if d is None else d for d, a in zip(dys, avals[:n_out])]
    grads = list(rule.backward(list(inputs), outs[n_out:], cts))
    grads += [None] * (len(inputs) - len(grads))
    if any(d is not None for d in dys[n_out:]):
        residuals = Graph(g.invars, g.outvars[n_out:], g.nodes, g.constvars, g.consts)
        wrt = [True] * rule.n_args + [False] * (len(inputs) - rule.n_args)
        check_differentiable(residuals, wrt)
        for i, more in enumerate(backward(residuals, list(inputs), dys[n_out:], wrt)[1]):
            grads[i] = more if grads[i] is None else grads[i] + more
    return grads


def _custom_call_batched(inputs, dims, attrs):
    """Batch the primal and forward regions (everything at dim 0) and wrap the backward
    in a vmap, so the batched function is still differentiated by its own rule."""
    size = batch_size(inputs, dims)
    xs = [to_dim(x, d, size, 0) for x, d in zip(inputs, dims)]
    body, rule = attrs["body"], attrs["rule"]
    zeros = [0] * len(xs)
    new_body = batch_graph(body, size, zeros)[0]
    forward = batch_graph(rule.forward, size, zeros)[0]

    def backward(ins, computed, cts):
        return vmap(lambda i, c, t: list(rule.backward(i, c, t)))(
            list(ins), list(computed), list(cts))
    out = run_kernel("custom_call", xs, {**attrs, "body": new_body, "rule": CustomRule(
        f"vmap({rule.name})", forward, rule.n_out, rule.n_args, backward)})
    return out, (0,) * len(out)


registry.declare_kernel("custom_call", shape=lambda *avals, body, rule: tuple(
    a.strip_weak() for a in body.out_avals), family="control_flow",
    gradient=_custom_call_grad, batching=_custom_call_batched,
    form=lambda attrs: {**attrs, "body": attrs["rule"].forward})
