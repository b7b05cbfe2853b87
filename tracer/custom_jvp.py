"""JAX's custom_jvp, on this project's reverse-mode core.

A JVP rule is linear in the tangents, so its transpose is the VJP rule: the vjp of
`tangents -> rule(primals, tangents)[1]`, which tracer.vjp computes from the rule's own
traced ops. custom_jvp is therefore a custom_vjp whose backward is that vjp: reverse mode
runs the transposed rule, forward mode (jvp transposes every gradient) gets the rule
back, and both differentiate again. Under differentiation the output is the rule's primal
output, as in JAX; called otherwise, the function runs as it is.
"""
import functools
import inspect
import threading

from ir.errors import GradientError
from tracer import numpy as tnp
from tracer.custom import custom_vjp
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
    `(primal_out, tangent_out)` (with nondiff_argnums, `jvp(*nondiff_args, primals,
    tangents)`), or `f.defjvps(*jvps)` with one `jvp_i(g_i, primal_out, *primals)` per
    argument (None: no dependence)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.__name__ = getattr(fun, "__name__", "custom_jvp")
        self.fun, self.nondiff_argnums, self.jvp = fun, tuple(nondiff_argnums), None

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
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
        if kwargs:
            args = inspect.signature(self.fun).bind(*args, **kwargs).args
        if self.jvp is None:
            raise GradientError(f"custom_jvp function {self.__name__} has no rule: call "
                                f"{self.__name__}.defjvp(jvp) first")
        if self in _in_rule.functions:
            return self.fun(*args)
        fixed_at = sorted({i % len(args) for i in self.nondiff_argnums})
        fixed = [args[i] for i in fixed_at]
        moving = [a for i, a in enumerate(args) if i not in fixed_at]

        def call(*xs):
            xs = iter(xs)
            return self.fun(*[args[i] if i in fixed_at else next(xs)
                              for i in range(len(args))])

        def fwd(*primals):
            zeros = tree_map(tnp.zeros_like, primals)
            return self._rule(fixed, primals, zeros)[0], primals

        def bwd(primals, g):
            zeros = tree_map(tnp.zeros_like, primals)
            _, pullback = vjp(lambda *t: self._rule(fixed, primals, t)[1], *zeros)
            return pullback(g)
        call.__name__ = self.__name__
        return custom_vjp(call).defvjp(fwd, bwd)(*moving)
