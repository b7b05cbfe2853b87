"""The signature caches of jitted functions: one per function and options, shared by every
`jit(f)` of the same `f` (as JAX's global cache, so that `jit(f)(x)` written inside a loop
traces and compiles once), kept while `f` lives; a function that cannot be weakly
referenced gets a cache of its own.

Each keeps at most `size` signatures, evicting the least recently used as the clock
algorithm approximates it (a hit costs one counter increment, not a reordering); an
evicted entry's program is freed unless something else (a backend's own compile cache)
holds it.
"""
import collections
import weakref

from lowering import forks
from tracer import compile_log
from tracer.pytree import LEAF

LOCK = forks.lock()   # guards changes to every cache (not lookups); a child forked
                      # mid-sweep at worst lacks an entry: rebuilt
CacheInfo = collections.namedtuple("CacheInfo", "hits misses size maxsize")


class Entry:
    """`traced` is the graph as traced; `lowered` its program (made on first run);
    `calls`: cache hits so far, `swept`: their number at the last eviction sweep."""
    __slots__ = ("traced", "out_tree", "single", "captured", "versions", "epoch", "run",
                 "lowered", "calls", "swept", "aot", "float0")

    def __init__(self, graph, out_tree, captured, touched, versions, epoch, float0):
        """The entry of a new trace: `touched`, the kernels it read, at their `versions`
        (a registry snapshot) as of `epoch`; `run` is set once it is lowered."""
        self.traced, self.out_tree, self.single = graph, out_tree, out_tree == LEAF
        self.captured, self.float0, self.epoch = captured, float0, epoch
        self.versions = {k: versions.get(k, 0) for k in touched}
        self.lowered = self.aot = None
        self.calls = self.swept = 0


class Shared:
    """key -> Entry in `cache` (in the eviction sweep's order), the counts cache_info
    reports, and the function's compile log."""
    __slots__ = ("cache", "misses", "evicted_hits", "recompiles", "transforms")
    _all = {}      # (id(fun), options) -> (weak reference to fun, Shared)

    def __init__(self, name, fun):
        self.cache, self.misses, self.evicted_hits = {}, 0, 0
        self.transforms = {}        # (transform, options) -> the Jitted transformed function
        self.recompiles = compile_log.Recompiles(name, fun)

    @classmethod
    def of(cls, fun, options, name):
        """The cache of `fun` jitted with hashable `options`, made on first use."""
        key = (id(fun), options)
        with LOCK:
            held = cls._all.get(key)
            if held is not None and held[0]() is fun:
                return held[1]
            try:
                ref = weakref.ref(fun, lambda r: cls._all.get(key, (None,))[0] is r
                                  and cls._all.pop(key))
            except TypeError:
                return cls(name, fun)
            shared = cls(name, fun)
            cls._all[key] = (ref, shared)
            return shared

    def insert(self, key, entry, size):
        """Cache `entry`; past `size`, sweep from the oldest: an entry called since the
        last sweep goes to the back, the first one not called (never `entry` itself) is
        evicted."""
        with LOCK:
            cache = self.cache
            cache.pop(key, None)
            cache[key] = entry
            while len(cache) > size:
                oldest = next(iter(cache))
                old = cache.pop(oldest)
                if old.calls != old.swept or old is entry:
                    old.swept = old.calls
                    cache[oldest] = old
                else:
                    self.evicted_hits += old.calls

    def info(self, size):
        """(hits, misses, size, maxsize), as functools.lru_cache reports them; misses
        count every trace-and-compile."""
        with LOCK:
            hits = self.evicted_hits + sum(e.calls for e in self.cache.values())
            return CacheInfo(hits, self.misses, len(self.cache), size)

    def clear(self):
        with LOCK:
            self.evicted_hits += sum(e.calls for e in self.cache.values())
            self.cache.clear()
