"""Compile visibility: what jit traced and compiled, how long each phase took, and why.

`TRACER_LOG_COMPILES=1` logs every trace and compile of a jitted function to the
`tracer.compile` logger (function, signature, node count, time per phase, cache hit or
miss, and why an entry was rebuilt); without it the logger stays silent unless the
program configures it (`logging.getLogger("tracer.compile").setLevel(logging.INFO)`).
A function compiled for many signatures gets one warning saying which arguments keep
changing (as JAX's recompilation explanations do), and a compile that takes longer than
a few seconds shows a progress line when stderr is a terminal. Every build also logs JAX's
three lines ("Finished tracing f for jit in ...", "Compiling jit(f) with global shapes and
types [...]", "Finished XLA compilation of jit(f) in ...") at DEBUG, or at WARNING while
tracer.config's jax_log_compiles is on, as JAX does.
"""
import contextlib
import inspect
import logging
import sys
import threading
import time
import warnings
import weakref

from ir import ShapedArray
from lowering import forks
from lowering.settings import settings
from tracer import cache_miss, config
from tracer.sources import user_stacklevel

logger = logging.getLogger("tracer.compile")
RECOMPILE_WARNING = 10      # distinct signatures of one function before the warning
PROGRESS_AFTER = 3.0        # seconds before a compile shows a progress line
MAX_KEYS = 256              # earlier keys a cache-miss explanation compares with


def _configure():
    if settings.log_compiles:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("tracer: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


_configure()


def describe_args(args, static=()):
    """One short text per positional argument: its type signature, or its static value."""
    from tracer.pytree import flatten
    out = []
    for i, a in enumerate(args):
        if i in static:
            out.append(f"static {a!r}"[:60])
            continue
        leaves, tree = flatten(a)
        parts = [f"{_dtype(x)}{list(getattr(x, 'shape', ()))}" for x in leaves]
        out.append(parts[0] if len(parts) == 1 and not tree[1:] else
                   f"{type(a).__name__}({', '.join(parts)})")
    return out


def _dtype(x):
    import numpy as np
    dt = getattr(x, "dtype", None)
    return np.dtype(dt).name if dt is not None else f"weak {type(x).__name__}"


def _log_as_jax(name, graph, phases):
    """JAX's three lines of a trace and compile (JAX's phrases; the compiler is tracer's)."""
    level = logging.WARNING if config.log_compiles.value else logging.DEBUG
    if not logger.isEnabledFor(level):
        return
    types = ", ".join(str(ShapedArray(v.aval.shape, v.aval.dtype)) for v in graph.invars)
    logger.log(level, "Finished tracing %s for jit in %.9f sec", name,
               phases.get("trace", 0.0))
    logger.log(level, "Compiling jit(%s) with global shapes and types [%s]. (tracer: %d "
               "nodes, one CPU device)", name, types, len(graph.nodes))
    logger.log(level, "Finished XLA compilation of jit(%s) in %.9f sec (tracer's own "
               "backend compiled it; there is no XLA here)", name, phases.get("lower", 0.0))


def format_phases(record, top=("trace", "lower")):
    """`trace 1.2 ms, lower 30.1 ms (llvm-optimize 20.0, ...)`: the top-level phases of
    a profile record, with the phases timed inside them in brackets."""
    inner = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in record.items()
                      if k not in top and isinstance(v, float))
    text = ", ".join(f"{k} {record[k] * 1e3:.1f} ms" for k in top if k in record)
    return f"{text} ({inner})" if inner else text


class Recompiles:
    """The builds of one jitted function: logged, and remembered per argument so that
    many recompiles can be explained."""

    def __init__(self, name, fun):
        self.name = name
        try:        # weakly: jit's cache shared by every jit(fun) lives only as long as fun
            self._fun = weakref.ref(fun)
        except TypeError:
            self._fun = lambda: fun
        self.seen, self.warned = [], False
        self.keys = []          # tracer.cache_miss.Seen of each build's key, the latest last
        self.lock = forks.lock()

    fun = property(lambda self: self._fun())

    def missed(self, key, call, changed=None):
        """Record a build's key (`call`: jit's Call, or the plain arrays) and, while
        jax_explain_cache_misses is on, log why it missed."""
        new = cache_miss.Seen(self.fun, key, call)
        if config.explain_cache_misses.value:
            with self.lock:
                seen = list(self.keys)
            cache_miss.explain(self.fun, self.name, seen, new, changed)
        with self.lock:
            self.keys.append(new)
            del self.keys[:-MAX_KEYS]

    def compiled(self, args, static, graph, phases, changed):
        """Log one build; `changed` lists the re-registered kernels that made an old entry
        stale (None: a new signature, which counts towards the recompile warning)."""
        _log_as_jax(self.name, graph, phases)
        described = tuple(describe_args(args, static))
        if logger.isEnabledFor(logging.INFO):
            why = ("new signature" if changed is None else
                   f"rebuilt: {', '.join(changed)} re-registered")
            hits = phases.get("object-disk-hits")
            logger.info("jit(%s) compiled for (%s): %d nodes, %s; %s%s", self.name,
                        ", ".join(described), len(graph.nodes), format_phases(phases), why,
                        f"; {hits} object(s) from the disk cache" if hits else "")
        if changed is None:
            self._add(described)

    def _add(self, described):
        with self.lock:       # threads building one signature together count once
            if described in self.seen:
                return
            self.seen.append(described)
            if self.warned or len(self.seen) <= RECOMPILE_WARNING:
                return
            self.warned = True
        varying = [i for i in range(max(map(len, self.seen))) if len(
            {d[i] if i < len(d) else None for d in self.seen}) > 1]
        which = "; ".join(f"argument {i}{self._named(i)} was " + ", ".join(list(
            dict.fromkeys(d[i] for d in self.seen if i < len(d)))[:4]) + ", ..."
            for i in varying[:3])
        warnings.warn(
            f"jit({self.name}) has been compiled for {len(self.seen)} different signatures "
            f"({which or 'the number of arguments changed'}). Each new shape, dtype or "
            f"static value compiles again: pad inputs to a few fixed shapes, or pass "
            f"changing Python values as arrays instead of static arguments.",
            stacklevel=user_stacklevel())

    def _named(self, i):
        try:
            names = list(inspect.signature(self.fun).parameters)
        except (TypeError, ValueError):
            return ""
        return f" ({names[i]})" if i < len(names) else ""


@contextlib.contextmanager
def progress(name, nodes):
    """Print a progress line to a terminal while a compile runs longer than
    PROGRESS_AFTER seconds (never into redirected output)."""
    if not sys.stderr.isatty():
        yield
        return
    done, t0 = threading.Event(), time.perf_counter()

    def tick():
        while not done.wait(1.0):
            elapsed = time.perf_counter() - t0
            if elapsed >= PROGRESS_AFTER:
                sys.stderr.write(f"\rtracer: compiling {name} ({nodes} nodes)... "
                                 f"{elapsed:.0f} s")
                sys.stderr.flush()
    thread = threading.Thread(target=tick, daemon=True, name="tracer-progress")
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if time.perf_counter() - t0 >= PROGRESS_AFTER:
            sys.stderr.write("\n")
