"""The schedule phase: a partition made plain data -- each group's launch facts, and
which function runs when, on which buffers -- so that codegen only emits, and a test
reads what will run (`str(schedule)`).

A graph's `Schedule` is a list of steps over numbered per-call buffers (inputs, consts,
then one per value a step produces and one per kernel scratch): native segments (group
functions called in order from one entry; a long run is cut into segments of bounded
size), parallel steps (one group big enough to split across threads) and Python steps
(a numpy kernel for a node the llvm backend lacks). A `Region` (the body, condition or
branch of a control-flow node) is scheduled the same way but runs single-threaded on
buffers at fixed offsets in the scratch its node passes: its temporaries, then one area
shared by its groups' own scratch (they run one after another). A control node's call
shows its regions' schedules nested under it.

Launch facts (`Launch`) come from the partition and the kernels' hooks, here and only
here.
"""
import math
from dataclasses import dataclass, replace

import numpy as np

from ir import Literal, Var
from lowering.llvm import fusion
from lowering.llvm.epilogues import merge_epilogues
from lowering.llvm.rows import merge_rows
from lowering.settings import settings
from registry.tables import version

ALIGN = 64          # byte alignment of each buffer in a region's scratch


def nbytes(aval):
    return aval.size * aval.dtype.itemsize


def aligned(n):
    return -(-n // ALIGN) * ALIGN


def partition(graph):
    """Phase 1: the graph's groups in execution order (fusion, then row fusion, then
    epilogue fusion)."""
    part = fusion.Partition(graph)
    part.groups = merge_epilogues(part, merge_rows(part, part.groups))
    return part


def estimate_ns(elements, cost):
    """The part of a loop's single-thread time that threads divide: its arithmetic, `cost`
    units (an add is 1) per element at ~0.035 ns/unit. It decides whether splitting pays;
    moving bytes does not count, as a second thread hardly adds memory bandwidth (sums
    and copies measured no faster on 2 threads, sum(axis=0) split by columns 2x slower)."""
    return 0.035 * elements * cost


@dataclass(frozen=True)
class Launch:
    """How a group's function is called: `items` independent work items (a call does the
    slice [start, end)), `ns` its estimated single-thread time (whether splitting the
    items across threads pays), `scratch` bytes of scratch (None: no scratch argument),
    the work items of a `prepare` function that runs first (0: none), and `grain`: split
    pieces start on multiples of it (None: of program.GRAIN; a matmul's is its register
    tile's rows)."""
    items: int = 1
    ns: float = 0.0
    scratch: int = None
    prepare: int = 0
    grain: int = None

    def functions(self, name):
        """[(function name, work items)] of one call of group function `name`."""
        return [(name + ".prep", self.prepare)] * bool(self.prepare) + [(name, self.items)]

    def __str__(self):
        return (f"items {self.items}, ~{self.ns:.0f} ns" +
                (f", scratch {self.scratch} B" if self.scratch is not None else "") +
                (f", prepare {self.prepare}" if self.prepare else "") + (f", grain {self.grain}" if self.grain else ""))


def _cost(part, nodes, default):
    return 1 + sum(getattr(part.impls[id(m)], "cost", default) for m in nodes)


def launch(part, grp):
    """The launch facts of group `grp` (not a Python fallback) of partition `part`."""
    shape = grp.shape
    if grp.kind == "loop":
        size, outer = math.prod(shape), fusion.parallel_extent(shape[:-2])
        items = (size if grp.flat else (outer if outer > 1 else shape[-2]) if grp.tiled
                 else fusion.parallel_extent(shape))
        return Launch(items, estimate_ns(size, _cost(part, grp.nodes, 0)))
    if grp.kind == "rows":
        rows = math.prod(shape[:-1])
        return Launch(rows, estimate_ns(rows * shape[-1], _cost(part, grp.nodes, 1)))
    n, impl = grp.node, part.impls[id(grp.node)]        # a whole kernel
    ins, outs = [x.aval for x in n.inputs], [o.aval for o in n.outputs]
    default_ns = estimate_ns(ins[0].size if ins else 0, _cost(part, grp.nodes, 0))
    work = impl.hook("work", ins, outs, n.attrs, None)
    facts = Launch(int(impl.hook("parallel", ins, outs, n.attrs, 1)),
                   default_ns if work is None else float(work),
                   impl.hook("scratch", ins, outs, n.attrs, None),
                   int(impl.hook("prepare_items", ins, outs, n.attrs, 1)) if impl.prepare else 0,
                   impl.hook("grain", ins, outs, n.attrs, None))
    if grp.kind == "epilogue":      # and its loops, over the kernel's output
        loops = [m for g in grp.members for m in g.nodes]
        facts = replace(facts, ns=facts.ns + estimate_ns(outs[0].size, _cost(part, loops, 0)))
    return facts


@dataclass(frozen=True)
class Call:
    """Group `group` of the partition run as function `name` (in a region, the region's
    function name is its prefix): its launch facts, its buffers (leaves, roots, then
    scratch; in a region, None: the region's layout places them), and the schedules of
    the regions a control-flow node runs ((label, Region) pairs)."""
    name: str
    group: fusion.Group
    launch: Launch
    buffers: tuple = None
    regions: tuple = ()

    def lines(self):
        grp, bufs = self.group, ""
        what = (f"{grp.kind}{grp.shape}" if grp.node is None else grp.node.kernel
                if grp.kind == "kernel" else f"{grp.kind} {grp.node.kernel}")
        if self.buffers is not None:
            names = [f"b{k}" for k in self.buffers]
            nin, nout = len(grp.leaves), len(grp.leaves) + len(grp.roots)
            bufs = " " + " ".join(names[:nin] + ["->"] + names[nin:nout] +
                                  [f"+ scratch {k}" for k in names[nout:]])
        out = [f"{self.name} {what} [{len(grp.nodes)} nodes]{bufs} | {self.launch}"]
        for label, reg in self.regions:
            out += ["  " + line for line in reg.lines(label)]
        return out


def _calls(part):
    """[(group index, group, launch facts or None for a Python fallback)]."""
    return [(k, grp, None if grp.kind == "python" else launch(part, grp))
            for k, grp in enumerate(part.groups)]


def _regions(part, grp):
    """The (label, Region) pairs a control-flow group runs (control.ControlEmitter)."""
    impl = part.impls[id(grp.node)] if grp.node is not None else None
    if not hasattr(impl, "regions"):
        return ()
    return tuple((label, region(g)) for label, g in impl.regions(grp.node))


@dataclass(frozen=True)
class Segment:
    """Native step: the runner (lowering.llvm.entries) calls the entries of its group
    calls in order, on the arrays of `objects` (buffer numbers) passed as one tuple."""
    calls: tuple
    kind = "segment"

    @property
    def objects(self):
        return tuple(sorted({k for c in self.calls for k in c.buffers}))

    def entries(self, forwarded=None):
        """[(function, positions of its buffers in `objects`, work items)] in order, each
        call's functions those of the call whose code it runs (`forwarded`: {call: that
        call}, lowering.llvm.sharing)."""
        at, forwarded = {k: j for j, k in enumerate(self.objects)}, forwarded or {}
        return tuple((f, tuple(at[k] for k in c.buffers), items)
                     for c in self.calls
                     for f, items in c.launch.functions(forwarded.get(c.name, c.name)))

    def program_step(self, forwarded):
        return ("segment", self.objects, self.entries(forwarded))

    def lines(self):
        return ["segment:"] + ["  " + ln for c in self.calls for ln in c.lines()]


@dataclass(frozen=True)
class Parallel:
    """One group call split across `threads` threads (called from Python)."""
    calls: tuple
    threads: int
    kind = "parallel"

    def program_step(self, forwarded):
        """Its functions are those of the call whose code it runs (`forwarded`: {call: that
        call}, lowering.llvm.sharing), with its own buffers and work items."""
        c = self.calls[0]
        fns = c.launch.functions(forwarded.get(c.name, c.name))
        grains = [1] * (len(fns) - 1) + [c.launch.grain]      # a prepare step's: any item
        return ("parallel", tuple((f, c.buffers, items, grain)
                                  for (f, items), grain in zip(fns, grains)), self.threads)

    def lines(self):
        return [f"parallel x{self.threads}:"] + ["  " + ln for ln in self.calls[0].lines()]


@dataclass(frozen=True)
class Python:
    """A node run by its numpy kernel on buffers `ins` (or literals) into `outs`."""
    node: object
    ins: tuple
    outs: tuple
    kind = "python"
    calls = ()

    def program_step(self, forwarded):
        return ("python", self.node, self.ins, self.outs)

    def lines(self):
        ins = " ".join(f"b{k}" if type(k) is int else repr(k.value) for k in self.ins)
        return [f"python {self.node.kernel}: {ins} -> {' '.join(f'b{k}' for k in self.outs)}"]


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

    def scratch(self, size):
        self.specs.append(((max(int(size), 1),), np.dtype(np.uint8)))
        return self.nfixed + len(self.specs) - 1


class Schedule:
    """Phase 2 for a whole graph (see module doc): `steps`, `specs` (shape, dtype) of the
    per-call buffers after the inputs and consts, `outs` (each output's buffer number,
    or its Literal). Groups of more than `parallel_ns` estimated work and more than one
    work item get a parallel step when `threads` > 1; the calls between them make a
    segment."""

    def __init__(self, part, threads, parallel_ns):
        self.part, self.steps = part, []
        slots, segment = _Slots(part.graph), []

        def flush():
            if segment:
                self.steps.append(Segment(tuple(segment)))
                segment.clear()

        for k, grp, facts in _calls(part):
            if facts is None:
                flush()
                self.steps.append(Python(grp.node, tuple(slots.of(x) for x in grp.node.inputs),
                                         tuple(slots.of(o) for o in grp.roots)))
                continue
            bufs = [slots.of(x) for x in grp.leaves] + [
                slots.of(r, (r.aval.shape, r.aval.dtype)) for r in grp.roots]
            if facts.scratch is not None:
                bufs.append(slots.scratch(facts.scratch))
            call = Call(f"g{k}", grp, facts, tuple(bufs), _regions(part, grp))
            if threads > 1 and max(facts.items, facts.prepare) > 1 and facts.ns > parallel_ns:
                flush()
                self.steps.append(Parallel((call,), threads))
                continue
            segment.append(call)
        flush()
        self.specs = tuple(slots.specs)
        self.outs = tuple(slots.of(v) for v in part.graph.outvars)

    def __str__(self):
        g = self.part.graph
        outs = " ".join(f"b{k}" if type(k) is int else repr(k.value) for k in self.outs)
        return "\n".join([f"schedule: {len(g.invars)} inputs, {len(g.constvars)} consts, "
                          f"{len(self.specs)} per-call buffers"] +
                         ["  " + ln for s in self.steps for ln in s.lines()] +
                         [f"  outs {outs}"])


class Region:
    """Phase 2 for a region (see module doc): `calls` in order, `python` (a group needs a
    Python step: the region cannot be native), `out_at` (id of a value -> the region
    output it is written to), `offset` (id of a temporary -> its byte offset in the
    scratch), `temps` (their bytes), `shared` (the groups' own scratch area at offset
    `temps`) and `scratch` (the bytes the node passes)."""

    def __init__(self, graph):
        self.graph, self.part = graph, partition(graph)
        self.python = any(g.kind == "python" for g in self.part.groups)
        fixed = {id(v) for v in graph.invars + graph.constvars}
        self.out_at = {}
        for j, v in enumerate(graph.outvars):
            if type(v) is Var and id(v) not in fixed:
                self.out_at.setdefault(id(v), j)
        self.offset, size = {}, 0
        for grp in self.part.groups:
            for r in grp.roots:
                if id(r) not in self.out_at:
                    self.offset[id(r)], size = size, size + aligned(nbytes(r.aval))
        self.calls = tuple(Call(f"g{k}", grp, facts, regions=_regions(self.part, grp))
                           for k, grp, facts in _calls(self.part) if facts is not None)
        self.temps = size
        self.shared = max((aligned(c.launch.scratch or 0) for c in self.calls), default=0)
        self.scratch = size + self.shared

    def lines(self, label):
        head = (f"{label}: needs a Python step" if self.python else
                f"{label}: temps {self.temps} B, shared {self.shared} B")
        return [head] + ["  " + ln for c in self.calls for ln in c.lines()]

    def __str__(self):
        return "\n".join(self.lines("region"))


def memo(graph, what, token, build):
    """build(), memoized on `graph` itself while `token` holds: it lives as long as the
    graph (a weak-keyed table would keep the graph alive through the value)."""
    table = graph.__dict__.setdefault("_llvm_schedule", {})
    hit = table.get(what)
    if hit is None or hit[0] != token:
        hit = table[what] = (token, build())
    return hit[1]


def region(graph):
    """The Region of `graph` (memoized while the registry and fusion limits stay)."""
    token = (tuple(version(k) for k in sorted(graph.kernels())), settings.key())
    return memo(graph, "region", token, lambda: Region(graph))
