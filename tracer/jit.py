"""`jit` and `make_graph`: trace once per input signature, lower, cache.

A signature is (pytree structure, per-leaf shape/dtype/weak type, static values). The
cache entry remembers which kernels its graph touched (including gradients consulted while
tracing) and their registry versions, so re-registering a kernel or gradient rebuilds
exactly the entries that used it. Called on traced values, a jitted function inlines its
graph into the caller's trace, which is how a transform of it works inside a trace; an
eager `grad(jit(f))` runs as `jit(grad(f))` (`Jitted.transformed`).

Each jitted function keeps at most CACHE_SIZE signatures (env TRACER_JIT_CACHE_SIZE,
default 128) in its tracer.jit_cache, shared by every jit of the same function and
options. Threads may call one jitted function at once: two may build the same entry
(both correct, one is kept). Every build is reported to tracer.compile_log
(TRACER_LOG_COMPILES=1), and `cache_info()` counts.
A large graph compiles in the background while its first calls are interpreted
(tracer.background_compile). float0 arguments and results (tracer.float0s: the tangents
of int values) are constants with no data: they stay out of the graph, so an entry with
any wraps its program's run to drop them from the arguments and put them back among
the results (and compiles at once, so that nothing replaces that run).
"""
import functools
import warnings
import weakref

import numpy as np

import registry
from ir.errors import ArgumentError, ArgumentValueError, TracerError
from ir.passes import inline_calls
from registry.tables import EPOCH, backend_compiler, snapshot
from lowering.heap import building
from lowering.profile import phase, recording
from lowering.settings import settings
from tracer import (aot, compile_log, config, core, jit_cache, jit_disabled, nan_check,
                    sources)
from tracer.core import Tracer, eval_graph, trace_flat
from tracer.float0s import Float0Leaves
from tracer.jit_placement import placement
from tracer.background_compile import Compiling, InterpretedProgram, start
from tracer.pytree import flatten, is_pytree, unflatten
from tracer.signature import (UNSET, Call, check_disjoint, check_function, check_returned,
                              donated_leaves, leaf_aval, static_spec,
                              warn_unusable_donations)
from tracer.vmap import named_axes, reads_named_axes

DEFAULT_BACKEND = "llvm"


def _nothing():
    pass


_ndarray = np.ndarray
_cache_lock = jit_cache.LOCK


CACHE_SIZE = settings.jit_cache_size
_ALL = weakref.WeakSet()     # every live Jitted, for clear_caches


_SCALAR = (np.number, np.bool_)


def _plain_key(args):
    """The cache key of arguments that are all plain arrays: their shapes and dtypes
    (None if any is not a plain array)."""
    if len(args) == 1:
        a = args[0]
        return ((a.shape, a.dtype),) if type(a) is _ndarray else None
    key = tuple([(a.shape, a.dtype) for a in args if type(a) is _ndarray])
    return key if len(key) == len(args) else None


def _float0_run(run, f0_in, f0_out):
    """`run` of a program whose float0 arguments and results were kept out."""
    return lambda leaves: f0_out.merge(run(f0_in.others(leaves)))


class Jitted:
    """A jit-compiled function; call it like the original (keyword arguments included).
    As a method (`@jit` in a class body) it binds `self`: a registered pytree `self` is
    traced like any argument; any other is static (hashed by identity), so arrays read
    from it are constants of the compiled code: register the class as a pytree
    (tracer.tree_util.register_dataclass) when they change between calls."""

    def __init__(self, fun, static_argnums=UNSET, static_argnames=UNSET, donate_argnums=UNSET,
                 backend=None, donate_argnames=UNSET, compiler_options=None, device=None,
                 in_shardings=None, out_shardings=None):
        functools.update_wrapper(self, fun)
        self.__name__ = getattr(fun, "__name__", type(fun).__name__)
        self.fun = fun
        where = f"jit({self.__name__})"
        check_function(fun, where)
        self.static_argnums, self.static_argnames = static_spec(
            fun, where, static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = static_spec(
            fun, where, donate_argnums, donate_argnames, "donate")
        check_disjoint(where, (self.static_argnums, self.static_argnames),
                       (self.donate_argnums, self.donate_argnames))
        self._plain = not self.static_argnums
        self.backend = registry.check_backend(backend) if backend else None
        self.compiler_options = aot.check_compiler_options(compiler_options, where)
        self.device, self.in_shardings, self.out_shardings = device, in_shardings, out_shardings
        self._placement = placement(where, device, in_shardings, out_shardings)
        # a backend registered anew (under a name in use), or other code-generation
        # settings (TRACER_NUM_THREADS, ...) as the jit is made, start a cache of their own
        compiler = backend_compiler(self.backend) if self.backend else None
        self._shared = jit_cache.Shared(self.__name__, fun) if (
            compiler_options or self._placement) else jit_cache.Shared.of(
            fun, (self.static_argnums, self.static_argnames, self.donate_argnums,
                  self.donate_argnames, self.backend, compiler, settings.key()),
            self.__name__)
        self._cache = self._shared.cache   # key -> jit_cache.Entry
        self.cache_size = CACHE_SIZE
        self._recompiles = self._shared.recompiles
        with _cache_lock:
            _ALL.add(self)
        getattr(backend_compiler(self.backend or DEFAULT_BACKEND), "warm", _nothing)()

    def __reduce__(self):
        """Pickled as the function and options it was made from, never compiled code (the
        copy compiles afresh); by name when it is what its module binds to that name (an
        @jit function). A lambda or a local function fails as pickle fails for it."""
        return sources.global_name(self, self.fun) or (Jitted, (
            self.fun, self.static_argnums, self.static_argnames, self.donate_argnums,
            self.backend, self.donate_argnames, self.compiler_options, self.device,
            self.in_shardings, self.out_shardings))

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        static = () if is_pytree(obj) else (0,)
        return functools.partial(self._call_method, obj, static)

    def _call_method(self, obj, static, *args, **kwargs):
        return self._call((obj,) + args, kwargs, static)

    def _signature(self, args, kwargs, extra_static=()):
        """(leaves, cache key, Call or None for plain arrays); while a trace-context flag
        (tracer.config: rank promotion, matmul precision) is not the default, the key
        holds them, so that a change retraces, as JAX's."""
        key = call = None
        if self._plain and not kwargs and not extra_static:
            key = _plain_key(args)
            if key is None and any(isinstance(a, _SCALAR) for a in args):
                # a NumPy scalar is the 0-d array it becomes: one entry for both, as jax
                args = tuple(np.asarray(a) if isinstance(a, _SCALAR) else a for a in args)
                key = _plain_key(args)
            if key is None and all(type(a) is _ndarray or type(a) is Tracer and not
                                   a.aval.weak_type for a in args):
                # traced values (inside another trace) take the arrays' entry, as in JAX
                key = tuple([(a.shape, a.dtype) for a in args])
        if key is None:
            call = Call(f"jit({self.__name__})", self.fun, args, kwargs,
                        self.static_argnums + extra_static, self.static_argnames)
            args, key = call.leaves, call.key
        ctx = config.trace_context()
        return args, key if ctx is None else (key, "trace context", ctx), call

    def __call__(self, *args, **kwargs):
        # The hot path of every jitted call: plain arrays, no static arguments, a current
        # cache entry. Plain arrays are never traced values, so the entry runs compiled.
        if self._plain and not kwargs:
            entry = self._cache.get(_plain_key(args))
            if entry is not None and entry.epoch == EPOCH[0]:
                entry.calls += 1
                outs = entry.run(args)
                return outs[0] if entry.single else unflatten(entry.out_tree, outs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs, extra_static=()):
        if jit_disabled.OPEN[0] and jit_disabled.disabled():
            return self.fun(*args, **kwargs)
        leaves, key, call = self._signature(args, kwargs, extra_static)
        trace = core.innermost_trace(leaves)       # first: a leaked tracer fails here
        entry = self._entry(key, call or args, leaves)
        if trace is None and config.no_execution.active and config.no_execution.value:
            raise RuntimeError(f"tracer tried to execute jit({self.__name__}), but the "
                               f"no_execution config option is set")
        if entry.lowered is None or trace is not None:
            f0_in, f0_out = entry.float0
            # on concrete arguments inside a vmap naming axes, a graph of collectives
            # (never cached) still belongs to that trace
            outer = trace or (core.current_trace() if named_axes.bound else None)
            outs = f0_out.merge(eval_graph(entry.traced, list(f0_in.others(leaves)) +
                                           entry.captured, outer))
        else:
            try:
                outs = entry.run(leaves)
            except (TracerError, TypeError, ValueError):
                aot.check_valued(self.__name__, leaves)
                raise
            if nan_check.ON[0]:
                nan_check.check_call(f"jit({self.__name__})", entry.traced,
                                      entry.float0[0].others(leaves), outs)
        return outs[0] if entry.single else unflatten(entry.out_tree, outs)

    def _entry(self, key, call, leaves):
        """The cache entry for `key`, rebuilt if missing or stale."""
        with _cache_lock:             # not mid-way through an eviction sweep
            try:
                entry = self._cache.get(key)
            except Exception as e:    # a static argument's __eq__, comparing keys
                raise ArgumentValueError(
                    f"jit({self.__name__}): static arguments should be comparable using "
                    f"__eq__: comparing this call's with an earlier call's raised "
                    f"{type(e).__name__}: {e}; give their class an __eq__ that returns a "
                    f"bool") from e
        if entry is None:
            return self._build(key, call, leaves)
        if entry.epoch != EPOCH[0]:
            changed = self._changed(entry)
            if changed:
                return self._build(key, call, leaves, changed)
        entry.calls += 1
        return entry

    def _changed(self, entry):
        """The kernels re-registered since `entry` was built (none: it is current again)."""
        epoch = EPOCH[0]         # read before the versions: a change in between is seen
        changed = sorted(k for k, v in entry.versions.items() if registry.version(k) != v)
        # no call may skip this test while a disable_jit block is open, nor while a trace
        # context is set (the hot path's key holds none)
        if not (changed or jit_disabled.OPEN[0] or config.trace_context() or config.guarded()):
            entry.epoch = epoch
        return changed

    def _trace(self, call, leaves):
        """Trace to a graph; returns (graph, out_tree, captured, touched kernels, float0),
        float0 being the Float0Leaves of the leaves and of the results. `call` is the
        call's Call, or its positional arrays (all dynamic)."""
        found, checks = {}, self._placement
        f0_in = Float0Leaves(leaves)
        if checks is not None:
            checks.check_arguments(*((call.dynamic_args(), call.kwargs)
                                     if isinstance(call, Call) else (call, {})))

        def flat_fun(*tracers):
            xs = f0_in.merge(list(tracers))
            args, kwargs = call.rebuild(xs) if isinstance(call, Call) else (xs, {})
            outs, found["tree"] = flatten(self.fun(*args, **kwargs))
            check_returned(self.fun, outs, found["tree"])
            found["float0"] = Float0Leaves(outs)
            return found["float0"].others(outs)

        with core.recording_kernels() as touched:
            graph, captured = trace_flat(flat_fun, [leaf_aval(x, self.__name__)
                                                    for x in f0_in.others(leaves)])
        if checks is not None:
            checks.check_results(found["tree"])
        return graph, found["tree"], captured, touched, (f0_in, found["float0"])

    def _build(self, key, call, leaves, changed=None):
        """Trace and lower a new entry (`changed`: the re-registered kernels that made an
        old one stale), timing its phases for the compile log."""
        if config.no_tracing.active and config.no_tracing.value:
            raise RuntimeError(f"re-tracing function {self.__name__} for `jit`, but "
                               f"'no_tracing' is set")
        epoch, versions = snapshot()   # before reading any table
        self._recompiles.missed(key, call, changed)
        with recording() as phases:
            with phase("trace"), building():
                graph, out_tree, captured, touched, float0 = self._trace(call, leaves)
            entry = jit_cache.Entry(graph, out_tree, captured, touched, versions, epoch,
                                     float0)
            if captured or (named_axes.bound and reads_named_axes(touched)):
                return entry   # closes over values of an enclosing trace, or holds
                               # collectives of its bound named axes: inline, never cache
            inputs = float0[0].others(list(range(len(leaves))))   # leaves, less float0s
            graph.donated = tuple(inputs.index(i) for i in donated_leaves(
                call, self.donate_argnums, self.donate_argnames, self.static_argnames)
                if i in inputs)
            if graph.donated:
                warn_unusable_donations(graph)
            with compile_log.progress(self.__name__, len(graph.nodes)), phase("lower"):
                entry.run = self._lower(entry, first=not any(float0)).run
            if any(float0):
                entry.run = _float0_run(entry.run, *float0)
        self._shared.insert(key, entry, self.cache_size)
        self._shared.misses += 1
        args, static = (call.args, call.static) if isinstance(call, Call) else (call, ())
        self._recompiles.compiled(args, static, graph, phases, changed)
        return entry

    def cache_info(self):
        """(hits, misses, size, maxsize) of this function's signature cache, as
        functools.lru_cache reports them; misses count every trace-and-compile."""
        return self._shared.info(self.cache_size)

    def _lower(self, entry, first=False):
        """The program for `entry`: the backend's compiler's, else the graph interpreted
        with the backend's kernels (custom calls inlined, so theirs run there too). For
        the `first` call of a large graph, one still compiling (tracer.background_compile)."""
        if entry.lowered is None:
            backend = self.backend or DEFAULT_BACKEND
            compile_graph = backend_compiler(backend)
            entry.lowered = (InterpretedProgram(inline_calls(entry.traced), backend)
                             if compile_graph is None else
                             start(entry, compile_graph) if first else
                             compile_graph(entry.traced))
        if not first and isinstance(entry.lowered, Compiling):
            entry.lowered = entry.lowered.result()
        return entry.lowered

    def lower(self, *args, **kwargs):
        """The program for these arguments' signature, as JAX's ahead-of-time stage
        (tracer.aot.Lowered: `.graph`, `.as_text()`, `.compile()`); one per cache entry."""
        leaves, key, call = self._signature(args, kwargs)
        entry = self._entry(key, call or args, leaves)
        if entry.aot is None:
            entry.aot = aot.Lowered(self, args, kwargs, entry)
        return entry.aot

    def trace(self, *args, **kwargs):
        """The traced graph of these arguments' signature (tracer.aot.Traced: `.jaxpr`,
        `.out_info`, `.lower()`), as JAX's `jit(f).trace`."""
        return aot.Traced(self, args, kwargs)

    def transformed(self, transform, options):
        """`transform(self.fun, *options)` jitted with this one's static arguments and
        backend (one per transform and options, kept with its cache:
        tracer.transforms.compiled_when_jitted); None inside a trace or a vmap naming
        axes, with jit disabled, or given placements."""
        if (core.current_trace() is not None or named_axes.bound or self._placement or
                jit_disabled.OPEN[0] and jit_disabled.disabled()):
            return None
        key = (transform,) + tuple(tuple(o) if type(o) is list else o for o in options)
        found = self._shared.transforms.get(key)
        if found is None:
            found = Jitted(transform(self.fun, *options), self.static_argnums,
                           self.static_argnames, backend=self.backend)
            found = self._shared.transforms.setdefault(key, found)
        return found

    def eval_shape(self, *args, **kwargs):
        """The result's shapes and dtypes (a pytree of tracer.ShapeDtypeStruct), with the
        shardings out_shardings gives them."""
        out = self.trace(*args, **kwargs).out_info
        return out if self._placement is None else self._placement.placed(out)

    def __repr__(self):
        """JAX's; `<PjitFunction>` if fun's repr fails or `__wrapped__` was deleted."""
        try:
            return f"<PjitFunction of {self.__wrapped__!r}>"
        except Exception:
            return "<PjitFunction>"


def jit(fun=None, *, static_argnums=UNSET, static_argnames=UNSET, donate_argnums=UNSET,
        backend=None, donate_argnames=UNSET, compiler_options=None, inline=False,
        keep_unused=False, device=None, in_shardings=None, out_shardings=None):
    """Compile `fun`: traced once per input signature, lowered for `backend` (default
    llvm, whatever backend is active), cached. `donate_argnums` / `donate_argnames` (each
    completed from the other, as the static ones are): as in JAX, the llvm backend may
    write results into these arguments' arrays (one of the same shape and dtype that owns
    its memory and is passed once), so their contents are undefined after the call; a
    result never shares memory with any other argument. `compiler_options`: JAX's (XLA's)
    options, checked and ignored (tracer.aot.check_compiler_options). `inline` and
    `keep_unused` are JAX's and what jit always does here: a jitted function called while
    another is traced is inlined into its graph, and no argument is pruned. `device`,
    `in_shardings`, `out_shardings`: JAX's, checked as JAX checks them and placing
    nothing, as this host is one CPU device (tracer.jit_placement); `device` warns as
    deprecated, as in JAX, and goes with `backend`, which names the compiler here."""
    for name, flag in (("inline", inline), ("keep_unused", keep_unused)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ArgumentError(f"jit: {name} must be a bool, got {flag!r}")
    if device is not None:
        warnings.warn("jit: the device argument is deprecated (as in JAX); here every "
                      "array is on the one CPU device already", DeprecationWarning,
                      stacklevel=2)

    def make(f):
        return Jitted(f, static_argnums, static_argnames, donate_argnums, backend,
                      donate_argnames, compiler_options, device, in_shardings,
                      out_shardings)
    return make if fun is None else make(fun)


def clear_caches():
    """Empty every jitted function's signature cache, as jax.clear_caches: each traces and
    compiles again on its next call (a backend's on-disk object cache still serves what
    it holds)."""
    with _cache_lock:
        jitted = list(_ALL)
    for j in jitted:
        j._shared.clear()


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of `fun(*args, **kwargs)`, as a pytree of
    tracer.ShapeDtypeStruct, found by tracing alone (nothing runs), as `jax.eval_shape`."""
    return Jitted(fun).eval_shape(*args, **kwargs)


def make_graph(fun, *, static_argnums=UNSET, static_argnames=UNSET):
    """`make_graph(f)(*args, **kwargs)` is the traced ir.Graph of f (like
    jax.make_jaxpr)."""
    j = Jitted(fun, static_argnums, static_argnames)

    @functools.wraps(fun)
    def graph_of(*args, **kwargs):
        return j.trace(*args, **kwargs).graph
    return graph_of
