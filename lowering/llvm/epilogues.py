"""Epilogue fusion: a whole kernel that takes epilogues (KernelEmitter(epilogue=True):
conv, matmul; work item i is row i of its one output, out.reshape(-1, C)[i]) and the
elementwise loops right after it over its output's elements (its shape, or a reshape of
it) that read what the group made only at their own element (a bias add, an activation;
a bias broadcast per channel reads a leaf, which is fine) become one group. Per chunk of
rows the kernel runs, then the loops, while those rows are still in cache:
`relu(conv(x, w) + b)` is one parallel step instead of two, and the loops do not read
the kernel's output back from memory.

The loops run as one loop whose values pass in registers, so those needed only inside
the group are never stored. The kernel's output stays a buffer when something after the
group reads it; when nothing does (a weight's gradient read only by its update, a
layer's `dx` only by its activation's derivative), each thread writes its chunks of it
into a chunk-sized buffer on its stack instead, so it takes no memory of the program's
and is never written back.
"""
import contextlib
import copy
import math

from llvmlite import ir

from ir import Var
from lowering.llvm import irutil
from lowering.llvm.emit import Values, emit_kernel, group_function
from lowering.llvm.entries import inline_into_caller
from lowering.llvm.fusion import Group, merge_runs
from lowering.llvm.irutil import i64
from lowering.llvm.protocol import Index
from lowering.settings import settings



SMALL = 256     # bytes: loops making no more than this from the inputs alone run first
PRIVATE_MAX = 1 << 20   # bytes: largest chunk of a kernel output kept on a thread's stack


def merge_epilogues(part, groups):
    """`groups` with each kernel that takes epilogues merged with the loops after it."""
    groups = _hoist_updates(part, _small_first(groups))
    last_read = {}      # value id -> the position of the last group reading it (outputs:
    for k, g in enumerate(groups):                                 # after every group)
        last_read.update((id(x), k) for x in g.leaves)
    last_read.update((id(v), len(groups)) for v in part.graph.outvars)
    order = {id(n): i for i, n in enumerate(part.graph.nodes)}

    def merged_at(k):
        run = _run(part, groups, k)
        return run and (1 + len(run), _epilogue_group(part, groups[k], run, last_read,
                                                      k + len(run), order))
    return merge_runs(groups, merged_at)


def _small_first(groups):
    """`groups` with the loops that make at most SMALL bytes from the graph's inputs (and
    from such loops) first: an optimizer's bias corrections, scalars of its step count,
    were made after the backward pass, so the updates reading them could not move."""
    made = {id(v) for g in groups for v in g.roots}
    first, ready = [], set()
    for g in groups:
        if g.kind == "loop" and _bytes(g.roots) <= SMALL and _ready(g, made, ready):
            first.append(g)
            ready.update(id(v) for v in g.roots)
    moved = {id(g) for g in first}
    return first + [g for g in groups if id(g) not in moved]


def _ready(g, made, *ready):
    """Whether every value group g reads is an input (not in `made`) or in one of the
    sets `ready`."""
    return all(id(x) not in made or any(id(x) in r for r in ready) for x in g.leaves)


def _hoist_updates(part, groups):
    """`groups` with loops that could be a kernel's epilogue but come later moved right
    after that kernel (and the loops already after it), once their other inputs are made
    by then and no more memory is held meanwhile: the bytes of what the loop makes that
    is not a graph output (outputs are allocated for the whole call) are at most those of
    what it reads of the kernel's and nobody between reads (which then dies sooner). An
    optimizer's update of every layer but the last one differentiated (`w - lr * dw`;
    Adam's moments, then the parameter from them) ran as passes of their own after the
    backward pass, and a layer's `(1 - h**2) * dx` came after the next matmul, each
    reading its inputs back. Moving a loop earlier keeps every dependence: it reads only
    what is made by then, and nothing between reads what it makes."""
    outs = {id(v) for v in part.graph.outvars if isinstance(v, Var)}
    made = {id(v) for g in groups for v in g.roots}
    groups, before = list(groups), set()        # before: the roots of groups[:k]
    readers = {}                                # value id -> the groups reading it
    for g in groups:
        for x in g.leaves:
            readers.setdefault(id(x), []).append(g)
    for k in range(len(groups)):
        shape = _output_shape(part, groups[k])
        if shape is None:
            before.update(id(v) for v in groups[k].roots)
            continue
        end = k + 1 + len(_run(part, groups, k))
        produced = {id(v) for g in groups[k:end] for v in g.roots}
        read_between = set()     # of `produced`, what the groups left in place read
        # only a group reading what the run made may move (a group's leaves are all it
        # reads of other groups): the scan ends past the last of them
        pending = {id(r) for v in produced for r in readers.get(v, ())} - {
            id(g) for g in groups[k:end]}
        for j in range(end, len(groups)):
            if not pending:
                break
            g = groups[j]
            if id(g) not in pending:
                continue
            pending.discard(id(g))
            read = [x for x in g.leaves if id(x) in produced]
            if g.kind == "loop" and math.prod(g.shape) == math.prod(shape) \
                    and _ready(g, made, before, produced) \
                    and _bytes(v for v in g.roots if id(v) not in outs) <= _bytes(
                        x for x in read if id(x) not in read_between) \
                    and _reads_own_element(part, g, produced):
                groups.insert(end, groups.pop(j))       # the groups in (end, j] keep their places
                produced.update(id(v) for v in g.roots)
                pending.update(id(r) for v in g.roots for r in readers.get(id(v), ()))
                end += 1
            else:
                read_between.update(id(x) for x in read)
        before.update(id(v) for v in groups[k].roots)
    return groups


def _bytes(values):
    return sum(v.aval.size * v.aval.dtype.itemsize for v in values)


def _output_shape(part, g):
    """The output shape of kernel group g if it takes epilogues and is not empty."""
    n = g.node
    if g.kind != "kernel" or not getattr(part.impls[id(n)], "epilogue", False) \
            or len(n.outputs) != 1 or not n.outputs[0].aval.size:
        return None
    out = n.outputs[0].aval
    items = part.impls[id(n)].hook("parallel", [x.aval for x in n.inputs], [out], n.attrs, 1)
    return out.shape if items * out.shape[-1] == out.size else None


def _run(part, groups, k):
    """The loops after groups[k] that become its epilogue (none if it takes none)."""
    shape, run = _output_shape(part, groups[k]), []
    if shape is None:
        return run
    produced, size = {id(o) for o in groups[k].roots}, 0
    for g in groups[k + 1:]:
        size += len(g.nodes)
        if g.kind != "loop" or math.prod(g.shape) != math.prod(shape) \
                or run and size > settings.max_loop_nodes \
                or not _reads_own_element(part, g, produced):
            break
        run.append(g)
        produced.update(id(v) for v in g.roots)
    return run


def _reads_own_element(part, g, produced):
    """True if loop g reads values in `produced`, and only at its own element: through
    scalar kernels and reshapes (which keep the flat index; other index maps move)."""
    def inputs(n, own):
        keep = own and (part.kind[id(n)] == "scalar" or n.kernel == "reshape")
        return [(y, keep) for y in n.inputs]
    reads, seen = False, set()
    stack = [e for r in g.computed for e in inputs(part.producer[id(r)], True)]
    while stack:
        x, own = stack.pop()
        if not isinstance(x, Var) or (id(x), own) in seen:
            continue
        seen.add((id(x), own))
        if id(x) in produced:
            if not own:
                return False
            reads = True
        elif id(x) not in part.materialized and part.fusable(x):
            stack.extend(inputs(part.producer[id(x)], own))
    return reads


def _epilogue_group(part, kernel, run, last_read, end, order):
    """One group: the kernel's roots, then the loops' values needed after the run (read
    after position `end`, by a group or as an output: `last_read`); `order`: each node's
    position in the graph."""
    def needed(v):
        return last_read.get(id(v), -1) > end
    out = kernel.node.outputs[0]
    private = not needed(out) and _chunk(out.aval)[1] <= PRIVATE_MAX
    grp = Group("epilogue", [r for r in kernel.roots if not private or r is not out] +
                [v for g in run for v in g.roots if needed(v)],
                node=kernel.node, shape=out.aval.shape)
    grp.members, grp.flat, grp.private = run, all(g.flat for g in run), private
    made = {id(v) for g in [kernel] + run for v in g.roots}
    grp.nodes = sorted({id(n): n for g in [kernel] + run for n in g.nodes}.values(),
                       key=lambda n: order[id(n)])
    for g in [kernel] + run:
        grp.leaves += [x for x in g.leaves if id(x) not in made]
        made.update(id(x) for x in g.leaves)
    return grp


def _chunk(aval):
    """(rows, bytes) of the chunks an epilogue group runs its kernel on: about
    settings.epilogue_chunk_bytes, in whole multiples of settings.epilogue_row_multiple."""
    row = aval.shape[-1] * aval.dtype.itemsize
    rows = -(-max(1, settings.epilogue_chunk_bytes // max(row, 1))
             // settings.epilogue_row_multiple) * settings.epilogue_row_multiple
    return rows, rows * row


def emit_epilogue(mb, part, grp, launch, name):
    """Define `name`: per chunk of rows in [start, end), the kernel (its own function
    `name`.k, inlined) then the loops; `name`.prep runs the kernel's prepare step. A
    private kernel output (grp.private) is an argument of `name`.k only: `name` passes
    its chunk buffer, offset so that rows [lo, hi) land in it."""
    kname, shape, out = name + ".k", grp.shape, grp.node.outputs[0]
    private, nleaves = grp.private, len(grp.leaves)
    kgrp = copy.copy(grp)
    kgrp.roots = [out] * private + grp.roots
    emit_kernel(mb, part, kgrp, launch, kname)      # the kernel alone: `name`.k(.prep)
    for f in [kname + ".prep"] * bool(launch.prepare) + [kname]:
        irutil.fold_range_checks(mb.module, f, mb.range_checks.pop(f, ()))
        inline_into_caller(mb.module.globals[f])

    def kernel_args(args, out_ptr):
        return list(args[:nleaves]) + [out_ptr] * private + list(args[nleaves:])
    if launch.prepare:
        fn, ctx = group_function(mb, name + ".prep", grp, launch.scratch, name)
        ctx.b.ret(ctx.b.call(mb.module.globals[kname + ".prep"],
                             kernel_args(fn.args, ir.Constant(irutil.PTR, None))))
    kernel = mb.module.globals[kname]
    fn, ctx = group_function(mb, name, grp, launch.scratch, name)
    cols = shape[-1]
    b, nbuf = ctx.b, len(fn.args) - 2
    chunk, chunk_bytes = _chunk(out.aval)
    count = b.sdiv(b.add(b.sub(ctx.end, ctx.start), i64(chunk - 1)), i64(chunk))
    own = b.alloca(ir.IntType(8), i64(chunk_bytes)) if private else None
    if own is not None:
        own.align = 64
    dest = {id(r): a for r, a in zip(grp.roots, fn.args[nleaves:])}
    with ctx.loop(0, count, "chunk") as q:
        lo = b.add(ctx.start, b.mul(q, i64(chunk)))
        hi = b.add(lo, i64(chunk))
        hi = b.select(b.icmp_signed("<", hi, ctx.end), hi, ctx.end)
        out_ptr = b.gep(own, [b.mul(lo, i64(-cols * out.aval.dtype.itemsize))]) if private \
            else fn.args[nleaves]
        values = Values(ctx, part, {**{id(x): a for x, a in zip(grp.leaves, fn.args)},
                                    id(out): out_ptr})
        rc = b.call(kernel, kernel_args(fn.args[:nbuf], out_ptr) + [lo, hi])
        irutil.return_if_failed(b, rc)
        with _rows(ctx, shape, lo, hi, grp.flat) as index:
            memo = {}
            for g in grp.members:
                at = index if g.shape == shape else Index(b, g.shape, flat=index.flat)
                for r in g.computed:
                    v = values.value(r, at, memo)
                    if id(r) in dest:
                        irutil.store(b, dest[id(r)], at.flat, v, r.aval.dtype)
    ctx.finish()


@contextlib.contextmanager
def _rows(ctx, shape, lo, hi, flat):
    """The elements of rows [lo, hi): one flat loop, or per row a loop over its columns
    (the row's coordinates computed once, for index maps such as a bias broadcast)."""
    b, cols = ctx.b, shape[-1]
    if flat:
        with ctx.loop(b.mul(lo, i64(cols)), b.mul(hi, i64(cols))) as i:
            yield Index(b, shape, flat=i)
        return
    with ctx.loop(lo, hi, "row") as row:
        at_row, base = Index(b, shape[:-1], flat=row).multi, b.mul(row, i64(cols))
        with ctx.loop(0, cols, "j") as j:
            yield Index(b, shape, flat=b.add(base, j), multi=at_row + [j])
