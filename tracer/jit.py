"""`jit` and `make_graph`: trace once per input signature, lower, cache.

A signature is (pytree structure, per-leaf shape/dtype/weak type, static values). The
cache entry remembers which kernels its graph touched (including gradients consulted while
tracing) and their registry versions, so re-registering a kernel or gradient rebuilds
exactly the entries that used it. Called on traced values, a jitted function inlines its
graph into the caller's trace, which is how `grad(jit(f))` works.

Each jitted function keeps at most CACHE_SIZE signatures (env TRACER_JIT_CACHE_SIZE,
default 128), evicting the least recently used as the clock algorithm approximates it (a
hit costs one counter increment, not a reordering); an evicted entry's program is freed unless
something else (a backend's own compile cache) holds it. Threads may call one jitted
function at once: two may build the same entry (both correct, one is kept). Every build
is reported to tracer.compile_log (TRACER_LOG_COMPILES=1), and `cache_info()` counts.
"""
import collections
import functools
import os
import threading

import numpy as np

import registry
from ir import ShapedArray, aval_of, check_dtype, cse, dce, fold_constants, scalar_array
from ir.errors import ArgumentError
from ir.passes import inline_calls
from registry.tables import _epoch, backend_compiler, backend_eager, snapshot
from lowering.profile import phase, recording
from tracer import compile_log, core
from tracer.core import Tracer, as_array, eval_graph, trace_flat
from tracer.pytree import LEAF, flatten, unflatten

DEFAULT_BACKEND = "llvm"
_ndarray = np.ndarray
_cache_lock = threading.Lock()   # guards changes to every Jitted's cache (not lookups)


def _cache_size(env):
    text = env.get("TRACER_JIT_CACHE_SIZE", "128")
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 1:
        raise ArgumentError(f"TRACER_JIT_CACHE_SIZE={text!r}: expected a positive number of "
                            f"cached signatures per jitted function (default 128)")
    return size


CACHE_SIZE = _cache_size(os.environ)


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


def optimize(graph, backend="numpy"):
    """The standard pipeline: fold constants (with `backend`'s own impls, never another
    backend's; nodes it has none for stay), merge duplicates, drop dead nodes."""
    from lowering.interpreter import run_node

    def evaluate(node, values):
        return run_node(node, values, backend) if registry.has_kernel(node.kernel,
                                                                      backend) else None
    return dce(cse(fold_constants(graph, evaluate)))


class _Entry:
    """`traced` is the graph as traced; `lowered` its program (made on first run);
    `calls`: cache hits so far, `swept`: their number at the last eviction sweep."""
    __slots__ = ("traced", "out_tree", "single", "captured", "versions", "epoch", "run",
                 "lowered", "calls", "swept")


CacheInfo = collections.namedtuple("CacheInfo", "hits misses size maxsize")


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
        self._cache = {}          # key -> _Entry, in the eviction sweep's order
        self.cache_size = CACHE_SIZE
        self._misses = self._evicted_hits = 0
        self._recompiles = compile_log.Recompiles(self.__name__, fun)

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
                entry.calls += 1
                outs = entry.run(args)
                return outs[0] if entry.single else unflatten(entry.out_tree, outs)
        return self._call(args)

    def _call(self, args):
        leaves, key = self._signature(args)
        trace = core.innermost_trace(leaves)       # first: a leaked tracer fails here
        entry = self._entry(key, args, leaves)
        if entry.captured or trace is not None:
            outs = eval_graph(entry.traced, list(leaves) + entry.captured)
        else:
            outs = entry.run(leaves)
        return outs[0] if entry.single else unflatten(entry.out_tree, outs)

    def _entry(self, key, args, leaves):
        """The cache entry for `key`, rebuilt if missing or stale."""
        with _cache_lock:             # not mid-way through an eviction sweep
            entry = self._cache.get(key)
        if entry is None:
            return self._build(key, args, leaves)
        if entry.epoch != _epoch[0]:
            changed = self._changed(entry)
            if changed:
                return self._build(key, args, leaves, changed)
        entry.calls += 1
        return entry

    def _changed(self, entry):
        """The kernels re-registered since `entry` was built (none: it is current again)."""
        epoch = _epoch[0]         # read before the versions: a change in between is seen
        changed = sorted(k for k, v in entry.versions.items() if registry.version(k) != v)
        if not changed:
            entry.epoch = epoch
        return changed

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

        with core.recording_kernels() as touched:
            graph, captured = trace_flat(flat_fun, [_leaf_aval(x, self.__name__) for x in leaves])
        return graph, out_tree[0], captured, touched

    def _build(self, key, args, leaves, changed=None):
        """Trace and lower a new entry (`changed`: the re-registered kernels that made an
        old one stale), timing its phases for the compile log."""
        epoch, versions = snapshot()   # before reading any table
        with recording() as phases:
            with phase("trace"):
                graph, out_tree, captured, touched = self._trace(args, leaves)
            entry = self._new_entry(graph, out_tree, captured, touched, versions, epoch)
            if captured:
                return entry   # closes over values of an enclosing trace: inline, never cache
            with compile_log.progress(self.__name__, len(graph.nodes)), phase("lower"):
                entry.run = self._lower(entry).run
        self._insert(key, entry)
        self._misses += 1
        self._recompiles.compiled(args, self.static_argnums, graph, phases, changed)
        return entry

    @staticmethod
    def _new_entry(graph, out_tree, captured, touched, versions, epoch):
        entry = _Entry()
        entry.traced = graph
        entry.out_tree = out_tree
        entry.single = out_tree == LEAF
        entry.versions = {k: versions.get(k, 0) for k in touched}
        entry.epoch = epoch
        entry.lowered = None
        entry.calls = entry.swept = 0
        entry.captured = captured
        return entry

    def _insert(self, key, entry):
        """Cache `entry`; past cache_size, sweep from the oldest: an entry called since
        the last sweep goes to the back, the first one not called (never `entry` itself)
        is evicted."""
        with _cache_lock:
            cache = self._cache
            cache.pop(key, None)
            cache[key] = entry
            while len(cache) > self.cache_size:
                oldest = next(iter(cache))
                old = cache.pop(oldest)
                if old.calls != old.swept or old is entry:
                    old.swept = old.calls
                    cache[oldest] = old
                else:
                    self._evicted_hits += old.calls

    def cache_info(self):
        """(hits, misses, size, maxsize) of this function's signature cache, as
        functools.lru_cache reports them; misses count every trace-and-compile."""
        with _cache_lock:
            hits = self._evicted_hits + sum(e.calls for e in self._cache.values())
            return CacheInfo(hits, self._misses, len(self._cache), self.cache_size)

    def _lower(self, entry):
        """The program for `entry`: the backend's compiler's, else the graph interpreted
        with the backend's kernels (custom calls inlined, so theirs run there too)."""
        if entry.lowered is None:
            backend = self.backend or DEFAULT_BACKEND
            compile_graph = backend_compiler(backend)
            entry.lowered = (compile_graph(entry.traced) if compile_graph is not None else
                             InterpretedProgram(inline_calls(entry.traced), backend))
        return entry.lowered

    def lower(self, *args):
        """The lowered program for these arguments: `.graph`, `.as_text()`."""
        leaves, key = self._signature(args)
        return self._lower(self._entry(key, args, leaves))

    def __repr__(self):
        return f"<jit({getattr(self.fun, '__name__', self.fun)})>"


class InterpretedProgram:
    """A backend without a compiler runs the optimized graph in the interpreter, with its
    own kernels. Every kernel is checked present before anything runs."""

    def __init__(self, graph, backend="numpy"):
        if backend_eager(backend) is None:      # a backend with a runner needs no impls
            for n in graph.nodes:
                registry.get_kernel(n.kernel, backend)
        self.graph = optimize(graph, backend)
        self.backend = backend

    def run(self, leaves):
        from lowering.interpreter import evaluate      # its results never alias constants
        return evaluate(self.graph, [np.asarray(x, v.aval.dtype) if not isinstance(
            x, np.ndarray) else x for x, v in zip(leaves, self.graph.invars)], self.backend)

    def as_text(self):
        return str(self.graph)


def jit(fun=None, *, static_argnums=(), backend=None):
    """Compile `fun`: traced once per input signature, lowered for `backend` (default
    llvm, whatever backend is active), cached."""
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
