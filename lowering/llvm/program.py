"""compile_graph: graph -> Program, a short list of steps run on per-call buffers.

Steps are native segments (one ctypes call each, taking the array objects themselves;
a long run of groups is cut into segments of bounded size, see SEGMENT_SIZE),
Python calls of numpy kernels for nodes the llvm backend lacks, and native groups big
enough (> PARALLEL_NS of estimated work) to split across TRACER_NUM_THREADS threads. A
graph the llvm backend fully covers and that needs no threads is one native call.

Inputs are checked against the graph's types before any native code runs: arrays of the
right shape and dtype are used as they are if C-contiguous and aligned, else copied;
Python scalars are converted; anything else raises ShapeError/DTypeError naming the input.
Each call allocates its own outputs and temporaries, so concurrent calls are safe.
"""
import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ir import Literal
from ir.errors import ArgumentError, DTypeError, ShapeError
from ir.passes import cse, dce, fold_constants, inline_calls
from lowering.interpreter import own, run_node
from lowering.llvm import codegen, graph_cache, irutil, target
from lowering.llvm.fusion import Partition, check_kernels, display_graph
from lowering.llvm.rewrites import thin_matmuls
from lowering.llvm.rows import merge_rows
from lowering.profile import note, phase
from registry.tables import _kernels

PARALLEL_NS = 500_000
SEGMENT_SIZE = 512      # bound on a segment's nodes + buffers: its groups are inlined into
                        # its entry, whose length LLVM's time then grows faster than
_pools, _pool_lock = {}, threading.Lock()
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_CARRAY = 0x0101           # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED


def num_threads():
    value = os.environ.get("TRACER_NUM_THREADS") or str(os.cpu_count() or 1)
    try:
        return max(1, int(value))
    except ValueError:
        raise ArgumentError(f"TRACER_NUM_THREADS must be an integer, got {value!r}") from None


def _forget_pools():
    """A forked child inherits the pools but not their threads: start afresh."""
    global _pool_lock
    _pools.clear()
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pools)


def _pool(n):
    with _pool_lock:
        if n not in _pools:
            _pools[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="tracer-llvm")
        return _pools[n]


class _Slots:
    """Numbering of a call's buffers: inputs, consts, then one slot per value a step
    produces (`spec` (shape, dtype) is allocated per call; None is filled by a Python
    step) and per kernel scratch buffer."""

    def __init__(self, graph):
        fixed = graph.invars + graph.constvars
        self.nfixed, self.specs = len(fixed), []
        self.index = {id(v): k for k, v in enumerate(fixed)}

    def of(self, x, spec=None):
        if isinstance(x, Literal):
            return x
        k = self.index.get(id(x))
        if k is None:
            k = self.index[id(x)] = self.nfixed + len(self.specs)
            self.specs.append(spec or (None, None))
        return k

    def scratch(self, nbytes):
        self.specs.append(((max(int(nbytes), 1),), np.dtype(np.uint8)))
        return self.nfixed + len(self.specs) - 1


def _evaluate(node, values):
    """Constant folding through the numpy kernels (kernels without one are left alone)."""
    return run_node(node, values) if (node.kernel, "numpy") in _kernels else None


def compile_graph(graph):
    """Compile an ir.Graph for the llvm backend: inline calls, optimize, fuse, generate
    one module, load it (through the caches). Returns a Program."""
    check_kernels(graph)
    with phase("passes"):
        g = thin_matmuls(dce(cse(fold_constants(inline_calls(graph), _evaluate))))
    key = graph_cache.key_of(g)
    entry = graph_cache.lookup(key)
    if entry is not None:
        note("graph-cache-hits")
        return Program(g, *graph_cache.program_args(g, entry))
    with phase("partition"):
        part = Partition(g)
        part.groups = merge_rows(part, part.groups)
    with phase("codegen"):
        mb, slots, steps = _generate(g, part)
    outs = [slots.of(v) for v in g.outvars]
    program = Program(g, display_graph(g, part.groups), mb, slots, steps, outs)
    graph_cache.store(key, g, part.groups, program.as_text(), mb.errors, slots.specs, steps,
                      outs)
    return program


def _generate(g, part):
    """(module builder, buffer slots, steps) of partitioned graph `g`."""
    mb, slots, threads = codegen.ModuleBuilder(), _Slots(g), num_threads()
    steps, segment, size = [], [], 0     # size: the open segment's nodes + buffers

    def flush():
        nonlocal size
        size = 0
        if segment:
            objects = sorted({p for _, pos, _ in segment for p in pos})
            name = f"s{len(steps)}"
            codegen.emit_segment(mb, name, [(f, [objects.index(p) for p in pos], n)
                                            for f, pos, n in segment], objects)
            steps.append(("segment", name, objects))
            segment.clear()

    for k, grp in enumerate(part.groups):
        if grp.kind == "python":
            flush()
            steps.append(("python", grp.node, [slots.of(x) for x in grp.node.inputs],
                          [slots.of(o) for o in grp.roots]))
            continue
        codegen.emit_group(mb, part, grp, f"g{k}")
        pos = [slots.of(x) for x in grp.leaves] + [
            slots.of(r, (r.aval.shape, r.aval.dtype)) for r in grp.roots]
        if grp.scratch is not None:
            pos.append(slots.scratch(grp.scratch))
        calls = [(f"g{k}.prep", pos, 1)] * grp.prepare + [(f"g{k}", pos, grp.parallel)]
        if threads > 1 and grp.parallel > 1 and grp.work > PARALLEL_NS:
            flush()
            steps.append(("parallel", calls, threads))
        else:       # only called from a segment entry: inlined there, then dropped
            if size + len(grp.nodes) + len(pos) > SEGMENT_SIZE:
                flush()
            for name, _, _ in calls:
                codegen.inline_into_caller(mb.module.globals[name])
            segment.extend(calls)
            size += len(grp.nodes) + len(pos)
    flush()
    return mb, slots, steps


class Program:
    """A compiled graph: `run(leaves)` -> list of output arrays; `as_text()` is the LLVM
    module; `graph` the optimized graph with each fused group as one `fusion` node."""
    backend = "llvm"

    def __init__(self, graph, shown, mb, slots, steps, outs):
        self.graph = shown
        with phase("codegen"):
            self._text = mb.text()
        self._errors = list(mb.errors)
        self.loaded = target.load(self._text)
        self._in = [(v.aval.shape, v.aval.dtype) for v in graph.invars]
        self._consts = [np.require(c, v.aval.dtype, ["C", "A"])
                        for v, c in zip(graph.constvars, graph.consts)]
        self._alloc = slots.specs
        self._outs = outs
        self._copied = _copied(outs, len(self._in) + len(self._consts))
        self.steps = [s[0] for s in steps]        # "segment" | "python" | "parallel"
        if all(s[0] == "segment" for s in steps):
            self.run = self._fast_run([(self._function(name), objects)
                                       for _, name, objects in steps])
        else:
            self._steps = [self._step(*s) for s in steps]

    def as_text(self):
        return self._text

    def __repr__(self):
        return f"<llvm Program {self.loaded.key[:12]}: {' '.join(self.steps)}>"

    # ---- per call ---------------------------------------------------------------------

    def run(self, leaves):
        """The outputs of the graph on `leaves` (a list of arrays or scalars)."""
        bufs = self._inputs(leaves)
        bufs.extend(self._consts)
        bufs.extend([np.empty(s, d) if d is not None else None for s, d in self._alloc])
        for step in self._steps:
            step(bufs)
        return [np.array(k.value) if type(k) is Literal else bufs[k].copy() if c else bufs[k]
                for k, c in zip(self._outs, self._copied)]

    def _inputs(self, leaves):
        if len(leaves) != len(self._in):
            raise ArgumentError(f"llvm program takes {len(self._in)} inputs, got {len(leaves)}")
        return [x if type(x) is np.ndarray and x.dtype is d and x.shape == s and
                x.flags.num & _CARRAY == _CARRAY else _convert(k, x, s, d)
                for k, (x, (s, d)) in enumerate(zip(leaves, self._in))]

    def _fast_run(self, segments):
        """`run` as straight-line Python for a program of native segments only: the hot
        path of every jitted call, so no loops, lists of buffers or attribute lookups."""
        nin, ncon = len(self._in), len(self._consts)
        env = {"ndarray": np.ndarray, "empty": np.empty, "array": np.array, "id": id,
               "convert": _convert, "fail": self._fail, "inputs": self._inputs}
        lines = ["def run(leaves):", f"    if len(leaves) != {nin}:", "        inputs(leaves)"]
        if nin:
            lines.append(f"    {''.join(f'b{k}, ' for k in range(nin))}= leaves")
        for k, (shape, dtype) in enumerate(self._in):
            env[f"S{k}"], env[f"D{k}"] = shape, dtype
            lines += [f"    if not (type(b{k}) is ndarray and b{k}.dtype is D{k} and b{k}.shape == "
                      f"S{k} and b{k}.flags.num & {_CARRAY} == {_CARRAY}):",
                      f"        b{k} = convert({k}, b{k}, S{k}, D{k})"]
        for j, c in enumerate(self._consts):
            env[f"b{nin + j}"] = c
        for j, (shape, dtype) in enumerate(self._alloc):
            env[f"S{nin + ncon + j}"], env[f"D{nin + ncon + j}"] = shape, dtype
            lines.append(f"    b{nin + ncon + j} = empty(S{nin + ncon + j}, D{nin + ncon + j})")
        for i, (fn, objects) in enumerate(segments):
            env[f"F{i}"] = fn
            lines += [f"    t = ({''.join(f'b{k}, ' for k in objects)})", f"    rc = F{i}(id(t))",
                      "    if rc:", "        fail(rc)"]
        outs = []
        for j, (k, copied) in enumerate(zip(self._outs, self._copied)):
            if type(k) is Literal:
                env[f"L{j}"] = k.value
                outs.append(f"array(L{j})")
            else:
                outs.append(f"b{k}.copy()" if copied else f"b{k}")
        lines.append(f"    return [{', '.join(outs)}]")
        exec(compile("\n".join(lines), f"<llvm program {self.loaded.key[:12]}>", "exec"), env)
        return env["run"]

    def _fail(self, rc):
        error, message = irutil.failure(self._errors, rc)
        raise error(f"{message} (llvm backend)")

    # ---- steps ------------------------------------------------------------------------

    def _step(self, kind, *args):
        return getattr(self, "_" + kind)(*args)

    def _function(self, name):
        """Segment entry `name`: its arrays are passed as one tuple."""
        return self.loaded.function(name, _I64, _P)

    def _segment(self, name, objects):
        fn = self._function(name)
        objects, fail = tuple(objects), self._fail

        def step(bufs):
            arrays = tuple([bufs[k] for k in objects])
            rc = fn(id(arrays))
            if rc:
                fail(rc)
        return step

    def _python(self, node, ins, outs):
        def step(bufs):
            args = [bufs[k] if type(k) is int else k.value for k in ins]
            for val, k in zip(own(run_node(node, args, "numpy"), args), outs):
                bufs[k] = np.require(val, None, ["C", "A"])
        return step

    def _parallel(self, calls, threads):
        """Split calls: a function with more buffers than ctypes passes is called through
        its `.t` entry, which takes the arrays as one tuple."""
        fns = [(self.loaded.function(name + ".t", _I64, _P, _I64, _I64), pos, n, True)
               if len(pos) + 2 > codegen.MAX_CALL_ARGS else
               (self.loaded.function(name, _I64, *[_P] * len(pos), _I64, _I64), pos, n, False)
               for name, pos, n in calls]
        pool, fail = _pool(threads - 1), self._fail

        def step(bufs):
            for fn, pos, n, packed in fns:
                arrays = tuple([bufs[k] for k in pos])
                ptrs = [id(arrays)] if packed else [a.ctypes.data for a in arrays]
                rc = _Split(fn, ptrs, _pieces(n, threads)).run(pool, threads - 1)
                if rc:
                    fail(rc)
        return step


CHUNKS = 2      # pieces per thread of a split call
GRAIN = 16      # piece boundaries are multiples of this many items (16 float lanes)


def _pieces(n, threads):
    """Boundaries of equal pieces, as many per thread as n allows (up to CHUNKS)."""
    k = max(1, min(CHUNKS * threads, n // GRAIN))
    k -= k % threads if k > threads else 0
    return sorted({0, n} | {n * c // k // GRAIN * GRAIN for c in range(1, k)})


class _Split:
    """One split call: its pieces go to whichever thread asks next, and the caller waits
    only for the pieces taken. A worker that starts late (its core busy: right after a
    jax.jit call the 2-thread W1 took as long as 1 thread) finds nothing left instead of
    being waited for."""

    def __init__(self, fn, ptrs, bounds):
        self.fn, self.ptrs, self.bounds = fn, ptrs, bounds
        self.todo = iter(range(len(bounds) - 1))    # next() is atomic under the GIL
        self.left, self.rc, self.cv = len(bounds) - 1, 0, threading.Condition()

    def work(self):
        for c in self.todo:
            rc = self.fn(*self.ptrs, self.bounds[c], self.bounds[c + 1])
            with self.cv:
                self.rc, self.left = self.rc or rc, self.left - 1
                if not self.left:
                    self.cv.notify_all()

    def run(self, pool, helpers):
        for _ in range(helpers):
            pool.submit(self.work)
        self.work()
        with self.cv:
            self.cv.wait_for(lambda: not self.left)
        return self.rc


def _convert(k, x, shape, dtype):
    """Input k as a C-contiguous aligned array of the compiled type, or a clear error."""
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        if arr.dtype != dtype:
            raise DTypeError(f"llvm program input {k}: dtype {arr.dtype}, but it was compiled "
                             f"for {dtype}; cast with .astype({dtype.name!r})")
    else:
        try:
            arr = np.asarray(x)
        except Exception as e:
            raise ArgumentError(f"llvm program input {k}: cannot convert "
                                f"{type(x).__name__} to an array: {e}") from None
        if arr.dtype != dtype and not np.can_cast(arr.dtype, dtype, "same_kind"):
            raise DTypeError(f"llvm program input {k}: a {arr.dtype} value, but it was "
                             f"compiled for {dtype}")
    if arr.shape != shape:
        raise ShapeError(f"llvm program input {k}: shape {arr.shape}, but it was compiled "
                         f"for {shape}")
    return np.require(arr, dtype, ["C", "A"])


def _copied(outs, nfixed):
    """Per output slot: must the program return a copy? Inputs and constants are not the
    program's to give away, and a value returned twice is returned once as itself (cse
    merges equal outputs): every result must be an array of its own."""
    seen, copied = set(), []
    for k in outs:
        fixed = type(k) is int and (k < nfixed or k in seen)
        copied.append(fixed)
        if type(k) is int:
            seen.add(k)
    return copied
