"""Operators and array methods on traced values, delegating to tracer.numpy.

Arithmetic operators keep Python-scalar semantics: on weak (Python-scalar) operands they
give a weak result, as `2.0 * s` does for a Python float `s`; so a jitted function whose
argument is a Python float promotes exactly like the same function run eagerly.
"""
from ir.errors import ArgumentError
from tracer import numpy as tnp
from tracer.core import Tracer
from tracer.lax import bitcast
from tracer.numpy._base import mark_weak
from tracer.numpy.index_updates import At


def _python_like(f, swap=False):
    # an operator passes no ufunc keywords: call the function under tracer.numpy's
    # keyword wrapper (ufunc_keywords.with_ufunc_keywords), a frame less an operation
    f = getattr(f, "__wrapped__", f)
    if swap:
        return lambda self, other: mark_weak(f(other, self), self, other)
    return lambda self, *other: mark_weak(f(self, *other), self, *other)


_ARITHMETIC = {"add": tnp.add, "sub": tnp.subtract, "mul": tnp.multiply,
               "truediv": tnp.divide, "pow": tnp.power,
               # G1 (issue 11): integer division and bitwise operators
               "floordiv": tnp.floor_divide, "mod": tnp.mod, "and": tnp.bitwise_and,
               "or": tnp.bitwise_or, "xor": tnp.bitwise_xor, "lshift": tnp.left_shift,
               "rshift": tnp.right_shift}
_COMPARE = {"__lt__": tnp.less, "__le__": tnp.less_equal, "__gt__": tnp.greater,
            "__ge__": tnp.greater_equal, "__eq__": tnp.equal, "__ne__": tnp.not_equal}

_OPERATORS = {
    **{f"__{k}__": _python_like(f) for k, f in _ARITHMETIC.items()},
    **{f"__r{k}__": _python_like(f, swap=True) for k, f in _ARITHMETIC.items()},
    **{k: _python_like(f) for k, f in _COMPARE.items()},
    "__neg__": _python_like(tnp.negative), "__abs__": _python_like(tnp.abs),
    "__pos__": lambda x: x,
    "__invert__": _python_like(tnp.invert),
    "__divmod__": lambda self, other: tuple(mark_weak(r, self, other)
                                            for r in tnp.divmod(self, other)),
    "__rdivmod__": lambda self, other: tuple(mark_weak(r, self, other)
                                             for r in tnp.divmod(other, self)),
    "__round__": lambda self, ndigits=None: tnp.round(self, ndigits or 0),
    "__matmul__": tnp.matmul, "__rmatmul__": lambda self, other: tnp.matmul(other, self),
    "__getitem__": tnp.getitem,
    "sum": tnp.sum, "mean": tnp.mean, "max": tnp.max, "min": tnp.min, "prod": tnp.prod,
    "argmax": tnp.argmax, "argmin": tnp.argmin, "reshape": tnp.reshape,
    "astype": tnp.astype, "transpose": lambda x, *axes: tnp.transpose(
        x, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes or None),
    "squeeze": tnp.squeeze, "ravel": tnp.ravel, "flatten": tnp.ravel, "view": bitcast.view,
}

for _name, _fn in _OPERATORS.items():
    setattr(Tracer, _name, _fn)
Tracer.T = property(tnp.transpose)

# ---- G2 (issue 11): reduction, scan, sorting and shape methods ---------------------------
for _name in ("cumsum", "cumprod", "var", "std", "all", "any", "ptp", "argsort", "nonzero",
              "diagonal", "trace", "repeat", "swapaxes", "copy", "clip", "dot", "round", "conj",
              "real", "imag", "take", "sort"):
    setattr(Tracer, _name, getattr(tnp, _name))

# ---- functional updates, item assignment, and NumPy's own functions on traced values -----
Tracer.at = property(At)


def _setitem(self, key, _):
    raise ArgumentError(f"x[{key!r}] = ... on a traced value {self.aval}: traced values are "
                        f"immutable. Write x = x.at[{key!r}].set(value) instead (JAX's "
                        f"functional update; .add, .multiply, .min, .max too)")


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """np.sin(t), np.add(t, 1), np.add.reduce(t), np.subtract.outer(t, u) ... run
    tracer.numpy's function (or its .reduce/.accumulate/.outer: tracer/numpy/ufunc_keywords)."""
    name = ufunc.__name__
    if kwargs.pop("out", None) is not None:
        raise ArgumentError(f"numpy.{name}(..., out=...) on a traced value: traced values "
                            f"are immutable; use the result instead of out=")
    fn = getattr(tnp, name, None)
    if method != "__call__":
        fn = getattr(fn, method, None)
    if fn is None:
        raise ArgumentError(f"numpy.{name}{'' if method == '__call__' else '.' + method} "
                            f"has no tracer.numpy counterpart, so it cannot take a traced "
                            f"value; write it with tracer.numpy functions")
    return fn(*inputs, **kwargs)


def _array_function(self, func, types, args, kwargs):
    """np.sum(t), np.concatenate([t, u]), np.linalg.norm(t) ... run tracer.numpy's."""
    namespace = getattr(tnp, "linalg", None) if "linalg" in (func.__module__ or "") else tnp
    fn = getattr(namespace, func.__name__, None)
    if fn is None or fn is func:
        raise ArgumentError(f"numpy.{func.__name__} has no tracer.numpy counterpart, so it "
                            f"cannot take a traced value; write it with tracer.numpy "
                            f"functions (or compute it outside the traced function)")
    return fn(*args, **kwargs)


Tracer.__setitem__ = _setitem
Tracer.__array_ufunc__ = _array_ufunc
Tracer.__array_function__ = _array_function


def _no_sharding(self):
    # JAX's words (an AttributeError, so hasattr(x, "sharding") stays False), then ours
    raise AttributeError(f"The 'sharding' attribute is not available on traced array with "
                         f"shape {self.aval}. To query sharding information on tracers, JAX "
                         f"has `jax.typeof(x)`; tracer has no shardings on traced values: "
                         f"x.aval, x.shape and x.dtype give its type, and shard_map's "
                         f"in_specs say how an argument is split")


Tracer.sharding = property(_no_sharding)
