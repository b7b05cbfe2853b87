"""JAX's custom_jvp, on this project's reverse-mode core.

A JVP rule is linear in the tangents, so its transpose is the VJP rule: the vjp of
`tangents -> rule(primals, tangents)[1]`, which tracer.vjp computes from the rule's own
traced ops. custom_jvp is therefore a custom_vjp whose backward is that vjp: reverse mode
runs the transposed rule, forward mode (jvp transposes every gradient) gets the rule
back, and both differentiate again. Under differentiation the output is the rule's primal
output, as in JAX; called otherwise, the function runs as it is.
"""
import functools
import threading

from ir.errors import ArgumentError, GradientError
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.custom import (bind_positional, custom_vjp, known_value, nondiff_positions,
                           split_nondiff)
from tracer.pytree import flatten, unflatten
from tracer.transforms import vjp
from tracer.tree_util import tree_map


class _InRule(threading.local):
    """The custom_jvp functions whose rule this thread is running: the rule's own call of
    the function (`primal_out = f(x)`) is the plain function, not another custom node."""

    def __init__(self):
        self.functions = set()


_in_rule = _InRule()


class custom_jvp:
    """JAX's custom_jvp: `f.defjvp(jvp)` with `jvp(primals, tangents)` returning
    `(primal_out, tangent_out)` (with nondiff_argnums or nondiff_argnames,
    `jvp(*nondiff_args, primals, tangents)`; those arguments may be traced, and get no
    gradient, as JAX stops it), or `f.defjvps(*jvps)` with one
    `jvp_i(g_i, primal_out, *primals)` per argument (None: no dependence)."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.__name__ = getattr(fun, "__name__", "custom_jvp")
        self.fun, self.jvp = fun, None
        self.nondiff_argnums = nondiff_positions(fun, nondiff_argnums, nondiff_argnames,
                                                 f"custom_jvp({self.__name__})")

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        if self.nondiff_argnums:
            raise ArgumentError(f"custom_jvp({self.__name__}).defjvps cannot be used with "
                                f"nondiff_argnums/nondiff_argnames (as in JAX): use defjvp")

        def jvp(primals, tangents):
            out = self.fun(*primals)
            terms = [rule(t, out, *primals) for rule, t in zip(jvps, tangents) if rule]
            if not terms:
                return out, tree_map(tnp.zeros_like, out)
            return out, functools.reduce(lambda a, b: tree_map(tnp.add, a, b), terms)
        self.defjvp(jvp)

    def _rule(self, fixed, primals, tangents):
        _in_rule.functions.add(self)
        try:
            return self.jvp(*fixed, tuple(primals), tuple(tangents))
        finally:
            _in_rule.functions.discard(self)

    def __call__(self, *args, **kwargs):
        name = f"custom_jvp({self.__name__})"
        args = bind_positional(self.fun, args, kwargs, name)
        if self.jvp is None:
            raise GradientError(f"custom_jvp function {self.__name__} has no rule: call "
                                f"{self.__name__}.defjvp(jvp) first")
        if self in _in_rule.functions:
            return self.fun(*args)
        at, fixed, moving, _ = split_nondiff(self.nondiff_argnums, args, name)
        leaves, tree = flatten(fixed)
        values = [known_value(x) for x in leaves]

        def nondiff(ts):
            """The nondiff arguments, their traced leaves `ts` (inputs of the node, so a
            later backward reads them) with no gradient, as JAX's stop_gradient."""
            it = iter(ts)
            return unflatten(tree, [run_kernel("stop_gradient", [next(it)]) if v is None else v
                                    for v in values])

        def call(ts, *xs):
            xs, given = iter(xs), iter(nondiff(ts))
            return self.fun(*[next(given) if i in at else next(xs) for i in range(len(args))])

        def fwd(ts, *primals):
            zeros = tree_map(tnp.zeros_like, primals)
            return self._rule(nondiff(ts), primals, zeros)[0], (ts, primals)

        def bwd(residuals, g):
            ts, primals = residuals
            zeros = tree_map(tnp.zeros_like, primals)
            _, pullback = vjp(lambda *t: self._rule(nondiff(ts), primals, t)[1], *zeros)
            return (None, *pullback(g))
        call.__name__ = self.__name__
        traced = [x for x, v in zip(leaves, values) if v is None]
        return custom_vjp(call).defvjp(fwd, bwd)(traced, *moving)
