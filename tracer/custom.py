"""Custom gradients: `custom_vjp` (JAX) and `custom_grad` (TensorFlow.js).

Both become one `custom_call` node whose `rule` attr holds the traced forward graph and
a `backward(inputs, outputs, dy)` callback. The registered gradient of `custom_call` calls
that callback instead of differentiating the forward graph; forward mode transposes it
like any other gradient, so a backward written with ops also gives jvp and grad(grad).
The numpy kernel evaluates the forward graph; the llvm lowering inlines it.
"""
import registry
from ir.errors import GradientError
from tracer.core import eval_graph, run_kernel, trace_flat
from tracer.jit import _leaf_aval
from tracer.pytree import flatten, num_leaves, unflatten


class CustomRule:
    """Attr of a custom_call node; hashed by identity."""

    def __init__(self, name, graph, n_out, n_args, backward):
        self.name, self.graph, self.n_out, self.n_args = name, graph, n_out, n_args
        self.backward = backward

    def __repr__(self):
        return self.name


def _call(name, fwd, args, backward_factory):
    """Trace fwd(*args) -> (out, residuals), emit/run the custom_call, return out."""
    leaves, in_tree = flatten(list(args))
    trees = {}

    def flat(*xs):
        out, res = fwd(*unflatten(in_tree, xs))
        outs, trees["out"] = flatten(out)
        res_leaves, trees["res"] = flatten(res)
        return outs + res_leaves
    graph, captured = trace_flat(flat, [_leaf_aval(x, name) for x in leaves])
    n_out = num_leaves(trees["out"])
    rule = CustomRule(name, graph, n_out, len(leaves),
                      backward_factory(in_tree, trees["out"], trees["res"], len(leaves)))
    outs = run_kernel("custom_call", leaves + captured, {"rule": rule})
    return unflatten(trees["out"], list(outs)[:n_out])


def _flatten_grads(name, grads, args_tree, n_leaves, n_inputs):
    grads = grads if isinstance(grads, (tuple, list)) else (grads,)
    nargs = len(args_tree[1])
    if len(grads) != nargs:
        raise GradientError(f"{name}: backward returned {len(grads)} gradients for {nargs} "
                            f"arguments (return one per argument)")
    flat = []
    for g, sub in zip(grads, args_tree[1]):
        if g is None:
            flat += [None] * num_leaves(sub)
        else:
            leaves, tree = flatten(g)
            if tree != sub:
                raise GradientError(f"{name}: a gradient's structure {tree} does not match "
                                    f"its argument's {sub}")
            flat += leaves
    return flat + [None] * (n_inputs - n_leaves)


class custom_vjp:
    """JAX's custom_vjp: `f.defvjp(fwd, bwd)`; fwd returns (out, residuals) and
    bwd(residuals, g) returns one gradient per argument."""

    def __init__(self, fun):
        self.fun = fun
        self.fwd = self.bwd = None
        self.__name__ = getattr(fun, "__name__", "custom_vjp")
        self.__doc__ = fun.__doc__

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise GradientError(f"custom_vjp function {self.__name__} has no rule: call "
                                f"{self.__name__}.defvjp(fwd, bwd) first")
        name = f"custom_vjp({self.__name__})"
        bwd = self.bwd

        def factory(in_tree, out_tree, res_tree, n_leaves):
            def backward(inputs, outputs, dy):
                dys = dy if isinstance(dy, tuple) else (dy,)
                n_out = num_leaves(out_tree)
                res = unflatten(res_tree, list(outputs)[n_out:])
                g = bwd(res, unflatten(out_tree, list(dys)[:n_out]))
                return _flatten_grads(name, g, in_tree, n_leaves, len(inputs))
            return backward
        return _call(name, self.fwd, args, factory)


def custom_grad(fun):
    """TensorFlow.js's customGrad: fun(*xs) returns (value, grad_fn), and grad_fn(dy)
    returns one gradient per x. The backward re-runs fun on the node's inputs to get a
    grad_fn over the current trace's values (CSE merges the repeated forward work)."""
    name = f"custom_grad({getattr(fun, '__name__', 'f')})"

    def fwd(*xs):
        value, _ = fun(*xs)
        return value, None

    def factory(in_tree, out_tree, res_tree, n_leaves):
        def backward(inputs, outputs, dy):
            dys = dy if isinstance(dy, tuple) else (dy,)
            xs = unflatten(in_tree, list(inputs)[:n_leaves])
            _, grad_fn = fun(*xs)
            g = grad_fn(unflatten(out_tree, list(dys)[:num_leaves(out_tree)]))
            if len(in_tree[1]) == 1 and not isinstance(g, (tuple, list)):
                g = (g,)
            return _flatten_grads(name, g, in_tree, n_leaves, len(inputs))
        return backward

    def wrapped(*xs):
        return _call(name, fwd, xs, factory)
    wrapped.__name__ = getattr(fun, "__name__", "custom_grad")
    return wrapped


def _custom_call_impl(*args, rule):
    return tuple(eval_graph(rule.graph, list(args)))


registry.register_shape_rule("custom_call", lambda *avals, rule: tuple(rule.graph.out_avals))
registry.register_kernel("custom_call", "numpy", _custom_call_impl)
registry.register_gradient("custom_call", lambda dy, inputs, outputs, attrs:
                           attrs["rule"].backward(inputs, outputs, dy))
