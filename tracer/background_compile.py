"""What a jit cache entry runs, besides a backend compiler's own program: the graph
interpreted with a backend's kernels, and a native program still compiling.

Time to first result: a graph of at least TRACER_BACKGROUND_COMPILE nodes (default 100; 0
never) may have its first calls run through the NumPy interpreter while its native code
compiles, when that gives the user results sooner without delaying the native code:
- The compile's Python part (passes to codegen; a backend compiler's `prepare`) runs in
  the caller. Only the part that releases the GIL (LLVM's optimizer and emitter) runs on
  a thread of its own: a compile thread holding the GIL made each interpreted node wait
  for it (up to sys.getswitchinterval(), 5 ms), 2-30 s a 1,100-node step.
- The first call interprets only if the cores idle beside the caller (`idle_cores`) are
  as many as the compile would use (the backend's `finish.cores`, default 1; llvm's: a
  part of its module each, and a library compiling beside it each: interpreting beside
  such a compile took a core from it, and W20's whole run by default took 1.07-1.25x its
  compile-first time in six runs on 2-core hosts), and the graph's interpreted cost
  (`interpreted_cost`, loops counted by their trips) is below the compile's estimate
  (the backend's: `prepare`); a later call is not interpreted when the compile should
  end within it (by the estimate, and as long as the last interpreted call took): it
  waits for the native code instead. Interpreted calls run OpenBLAS on one thread
  (`one_blas_thread`), leaving the compile its core.
The first call after the compile switches the cache entry to the native program for good,
so the hot path is unchanged from then on. A program a cache serves is ready within
FIRST_WAIT and used from the first call. The interpreter's results agree with the native
ones to the backends' documented tolerance (a few ulp of float32 math), not bit for bit.
"""
import contextlib
import ctypes
import functools
import os
import threading
import time

import numpy as np

import registry
from ir import cse, dce, fold_constants
from ir.errors import KernelNotFoundError
from ir.passes import inline_calls
from lowering import forks
from lowering.host import idle_cores
from lowering.settings import settings
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
        outs = evaluate(self.graph, [x if type(x) is np.ndarray and x.dtype.isnative else
                                     np.asarray(x, v.aval.dtype)    # scalars, big-endian
                                     for x, v in zip(leaves, self.graph.invars)], self.backend)
        return [x if type(x) is np.ndarray else np.asarray(x) for x in outs]   # as compiled

    def as_text(self):
        return str(self.graph)


def background_threshold():
    """settings.background_compile: graphs of at least this many nodes may compile in the
    background (0: never)."""
    return settings.background_compile


def size(graph):
    """Nodes of `graph`, those of its regions included."""
    total = len(graph.nodes)
    for n in graph.nodes:       # (a loop: on CPython 3.11 a generator costs a call)
        if n.attr_items:        # (regions are attrs)
            for g in n.regions:
                total += size(g)
    return total


NODE_S = 20e-6      # the interpreter's time a node (Python dispatch, checks), measured
BYTE_S = 0.25e-9    # and a byte each node writes (NumPy at memory speed), measured
FLOP_S = 2e-11      # and a matmul's flop (OpenBLAS on one AVX-512 core: ~50 GFLOP/s)


def interpreted_cost(graph):
    """Seconds one interpreted call of `graph` takes at least: NODE_S a node run, BYTE_S
    a byte it writes, FLOP_S a matmul's flop. A scan's body runs `length` times, a
    cond's costliest branch once, a while loop's body an unknown number of times (inf)."""
    total = 0.0
    for n in graph.nodes:
        total += NODE_S + BYTE_S * sum(v.aval.size * v.aval.dtype.itemsize for v in n.outputs)
        if n.kernel == "matmul":
            total += 2 * FLOP_S * n.outputs[0].aval.size * n.inputs[0].aval.shape[-1]
        inner = [interpreted_cost(g) for g in n.regions]
        if inner:
            total += (float("inf") if n.kernel == "while" else max(inner) if n.kernel == "cond"
                      else dict(n.attr_items).get("length", 1) * sum(inner))
    return total


class Compiling:
    """A native program compiling on its own thread (`finish()`, estimated to take
    `estimate` seconds, None: unknown; an interpreted call, `cost`). Its `run` interprets
    while that pays (see the
    module's docstring), then moves `entry` (the jit cache entry) onto the program;
    `result` waits for it. A compile that failed is not kept: each later call compiles in
    the calling thread, so it raises a fresh error (or succeeds, if the failure was
    passing). A forked child has no compile thread: its first call starts one of its own."""

    def __init__(self, entry, compile_graph, finish, cost, estimate, interpreted):
        self._entry, self._interpreted, self._compile_graph = entry, interpreted, compile_graph
        self._finish, self._estimate = finish, estimate
        self._program = None
        self._last = cost           # an interpreted call's time, until one is measured
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
            self._since = time.perf_counter()
            with _running_lock:
                _running.add(self)
        threading.Thread(target=self._compile, name="tracer-compile", daemon=True).start()

    def _compile(self):
        try:
            self._program = self._finish()
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

    def interprets(self):
        """Whether a call now should run interpreted: the compile is under way and, by its
        estimate, does not end within the call (as long as the last one took). Past the
        estimate (a loaded machine) its end is unknown: calls interpret again, which
        loses at most one call's time and gains one native call's for each that ends
        first (the compile, on another core and without the GIL, is not slowed)."""
        if self._done.is_set():
            return False
        self._begin()
        if self._estimate is None:
            return True
        left = self._estimate - (time.perf_counter() - self._since)
        return not 0 < left <= self._last

    def run(self, leaves):
        if self.interprets():
            began = time.perf_counter()
            with one_blas_thread():
                outs = self._interpreted.run(leaves)
            self._last = time.perf_counter() - began
            return outs
        program = self._entry.lowered = self.result()
        self._entry.run = program.run
        return program.run(leaves)


def _blas_threads_setter():
    """OpenBLAS's openblas_set_num_threads_local (sets the count, returns the old one) in
    the OpenBLAS NumPy has loaded, or None (another BLAS, not Linux)."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f
                            if "openblas" in line.rsplit("/", 1)[-1].lower()})
    except OSError:
        return None
    for path in paths:
        setter = getattr(ctypes.CDLL(path), "openblas_set_num_threads_local", None)
        if setter is not None:
            setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
            return setter
    return None


_blas = {"setter": None, "users": 0, "saved": None, "looked": False}
_blas_lock = forks.lock()


@contextlib.contextmanager
def one_blas_thread():
    """OpenBLAS on one thread (process-wide) while calls are interpreted beside a compile:
    its threads spin-wait for each other, so with a core taken by LLVM every matmul
    stalls (a transformer step interpreted in 3-6 s instead of 0.8 s on a loaded host)."""
    with _blas_lock:
        if not _blas["looked"]:
            _blas["setter"], _blas["looked"] = _blas_threads_setter(), True
        setter = _blas["setter"]
        if setter is not None and _blas["users"] == 0:
            _blas["saved"] = setter(1)
        _blas["users"] += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas["users"] -= 1
            if setter is not None and _blas["users"] == 0:
                setter(_blas["saved"])


_running, _running_lock = set(), forks.lock()     # Compiling objects whose thread runs


def _after_fork():
    """The child has none of the compile threads."""
    for compiling in _running:
        compiling._in_child()
    _running.clear()


os.register_at_fork(after_in_child=_after_fork)


def stages(compile_graph, graph):
    """(the compile's part that releases the GIL as a function of no arguments, its
    estimated seconds or None): a backend compiler's `prepare(graph)` does the rest first,
    here, and returns the former with its estimate; a compiler without one does all of
    its work in the returned function."""
    prepare = getattr(compile_graph, "prepare", None)
    if prepare is None:
        return functools.partial(compile_graph, graph), None
    return prepare(graph)


def start(entry, compile_graph):
    """The program that serves `entry`'s first calls: `compile_graph(entry.traced)`, or,
    for a graph of at least background_threshold() nodes every kernel of which has a NumPy
    kernel, which interprets in less time than the rest of its compile takes, on a host
    with a core idle for each the compile would use, a Compiling one (a compiler with no
    estimate: always)."""
    threshold, graph = background_threshold(), entry.traced
    if not threshold or size(graph) < threshold:
        return compile_graph(graph)
    finish, estimate = stages(compile_graph, graph)
    cost = interpreted_cost(graph)
    if estimate is not None and (cost >= estimate or
                                 idle_cores() < getattr(finish, "cores", 1)):
        return finish()
    try:
        interpreted = InterpretedProgram(inline_calls(graph), "numpy")
    except KernelNotFoundError:
        return finish()                     # a kernel only the compiler can run
    return Compiling(entry, compile_graph, finish, cost, estimate, interpreted)
