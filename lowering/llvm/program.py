"""compile_graph: graph -> Program, a short list of steps run on per-call buffers.

The compiler runs in phases, each a function of the last one's result: passes, partition
and schedule (lowering.llvm.schedule), codegen (lowering.llvm.codegen), the artifact
(lowering.llvm.artifact: what the graph cache stores) and the Program, which loads an
artifact and runs it. Steps are native segments (the groups between two other steps: one
ctypes call of the runner each, given the segment's table and the array objects
themselves; lowering.llvm.entries), Python calls of numpy kernels for nodes the llvm
backend lacks, and native groups big enough (> settings.parallel_ns of estimated work) to
split across settings.num_threads threads (lowering.llvm.pool: one native call per step).
A graph the llvm backend fully covers and that needs no threads is one native call.

Inputs are checked against the graph's types before any native code runs: arrays of the
right shape and dtype are used as they are if C-contiguous and aligned, else copied;
Python scalars are converted; anything else raises ShapeError/DTypeError naming the input.
Temporaries and large outputs are kept between calls (lowering.llvm.buffers: fresh memory
page-faults); each running call has buffers of its own, so concurrent calls are safe.
Temporaries whose lifetimes do not overlap share memory, and an output may be written into
a donated input's buffer (lowering.llvm.liveness; `Program.donations`).
"""
import functools

import numpy as np

from ir import Literal
from ir.errors import ArgumentError, DTypeError, ShapeError
from ir.passes import cse, fold_constants, inline_calls
from lowering.heap import building
from lowering.interpreter import own, run_node
from lowering.llvm import (artifact, buffers, callbacks, caches, codegen, entries, graph_cache,
                           irutil, linalg, pool, schedule, split, target, warm)
from lowering.llvm.fusion import check_kernels
from lowering.llvm.rewrites import rewrite_matmuls
from lowering.profile import note, phase
from lowering.settings import settings
from registry.tables import KERNELS

_impls = KERNELS.entries       # (kernel, backend) -> impl, read on hot paths

_CARRAY = 0x0101           # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED


def _evaluate(node, values):
    """Constant folding through the numpy kernels (kernels without one are left alone)."""
    return run_node(node, values) if (node.kernel, "numpy") in _impls else None


def optimize(graph):
    """The graph the llvm backend partitions: calls inlined, constants folded and dead
    nodes dropped (fold_constants ends with dce; merging leaves no node dead), common
    subexpressions merged, thin matmuls rewritten."""
    return rewrite_matmuls(cse(fold_constants(inline_calls(graph), _evaluate)))


def compile_graph(graph):
    """Compile an ir.Graph for the llvm backend: inline calls, optimize, then partition,
    schedule, generate one module and load it (through the caches). Returns a Program;
    `graph.donated` (if set) are the inputs whose buffers its outputs may take."""
    return _load(_artifact(graph), getattr(graph, "donated", ()))


def prepare(graph):
    """compile_graph in two parts, for jit's background compiles (tracer.background_compile): this
    call does the part that holds the GIL (passes to codegen) and returns (the rest, a
    function of no arguments giving the Program: loading, where LLVM compiles the module
    with the GIL released unless a cache has it; LLVM's estimated CPU seconds for it, by
    its lines (split.seconds), or 0 when a cache has its native code). The rest's `cores`:
    how many cores its compile would use: the module's parts (a module long enough is cut
    into parts), and one for each library it calls that compiles beside it."""
    art = _artifact(graph)
    seconds = 0 if target.cached(art.text) else split.seconds(art.text.count("\n"))
    finish = functools.partial(_load, art, getattr(graph, "donated", ()))
    finish.cores = (split.cores(seconds) if seconds else 0) + target.libraries_to_compile(
        art.text)
    return finish, seconds


def _artifact(graph):
    with building():
        return _compile(graph)


def _load(art, donated):
    with building():
        return Program(art, donated)


compile_graph.prepare = prepare


compile_graph.warm = warm.worker


def _compile(graph):
    check_kernels(graph)
    with phase("passes"):
        g = optimize(graph)
    key = graph_cache.key_of(g)
    art = graph_cache.lookup(key, g)
    if art is not None:
        note("graph-cache-hits")
        return art
    target.prefetch(linalg.library_declarations(g))
    with phase("partition"):
        part = schedule.partition(g)
    with phase("schedule"):
        sched = schedule.Schedule(part, settings.num_threads, settings.parallel_ns)
    warm.runtime({s.kind for s in sched.steps})
    with phase("codegen"):
        art = artifact.build(sched, codegen.emit_program(sched, graph_cache.call_key))
    graph_cache.store(key, g, art)
    return art


class Program:
    """A compiled graph, loaded from its artifact: `run(leaves)` -> list of output arrays;
    `as_text()` is the LLVM module; `graph` the optimized graph with each fused group as
    one `fusion` node. Outputs may be written into the buffers of the inputs numbered in
    `donated` (see `donations`)."""
    backend = "llvm"

    def __init__(self, art, donated=()):
        self.graph = graph = art.graph
        self._text, self._errors = art.text, art.errors
        warm.runtime({s[0] for s in art.steps})     # (a cached artifact skipped codegen)
        self._in = [(v.aval.shape, v.aval.dtype) for v in graph.invars]
        self._consts = [np.require(c, v.aval.dtype, ["C", "A"])
                        for v, c in zip(graph.constvars, graph.consts)]
        self._alloc = art.specs
        self._outs = art.outs
        nfixed = len(self._in) + len(self._consts)
        self._copied = _copied(art.outs, nfixed)
        self._pooled = [d is not None and nfixed + j not in art.outs
                        for j, (_, d) in enumerate(art.specs)]
        self._temps = buffers.Temps([s for s, p in zip(art.specs, self._pooled) if p],
                                    [o for o, p in zip(art.plan.offsets, self._pooled) if p],
                                    art.plan.size)
        fresh = [k for k, c in zip(art.outs, self._copied) if type(k) is int and not c]
        self._recycled = {k: j for j, k in enumerate(
            k for k in fresh if buffers.RECYCLE_MIN <= buffers.nbytes(art.specs[k - nfixed]))}
        self._outputs = buffers.Outputs([art.specs[k - nfixed] for k in self._recycled])
        self.donations = _donations(art, donated)
        fixed = frozenset(id(x) for c in self._consts for x in (c, c.base) if x is not None)
        self._reusable = functools.partial(_reusable, fixed)
        self._temps.prefault()          # before LLVM's work, which the first call waits for
        self._outputs.prefault()
        self.loaded = target.load(self._text)
        self.steps = [s[0] for s in art.steps]    # "segment" | "python" | "parallel"
        if all(s[0] == "segment" for s in art.steps):
            self.run = self._fast_run([(self._table(calls), objects)
                                       for _, objects, calls in art.steps])
        else:
            self._steps = [self._step(*s) for s in art.steps]
        if art.callbacks:       # the table of the host callbacks its code calls
            self.run = _with_callbacks(self.run, art.callbacks)

    def as_text(self):
        return self._text

    def __repr__(self):
        return f"<llvm Program {self.loaded.key[:12]}: {' '.join(self.steps)}>"

    # ---- per call ---------------------------------------------------------------------

    def run(self, leaves):
        """The outputs of the graph on `leaves` (a list of arrays or scalars)."""
        bufs = self._inputs(leaves)
        bufs.extend(self._consts)
        temps, nfixed, recycled = self._temps.take(), len(bufs), self._recycled
        donors = self._donors(leaves, bufs) if self.donations else {}
        it = iter(temps)
        bufs.extend([next(it) if p else bufs[donors[k]] if k in donors else
                     self._outputs.takers[recycled[k]]() if k in recycled
                     else np.empty(s, d) if d is not None else None
                     for k, ((s, d), p) in enumerate(zip(self._alloc, self._pooled), nfixed)])
        for step in self._steps:    # (a parallel step is one native call: no thread
            step(bufs)              # writes the buffers once it returns or raises)
        result = [np.array(k.value) if type(k) is Literal else bufs[k].copy() if c else bufs[k]
                  for k, c in zip(self._outs, self._copied)]
        self._temps.give(temps)
        return result

    def _donors(self, leaves, bufs):
        """{output buffer: input} of this call's donations whose buffers may be written."""
        ins = sorted(set(self.donations.values()))
        ok = dict(zip(ins, self._reusable(leaves, [bufs[i] for i in ins])))
        return {k: i for k, i in self.donations.items() if ok[i]}

    def _inputs(self, leaves):
        if len(leaves) != len(self._in):
            raise ArgumentError(f"llvm program takes {len(self._in)} inputs, got {len(leaves)}")
        return [x if type(x) is np.ndarray and x.dtype is d and x.shape == s and
                x.flags.num & _CARRAY == _CARRAY else _convert(k, x, s, d)
                for k, (x, (s, d)) in enumerate(zip(leaves, self._in))]

    def _fast_run(self, segments):
        """`run` as straight-line Python for a program of native segments only: the hot
        path of every jitted call, so no loops, lists of buffers or attribute lookups
        (Temps.take and give inlined)."""
        nin, ncon, temps = len(self._in), len(self._consts), self._temps
        env = {"ndarray": np.ndarray, "empty": np.empty, "array": np.array, "id": id,
               "convert": _convert, "fail": self._fail, "inputs": self._inputs,
               "reusable": self._reusable,
               "pop": temps.free.pop, "push": temps.free.append, "free": temps.free,
               "kept": temps.kept, "fresh": temps.fresh}
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
        pooled = [nin + ncon + j for j, p in enumerate(self._pooled) if p]
        if pooled:
            lines += ["    try:", "        temps = pop()", "    except IndexError:",
                      "        temps = fresh()", f"    {''.join(f'b{k}, ' for k in pooled)}= temps"]
        donated = sorted(set(self.donations.values()))
        if donated:
            lines.append(f"    ok = reusable(leaves, ({''.join(f'b{i}, ' for i in donated)}))")
        for k, (shape, dtype) in enumerate(self._alloc, nin + ncon):
            if k in self._recycled:
                env[f"T{k}"] = self._outputs.takers[self._recycled[k]]
                make = f"T{k}()"
            elif k not in pooled:
                env[f"S{k}"], env[f"D{k}"] = shape, dtype
                make = f"empty(S{k}, D{k})"
            else:
                continue
            i = self.donations.get(k)
            lines.append(f"    b{k} = {make}" if i is None else
                         f"    b{k} = b{i} if ok[{donated.index(i)}] else {make}")
        if segments:
            env["run_segment"] = entries.runner()
        for i, (table, objects) in enumerate(segments):
            env[f"T{i}"] = table
            lines += [f"    t = (T{i}, {''.join(f'b{k}, ' for k in objects)})",
                      "    rc = run_segment(id(t))", "    if rc:", "        fail(rc)"]
        outs = []
        for j, (k, copied) in enumerate(zip(self._outs, self._copied)):
            if type(k) is Literal:
                env[f"L{j}"] = k.value
                outs.append(f"array(L{j})")
            else:
                outs.append(f"b{k}.copy()" if copied else f"b{k}")
        lines.append(f"    r = [{', '.join(outs)}]")
        if pooled:
            lines += ["    if len(free) < kept[0]:", "        push(temps)"]
        lines.append("    return r")
        exec(caches.python_code(target.disk_cache_dir(), "\n".join(lines),
                                f"<llvm program {self.loaded.key[:12]}>"), env)
        return env["run"]

    def _fail(self, rc):
        failure = callbacks.take_failure()
        if failure is not None:         # a host callback raised: its exception
            raise failure
        error, message = irutil.failure(self._errors, rc)
        raise error(f"{message} (llvm backend)")

    # ---- steps ------------------------------------------------------------------------

    def _step(self, kind, *args):
        return getattr(self, "_" + kind)(*args)

    def _table(self, calls):
        """The runner's table of a segment's `calls` (entries.segment_table)."""
        return entries.segment_table(calls, self.loaded.address)

    def _segment(self, objects, calls):
        run, table, fail = entries.runner(), self._table(calls), self._fail

        def step(bufs):
            arrays = tuple([table] + [bufs[k] for k in objects])
            rc = run(id(arrays))
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
        """Split calls (a kernel's prepare step, then its work items) as the phases of one
        pool.Step, each called through its `.a` entry (codegen: any number of buffers)."""
        step = pool.Step([(self.loaded.address(name + ".a"), pos, _pieces(n, threads, grain or GRAIN))
                          for name, pos, n, grain in calls], threads)
        objects, run, fail = step.objects, step.run, self._fail

        def go(bufs):
            rc = run(tuple([bufs[k] for k in objects]))
            if rc:
                fail(rc)
        return go


def _with_callbacks(run, table):
    """`run` with `table` as the calling thread's host callback sites while it runs
    (lowering.llvm.callbacks)."""
    def run_with(leaves):
        with callbacks.running(table):
            return run(leaves)
    return run_with


CHUNKS = 2      # pieces per thread of a split call
GRAIN = 16      # piece boundaries are multiples of this many items (16 float lanes)


def _pieces(n, threads, grain=GRAIN):
    """Boundaries of about equal pieces, as many per thread as n allows (up to CHUNKS),
    each starting on a multiple of `grain` (the nearest to the equal split)."""
    k = max(1, min(CHUNKS * threads, n // grain))
    k -= k % threads if k > threads else 0
    return sorted({0, n} | {(2 * n * c + k * grain) // (2 * k * grain) * grain
                            for c in range(1, k)})


def _convert(k, x, shape, dtype):
    """Input k as a C-contiguous aligned array of the compiled type, or a clear error."""
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        if arr.dtype.newbyteorder("=") != dtype:       # big-endian data is converted
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


def _donations(art, donated):
    """{output buffer: input}: each output, in order, takes the first input of `donated`
    its plan allows (dead once it is written, same shape and dtype) that none before took."""
    taken, out = set(), {}
    for k, donors in zip(art.outs, art.plan.donors):
        i = next((i for i in donors if i in donated and i not in taken), None)
        if i is not None:
            taken.add(i)
            out[k] = i
    return out


def _reusable(fixed, leaves, arrays):
    """Per input array of a call, whether an output may be written into it: it owns its
    writable memory, and no other argument nor a constant (ids `fixed`) is it or a view
    of it (a copy the call made owns memory nobody else holds)."""
    held = {}
    for x in leaves:
        for h in (x, getattr(x, "base", None)):
            held[id(h)] = held.get(id(h), 0) + 1
    return [x.base is None and x.flags.writeable and held.get(id(x), 0) <= 1 and
            id(x) not in fixed for x in arrays]


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

