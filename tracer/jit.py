"""`jit` and `make_graph`: trace once per input signature, optimize, lower, cache.

A signature is (pytree structure, per-leaf shape/dtype/weak type, static values). The
cache entry remembers which kernels its graph touched (including gradients consulted while
tracing) and their registry versions, so re-registering a kernel or gradient rebuilds
exactly the entries that used it. Called on traced values, a jitted function inlines its
graph into the caller's trace, which is how `grad(jit(f))` works.
"""
import functools

import numpy as np

import registry
from ir import ShapedArray, aval_of, check_dtype, cse, dce, fold_constants, scalar_array
from ir.errors import ArgumentError
from registry.tables import _epoch
from tracer import core
from tracer.core import Tracer, as_array, eval_graph, trace_flat
from tracer.pytree import LEAF, flatten, unflatten

DEFAULT_BACKEND = "llvm"
_ndarray = np.ndarray


def _plain_key(args):
    """The cache key of arguments that are all plain arrays: their shapes and dtypes
    (None if any is not a plain array)."""
    if len(args) == 1:
        a = args[0]
        return ((a.shape, a.dtype),) if type(a) is _ndarray else None
    key = tuple([(a.shape, a.dtype) for a in args if type(a) is _ndarray])
    return key if len(key) == len(args) else None


def _static_key(v, where):
    """A hashable stand-in for a static argument (lists and arrays are accepted)."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(_static_key(x, where) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple((k, _static_key(v[k], where)) for k in sorted(v))
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    try:
        hash(v)
    except TypeError:
        raise ArgumentError(f"{where}: static argument of type {type(v).__name__} is not "
                            f"hashable; pass a tuple, list, array or hashable value") from None
    return (type(v), v)


def _leaf_aval(x, where):
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, np.ndarray):
        return ShapedArray(x.shape, check_dtype(x.dtype, where))
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        scalar_array(x, where)        # an int beyond int64 cannot be an argument
        return aval_of(x)
    try:
        return ShapedArray(np.shape(x), as_array(x, where).dtype)
    except ArgumentError as e:
        raise ArgumentError(f"{e}. A non-array argument of a traced function must be "
                            f"static: list its position in static_argnums") from None


def optimize(graph):
    """The standard pipeline: fold constants, merge duplicates, drop dead nodes."""
    from lowering.interpreter import run_node

    def evaluate(node, values):
        return run_node(node, values) if registry.has_kernel(node.kernel, "numpy") else None
    return dce(cse(fold_constants(graph, evaluate)))


class _Entry:
    """`traced` is the graph as traced; `graph` its optimized form, made on first use
    (the llvm backend optimizes what it compiles itself, so a compiled entry may never
    need it)."""
    __slots__ = ("traced", "_graph", "out_tree", "single", "captured", "versions", "epoch",
                 "run", "lowered")

    @property
    def graph(self):
        if self._graph is None:
            self._graph = optimize(self.traced)
        return self._graph


class Jitted:
    """A jit-compiled function; call it like the original."""

    def __init__(self, fun, static_argnums=(), backend=None):
        functools.update_wrapper(self, fun)
        self.__name__ = getattr(fun, "__name__", type(fun).__name__)
        self.fun = fun
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
            raise ArgumentError(f"jit({self.__name__}): static_argnums must be an int or a "
                                f"sequence of ints, got {static_argnums!r}")
        self.static_argnums = tuple(sorted(set(nums)))
        self._plain = not self.static_argnums
        self.backend = registry.check_backend(backend) if backend else None
        self._cache = {}

    def _static_positions(self, nargs):
        """The static argument positions of a call with `nargs` arguments (negative
        static_argnums count from the end, as in JAX)."""
        for i in self.static_argnums:
            if not -nargs <= i < nargs:
                raise ArgumentError(f"jit({self.__name__}): static_argnums="
                                    f"{self.static_argnums} but only {nargs} positional "
                                    f"arguments were given")
        return sorted({i % nargs for i in self.static_argnums})

    def _split(self, args):
        """(dynamic leaves, their tree, static keys) of a call's arguments."""
        static = self._static_positions(len(args)) if self.static_argnums else ()
        statics = tuple(_static_key(args[i], f"jit({self.__name__}) argument {i}")
                        for i in static)
        leaves, tree = flatten([a for i, a in enumerate(args) if i not in static])
        return leaves, tree, statics

    def _signature(self, args):
        """(leaves, cache key)."""
        key = _plain_key(args) if self._plain else None
        if key is not None:
            return args, key
        leaves, tree, statics = self._split(args)
        key = [tree, statics]
        for x in leaves:
            if type(x) is _ndarray:
                key.append((x.shape, x.dtype))
            else:
                a = _leaf_aval(x, f"jit({self.__name__})")
                key.append((a.shape, a.dtype, a.weak_type))
        return leaves, tuple(key)

    def __call__(self, *args):
        # The hot path of every jitted call: plain arrays, no static arguments, a current
        # cache entry. Plain arrays are never traced values, so the entry runs compiled.
        if self._plain:
            entry = self._cache.get(_plain_key(args))
            if entry is not None and entry.epoch == _epoch[0]:
                outs = entry.run(args)
                return outs[0] if entry.single else unflatten(entry.out_tree, outs)
        return self._call(args)

    def _call(self, args):
        leaves, key = self._signature(args)
        entry = self._entry(key, args, leaves)
        if entry.captured or core._stack and core.innermost_trace(leaves) is not None:
            outs = eval_graph(entry.graph, list(leaves) + entry.captured)
        else:
            outs = entry.run(leaves)
        return outs[0] if entry.single else unflatten(entry.out_tree, outs)

    def _entry(self, key, args, leaves):
        """The cache entry for `key`, rebuilt if missing or stale."""
        entry = self._cache.get(key)
        if entry is None or entry.epoch != _epoch[0] and not self._fresh(entry):
            entry = self._build(key, args, leaves)
        return entry

    def _fresh(self, entry):
        if any(registry.version(k) != v for k, v in entry.versions.items()):
            return False
        entry.epoch = registry.epoch()
        return True

    def _trace(self, args, leaves):
        """Trace to a graph; returns (graph, out_tree, captured, touched kernels)."""
        static = self._static_positions(len(args)) if self.static_argnums else ()
        dyn_pos = [i for i in range(len(args)) if i not in static]
        tree = self._split(args)[1]
        out_tree = []

        def flat_fun(*tracers):
            dyn = unflatten(tree, tracers)
            full = list(args)
            for i, v in zip(dyn_pos, dyn):
                full[i] = v
            outs, td = flatten(self.fun(*full))
            out_tree.append(td)
            return outs

        touched = set()
        core._collectors.append(touched)
        try:
            graph, captured = trace_flat(flat_fun, [_leaf_aval(x, self.__name__) for x in leaves])
        finally:
            core._collectors.pop()    # LIFO; not remove(): equal sets would match
        return graph, out_tree[0], captured, touched

    def _build(self, key, args, leaves):
        graph, out_tree, captured, touched = self._trace(args, leaves)
        entry = _Entry()
        entry.traced, entry._graph = graph, None
        entry.out_tree = out_tree
        entry.single = out_tree == LEAF
        entry.versions = {k: registry.version(k) for k in touched}
        entry.epoch = registry.epoch()
        entry.lowered = None
        entry.captured = captured
        if captured:
            return entry    # closes over values of an enclosing trace: inline, never cache
        entry.run = self._lower(entry).run
        self._cache[key] = entry
        return entry

    def _lower(self, entry):
        if entry.lowered is None:
            backend = self.backend or DEFAULT_BACKEND
            if backend == "numpy":
                entry.lowered = InterpretedProgram(entry.graph)
            else:
                from lowering.llvm import compile_graph
                entry.lowered = compile_graph(entry.traced)
        return entry.lowered

    def lower(self, *args):
        """The lowered program for these arguments: `.graph`, `.as_text()`."""
        leaves, key = self._signature(args)
        return self._lower(self._entry(key, args, leaves))

    def __repr__(self):
        return f"<jit({getattr(self.fun, '__name__', self.fun)})>"


class InterpretedProgram:
    """The `numpy` backend's lowered form: the optimized graph, run by the interpreter."""
    backend = "numpy"

    def __init__(self, graph):
        self.graph = graph
        consts = {id(v) for v in graph.constvars}
        self._const_outs = [id(v) in consts for v in graph.outvars]

    def run(self, leaves):
        from lowering.interpreter import evaluate
        outs = evaluate(self.graph, [np.asarray(x, v.aval.dtype) if not isinstance(x, np.ndarray)
                                     else x for x, v in zip(leaves, self.graph.invars)])
        # a constant output is copied: the caller may mutate it, the cache must not change
        return [np.array(o) if c else o for o, c in zip(outs, self._const_outs)]

    def as_text(self):
        return str(self.graph)


def jit(fun=None, *, static_argnums=(), backend=None):
    """Compile `fun`: traced once per input signature, optimized, lowered, cached."""
    if fun is None:
        return lambda f: Jitted(f, static_argnums, backend)
    return Jitted(fun, static_argnums, backend)


def make_graph(fun, *, static_argnums=()):
    """`make_graph(f)(*args)` is the traced ir.Graph of f (like jax.make_jaxpr)."""
    j = Jitted(fun, static_argnums)

    @functools.wraps(fun)
    def graph_of(*args):
        leaves, _ = j._signature(args)
        graph, out_tree, captured, _ = j._trace(args, leaves)
        graph.out_tree = out_tree
        return graph
    return graph_of
