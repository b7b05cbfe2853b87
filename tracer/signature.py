"""How one call's arguments become a jit cache key and the inputs of a trace, and what
its traced results may be.

Positional and keyword arguments are split into static ones (hashed into the key: their
values are compile-time constants) and dynamic ones (pytrees whose leaves are traced:
only their types enter the key). `static_argnums` and `static_argnames` name the same
parameter whichever way it is passed, as in JAX.
"""
import collections
import collections.abc
import inspect
import warnings

import numpy as np

from ir import ShapedArray, aval_of, check_dtype, scalar_array
from ir.errors import ArgumentError, ArgumentValueError, DTypeError
from tracer.core import Tracer, as_array
from tracer.float0s import is_float0
from tracer.pytree import flatten, leaf_paths, num_leaves, unflatten
from tracer.sources import user_stacklevel
from tracer.value_conversions import jax_type

_ndarray = np.ndarray


def _entries(value, kind, where, what):
    """`value` (one `kind` or an iterable of them; None: none, as JAX's) as a tuple, else
    ArgumentError."""
    entries = (() if value is None else (value,) if isinstance(value, kind) else
               tuple(value) if isinstance(value, collections.abc.Iterable) else None)
    if entries is None or not all(isinstance(v, kind) and not isinstance(v, bool)
                                  for v in entries):
        one = "an int" if kind is int else "a str"
        raise ArgumentError(f"{where}: {what} must be {one} or a sequence of them, got "
                            f"{value!r}")
    return entries


def check_function(fun, where):
    """`fun` is something a transformation can trace: a callable, not a staticmethod
    object (`@jit` above `@staticmethod`: put it below) nor a generator function, whose
    calls return a generator, not arrays; else a TypeError, as JAX's."""
    if isinstance(fun, staticmethod):
        raise ArgumentError(f"{where}: staticmethod arguments are not supported, got "
                            f"{fun}; apply @staticmethod above the transformation")
    if not callable(fun):
        raise ArgumentError(f"{where}: Expected a callable value, got {fun!r}")
    if inspect.isgeneratorfunction(fun):
        raise ArgumentError(f"{where}: Expected a function, got a generator function: "
                            f"{fun}; a traced function must return its results")


def presents(transformed, fun, name, doc):
    """`transformed` (a transform of `fun`) named `name`, with JAX's docstring `doc`
    ({fun}: fun's name) and `fun` as its `__wrapped__`, so that inspect.signature sees
    fun's parameters: jit(grad(f), static_argnames=...) then maps names to positions."""
    fun_name = getattr(fun, "__name__", type(fun).__name__)
    transformed.__name__ = name
    transformed.__doc__ = doc.format(fun=fun_name)
    transformed.__module__ = getattr(fun, "__module__", transformed.__module__)
    transformed.__wrapped__ = fun
    return transformed


def check_disjoint(where, static, donated):
    """No argument is both static and donated ((nums, names) pairs), as in JAX."""
    both = [f"position {i}" for i in sorted(set(static[0]) & set(donated[0]))]
    both += [repr(n) for n in sorted(static[1] & donated[1])]
    if both:
        raise ArgumentValueError(
            f"{where}: static_argnames and donate_argnames cannot intersect (nor "
            f"static_argnums and donate_argnums): {', '.join(both)} are in both; a static "
            f"argument is a compile-time constant, which has no buffer to donate")


class _Unset(tuple):
    """The default of jit's static_argnums/static_argnames (and donate_...): an empty
    tuple that says the argument was not given, so that one given explicitly, even empty,
    is taken as written (JAX's None default)."""
    __slots__ = ()

    def __repr__(self):
        return "()"


UNSET = _Unset()


def static_spec(fun, where, static_argnums, static_argnames, what="static"):
    """(positions, names) of fun's static (or, by `what`, donated...) parameters: when only
    one of the two is given (the other UNSET, or empty), completed from it through fun's
    signature where it has one; when both are, each as written (they may disagree, as in
    JAX). As in JAX, a
    position past the parameters or a name of none is a ValueError, unless *args or
    **kwargs take it."""
    nums = _entries(static_argnums, int, where, f"{what}_argnums")
    names = _entries(static_argnames, str, where, f"{what}_argnames")
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        if names and what == "donate":      # a keyword's position is unknown: as JAX
            raise ArgumentValueError(f"{where}: Getting the signature of function {fun!r} "
                                     f"failed. Pass donate_argnums instead of "
                                     f"donate_argnames.") from None
        return tuple(sorted(set(nums))), frozenset(names)
    P = inspect.Parameter
    kinds = {p.name: p.kind for p in sig.parameters.values()}
    positional = [n for n, k in kinds.items() if k in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    bad = [i for i in nums if not -len(positional) <= i < len(positional)]
    if bad and P.VAR_POSITIONAL not in kinds.values():
        raise ArgumentValueError(f"{where}: {what}_argnums={tuple(nums)} but the function "
                                 f"takes only {len(positional)} positional arguments")
    bad = [n for n in names if (kinds[n] not in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)
                                if n in kinds else P.VAR_KEYWORD not in kinds.values())]
    if bad:
        raise ArgumentValueError(
            f"{where}: {what}_argnames names {', '.join(map(repr, bad))}, which the "
            f"function {getattr(fun, '__name__', fun)}{sig} does not take by keyword; name "
            f"parameters it takes by keyword, or use {what}_argnums")
    if nums and names or static_argnums is not UNSET and static_argnames is not UNSET:
        return tuple(sorted(set(nums))), frozenset(names)   # both given: as written (JAX)
    nums = set(nums) | {positional.index(n) for n in names if n in positional}
    names = set(names) | {positional[i] for i in nums if -len(positional) <= i < len(
        positional)}
    return tuple(sorted(nums)), frozenset(names)


def static_key(v, where):
    """A hashable stand-in for a static argument. Lists, dicts and arrays are accepted,
    keyed by their contents at the call (JAX raises for them; programs written against
    this project pass them), so a later change to one cannot reach a cached entry."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(static_key(x, where) for x in v)
    if isinstance(v, dict):     # an OrderedDict's order and a defaultdict's factory count
        keys = list(v) if isinstance(v, collections.OrderedDict) else sorted(v)
        return (type(v), getattr(v, "default_factory", None)) + tuple(
            (k, static_key(v[k], where)) for k in keys)
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    try:
        hash(v)
    except TypeError:
        raise ArgumentValueError(f"Non-hashable static arguments are not supported: {where} "
                                 f"is a {type(v).__name__}; pass a tuple, list, array or "
                                 f"hashable value") from None
    return (type(v), v)


def leaf_aval(x, where):
    """The type of one dynamic leaf (an array, a Python or NumPy scalar, a tracer)."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, np.ma.MaskedArray):      # its mask would be silently dropped
        raise ArgumentValueError(f"{where}: numpy masked arrays are not supported as "
                                 f"arguments; pass arr.filled(value) (or the data and the "
                                 f"mask as two arrays)")
    if isinstance(x, np.ndarray):      # big-endian data is converted where it is used
        dt = x.dtype if x.dtype.isnative else x.dtype.newbyteorder("=")
        if dt.kind in "OUS":     # objects and strings: JAX's words, then which dtypes are
            try:
                check_dtype(dt, where)
            except DTypeError as e:
                raise DTypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX "
                                 f"type: {e}") from None
        return ShapedArray(x.shape, check_dtype(dt, where))
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        scalar_array(x, where)        # an int beyond int64 cannot be an argument
        return aval_of(x)
    if callable(getattr(x, "__jax_array__", None)):
        raise ArgumentValueError(
            f"{where}: Triggering __jax_array__() during abstractification is no longer "
            f"supported (as in JAX): register {type(x).__name__} as a pytree "
            f"(tracer.tree_util.register_pytree_node_class) or pass x.__jax_array__()")
    if not isinstance(x, (np.generic, type)) and hasattr(x, "shape") and hasattr(x, "dtype"):
        # an abstract argument (tracer.ShapeDtypeStruct) or another library's array
        reject_foreign_tracer(x, where)
        return ShapedArray(x.shape, check_dtype(np.dtype(x.dtype), where),
                           getattr(x, "weak_type", False))
    try:
        return ShapedArray(np.shape(x), as_array(x, where).dtype)
    except ArgumentError as e:
        raise ArgumentError(f"{e}. A non-array argument of a traced function must be "
                            f"static: list it in static_argnums or static_argnames, or "
                            f"register its type as a pytree (tracer.tree_util)") from None


def reject_foreign_tracer(x, where):
    """ArgumentError if x is JAX's tracer: its shape and dtype would pass for an array's,
    but it has no values; it comes from calling this project's function inside one of
    JAX's transformations (jax.make_jaxpr(tracer.linearize(f, x)[1]), jax.jit(...))."""
    cls = type(x)
    if cls.__module__.startswith("jax") and "Tracer" in cls.__name__:
        raise ArgumentError(f"{where}: got JAX's traced value {cls.__name__} "
                            f"({cls.__module__}); this project's functions take NumPy "
                            f"arrays, scalars and their own traced values: call them "
                            f"outside JAX's transformations, or use tracer's (tracer.jit, "
                            f"tracer.make_graph)")


def positional_names(fun):
    """The names of `fun`'s positional parameters ([] if it has no signature)."""
    try:
        return [p.name for p in inspect.signature(fun).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def leaf_names(fun, args, static, dyn_kw, paths=False):
    """Per dynamic leaf of a call, the name of the argument it is in: the parameter's name
    where `fun`'s signature gives it, else args[i]; a keyword argument's name. With
    `paths`, followed by the leaf's path in the argument, as JAX's ("x[0]['a']")."""
    params, names = positional_names(fun), []
    named = [(params[i] if i < len(params) else f"args[{i}]", a)
             for i, a in enumerate(args) if i not in static]
    for name, a in named + [(k, dyn_kw[k]) for k in sorted(dyn_kw)]:
        td = flatten(a)[1]
        names += [name + p for p in leaf_paths(td)] if paths else [name] * num_leaves(td)
    return names


class Call:
    """One call's arguments split by `static_spec`: `leaves` (dynamic, traced), `key`
    (the cache key) and `rebuild(values)`, the arguments with `values` for the leaves."""

    def __init__(self, where, fun, args, kwargs, nums, names):
        self.args, self.kwargs = args, kwargs
        n = len(args)       # a static position not given was passed by name, or defaulted
        self.static = sorted({i % n for i in nums if -n <= i < n})
        statics = tuple(static_key(args[i], f"{where} argument {i}") for i in self.static)
        statics += tuple((k, static_key(kwargs[k], f"{where} argument {k!r}"))
                         for k in sorted(kwargs) if k in names)
        self.dyn_kw = dyn_kw = {k: v for k, v in kwargs.items() if k not in names}
        self.leaves, self.tree = flatten([[a for i, a in enumerate(args)
                                           if i not in self.static], dyn_kw])
        key = [self.tree, statics]
        for i, x in enumerate(self.leaves):
            if type(x) is _ndarray:
                key.append((x.shape, x.dtype))
                continue
            try:        # a NumPy scalar keys as the 0-d array it becomes
                a = leaf_aval(x, where)
            except ArgumentError as e:     # JAX's words, then ours
                path = leaf_names(fun, args, self.static, dyn_kw, paths=True)[i]
                raise type(e)(f"Error interpreting argument to {where} as an abstract "
                              f"array. The problematic value is of type {type(x)} and was "
                              f"passed to the function at path {path}: "
                              f"{str(e).removeprefix(where + ': ')}") from None
            key.append((a.shape, a.dtype, True) if a.weak_type else (a.shape, a.dtype))
        self.key = tuple(key)

    def dynamic_args(self):
        """The positional arguments that are not static."""
        return [a for i, a in enumerate(self.args) if i not in self.static]

    def rebuild(self, values):
        """(args, kwargs) with the dynamic leaves replaced by `values` (e.g. tracers)."""
        dyn_args, dyn_kw = unflatten(self.tree, list(values))
        it = iter(dyn_args)
        args = [a if i in self.static else next(it) for i, a in enumerate(self.args)]
        return args, {**self.kwargs, **dyn_kw}


def check_returned(fun, outs, tree):
    """ArgumentError (a TypeError), in JAX's words then ours, for a result leaf that is
    not an array or a number (a function, an enum, a string...)."""
    for i, x in enumerate(outs):
        if isinstance(x, Tracer) or is_float0(x):
            continue
        try:
            as_array(x, "jit")
        except ArgumentError:
            code = getattr(fun, "__code__", None)
            src = (f"{getattr(fun, '__name__', fun)} at {code.co_filename}:"
                   f"{code.co_firstlineno}" if code is not None else repr(fun))
            path = leaf_paths(tree)[i]
            raise ArgumentError(f"function {src} traced for jit returned a value of type "
                                f"{type(x)}{f' at output component {path}' if path else ''}"
                                f", which is not a valid JAX type: a jitted function "
                                f"returns arrays and numbers only; keep other values "
                                f"outside it, or return them from a wrapper") from None


def donated_leaves(call, donate_argnums, donate_argnames, static_argnames):
    """The leaf numbers of the donated arguments (`call`: jit's Call, or the positional
    arrays), in the order Call flattens them: dynamic positional arguments, then keywords
    by sorted name."""
    if not (donate_argnums or donate_argnames):
        return ()
    args, static = (call.args, call.static) if isinstance(call, Call) else (call, ())
    kwargs = call.kwargs if isinstance(call, Call) else {}
    n = len(args)
    donate = {i % n for i in donate_argnums if -n <= i < n}
    parts = [(a, i in donate) for i, a in enumerate(args) if i not in static]
    parts += [(kwargs[k], k in donate_argnames) for k in sorted(kwargs)
              if k not in static_argnames]
    out, at = [], 0
    for a, donated in parts:
        count = len(flatten(a)[0])
        out.extend(range(at, at + count) if donated else ())
        at += count
    return tuple(out)


def warn_unusable_donations(graph):
    """JAX's warning for the donated inputs of `graph` (`graph.donated`) that no result
    can take (none left of the same shape and dtype): their buffers are not reused, as
    the user asked."""
    left = [(a.shape, a.dtype) for a in graph.out_avals]
    unusable = []
    for i in graph.donated:
        a = graph.invars[i].aval
        if (a.shape, a.dtype) in left:
            left.remove((a.shape, a.dtype))
        else:
            unusable.append(jax_type(a))
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}. No "
                      f"result has the shape and dtype of these donated arguments; drop "
                      f"them from donate_argnums/donate_argnames.", UserWarning,
                      stacklevel=user_stacklevel())
