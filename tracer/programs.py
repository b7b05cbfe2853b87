"""What a jit cache entry runs, besides a backend compiler's own program: the graph
interpreted with a backend's kernels, and a native program still compiling.

Time to first result: compiling a large graph takes a while (about 0.35 ms per op on the
llvm backend), so a graph of at least TRACER_BACKGROUND_COMPILE nodes (default 1000; 0
never) compiles on a thread of its own while its first calls run through the NumPy
interpreter; the first call after the compile is done switches the cache entry to the
native program for good, so the hot path is unchanged from then on. A program a cache
serves is ready within FIRST_WAIT and used from the first call. The interpreter's results
agree with the native ones to the backends' documented tolerance (a few ulp of float32
math), not bit for bit.
"""
import os
import threading

import numpy as np

import registry
from ir import cse, dce, fold_constants
from ir.errors import KernelNotFoundError
from ir.passes import inline_calls
from lowering import forks
from lowering.llvm import caches
from registry.tables import backend_eager

FIRST_WAIT = 0.05        # seconds the first call waits for a compile a cache may serve


def optimize(graph, backend="numpy"):
    """The standard pipeline: fold constants (with `backend`'s own impls, never another
    backend's; nodes it has none for stay), merge duplicates, drop dead nodes."""
    from lowering.interpreter import run_node

    def evaluate(node, values):
        return run_node(node, values, backend) if registry.has_kernel(node.kernel,
                                                                      backend) else None
    return dce(cse(fold_constants(graph, evaluate)))


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
        return evaluate(self.graph, [x if type(x) is np.ndarray and x.dtype.isnative else
                                     np.asarray(x, v.aval.dtype)    # scalars, big-endian
                                     for x, v in zip(leaves, self.graph.invars)], self.backend)

    def as_text(self):
        return str(self.graph)


def background_threshold():
    """TRACER_BACKGROUND_COMPILE: graphs of at least this many nodes compile in the
    background (default 1000; 0: never)."""
    return caches.env_size("TRACER_BACKGROUND_COMPILE", 1000)


def size(graph):
    """Nodes of `graph`, those of its regions included."""
    return sum(1 + sum(size(g) for g in n.regions) for n in graph.nodes)


class Compiling:
    """A native program compiling on its own thread. Its `run` interprets until the
    program is ready, then moves `entry` (the jit cache entry) onto the program; `result`
    waits for it. A compile that failed is not remembered: each later call compiles in the
    calling thread, so it raises a fresh error (or succeeds, if the failure was passing).
    A forked child has no compile thread: its first call starts one of its own."""

    def __init__(self, entry, compile_graph, interpreted):
        self._entry, self._interpreted, self._compile_graph = entry, interpreted, compile_graph
        self._program = None
        self._in_child()
        self._begin()
        self._done.wait(FIRST_WAIT)

    def _in_child(self):
        """The state of a process in which no thread compiles this program (yet)."""
        self._done, self._lock, self._started = threading.Event(), forks.lock(), False
        if self._program is not None:       # the parent's compile ended before the fork
            self._done.set()

    def _begin(self):
        with self._lock:
            if self._started:
                return
            self._started = True
            with _running_lock:
                _running.add(self)
        threading.Thread(target=self._compile, name="tracer-compile", daemon=True).start()

    def _compile(self):
        try:
            self._program = self._compile_graph(self._entry.traced)
        except BaseException:       # not kept: the next call compiles and raises it anew
            pass
        self._done.set()            # first: a child forked in between sees it done
        with _running_lock:
            _running.discard(self)

    def result(self):
        self._begin()
        self._done.wait()
        if self._program is None:
            self._program = self._compile_graph(self._entry.traced)
        return self._program

    def run(self, leaves):
        if not self._done.is_set():
            if not self._started:
                self._begin()
            return self._interpreted.run(leaves)
        program = self._entry.lowered = self.result()
        self._entry.run = program.run
        return program.run(leaves)


_running, _running_lock = set(), forks.lock()     # Compiling objects whose thread runs


def _after_fork():
    """The child has none of the compile threads."""
    for compiling in _running:
        compiling._in_child()
    _running.clear()


os.register_at_fork(after_in_child=_after_fork)


def start(entry, compile_graph):
    """The program that serves `entry`'s first calls: `compile_graph(entry.traced)`, or,
    for a large graph every kernel of which has a NumPy kernel, a Compiling one."""
    threshold = background_threshold()
    if threshold and size(entry.traced) >= threshold:
        try:
            interpreted = InterpretedProgram(inline_calls(entry.traced), "numpy")
        except KernelNotFoundError:
            interpreted = None          # a kernel only the compiler can run: wait for it
        if interpreted is not None:
            return Compiling(entry, compile_graph, interpreted)
    return compile_graph(entry.traced)
