"""Buffer assignment by liveness: which of a call's buffers may share memory.

A temporary (a per-call buffer that is no input, constant or output) lives from the group
call that writes it to the last one that reads it. Temporaries whose lifetimes do not
overlap may occupy the same bytes, so `plan` lays them all out in one arena, each at an
ALIGN-aligned offset: the largest first, each at the lowest offset free over its whole
lifetime (XLA's heap simulator places buffers the same way).

In place: a loop of elementwise scalar kernels storing one root reads each leaf element
only to compute the root element at the same index, so the root may take the buffer of a
leaf of its size that dies in that loop (every load of an element feeds the one store to
it, so no load can move after it). Temporaries take dying temporaries' buffers this
way, and an output may take a dying input's buffer: `Plan.donors` lists, per output,
the inputs whose buffers could hold it, for `donate_argnums`.
"""
from dataclasses import dataclass

import numpy as np

from ir import Var
from lowering.llvm.buffers import nbytes
from lowering.llvm.schedule import aligned



@dataclass(frozen=True)
class Plan:
    """`offsets`: per per-call buffer (numbered after the inputs and consts), its byte
    offset in the arena if it is a temporary, else None; `size`: the arena's bytes;
    `donors`: per graph output, the inputs that are dead once it is written and have its
    shape and dtype (tuples of plain values, as the graph cache stores them)."""
    offsets: tuple
    size: int
    donors: tuple


def _calls(sched):
    """(read buffers, written buffers, group or None) of every call, in order."""
    for step in sched.steps:
        if step.kind == "python":
            yield [k for k in step.ins if type(k) is int], step.outs, None
            continue
        for c in step.calls:
            n = len(c.group.leaves)
            yield c.buffers[:n], c.buffers[n:], c.group


def in_place(reads, grp, leaf, root):
    """Whether group `grp` may store its root number `root` over its leaf number `leaf`
    (see module doc; `reads`: the partition's LoopReads): an untiled loop of the leaf's
    shape, in which no index map reads the leaf, even through fused values (it would read
    it at other positions), and the root is computed from it. In a kernel's epilogue
    group, its loops are such a loop per chunk of rows, after the kernel has run on them:
    the kernel must not read the leaf (it reads rows the loops have already overwritten)
    and its own output is never in place."""
    if grp is None or grp.kind not in ("loop", "epilogue") or grp.tiled \
            or root >= len(grp.roots):              # (a kernel's scratch comes after them)
        return False
    x, r = grp.leaves[leaf], grp.roots[root]
    if grp.kind == "epilogue" and any(v is r or v is x for v in
                                      [*grp.node.outputs, *grp.node.inputs]):
        return False
    if not tuple(x.aval.shape) == tuple(grp.shape) == tuple(r.aval.shape):
        return False
    reach, indexed = reads.of(grp)
    return id(x) not in indexed and id(x) in reach(r)


class LoopReads:
    """Which of a group's leaves each of its values reads through the group's own nodes,
    found once per group and value: `in_place` asks it for every root and leaf of every
    call, and a group may fuse hundreds of updates (a deep net's optimizer step)."""

    def __init__(self, part):
        self.part, self.groups = part, {}

    def of(self, grp):
        """(reach, indexed): reach(v) is the set of leaf ids value v reads; `indexed`,
        those an index map (a node that is not scalar) reads."""
        found = self.groups.get(id(grp))
        if found is None:
            inside = {id(n) for n in grp.nodes}
            leaves = {id(x) for x in grp.leaves}
            producer, memo = self.part.producer, {}

            def reach(v):
                stack = [v]
                while stack:                   # post-order, without Python's recursion
                    u = stack[-1]
                    if id(u) in memo:
                        stack.pop()
                        continue
                    n = producer.get(id(u))
                    ins = [y for y in n.inputs if type(y) is Var] if (
                        n is not None and id(n) in inside) else []
                    todo = [y for y in ins if id(y) not in memo]
                    if todo:
                        stack.extend(todo)
                        continue
                    stack.pop()
                    got = {id(u)} & leaves
                    for y in ins:
                        got |= memo[id(y)]
                    memo[id(u)] = got
                return memo[id(v)]
            indexed = set()
            for n in grp.nodes:
                if self.part.impls[id(n)].kind != "scalar":
                    for y in n.inputs:
                        if type(y) is Var:
                            indexed |= reach(y)
            found = self.groups[id(grp)] = reach, indexed
        return found


def plan(sched):
    """The Plan of Schedule `sched`."""
    part, specs = sched.part, sched.specs
    invars = part.graph.invars
    nfixed = len(invars) + len(part.graph.constvars)
    outs = [k if type(k) is int else None for k in sched.outs]
    size_of = [nbytes(s) for s in specs]
    temp = [d is not None and nfixed + j not in outs for j, (_, d) in enumerate(specs)]
    calls = list(_calls(sched))
    reads = LoopReads(part)
    last, made = {}, {}
    for t, (ins, written, _) in enumerate(calls):
        for k in list(ins) + list(written):
            last[k] = t
        for k in written:
            made[k] = t
    home = {}               # temporary -> its allocation [start, end, bytes, members]
    for t, (ins, written, grp) in enumerate(calls):
        for root, r in enumerate(written):
            if not temp[r - nfixed]:
                continue
            for leaf, k in enumerate(ins):
                a = home.get(k)
                if (a is not None and a[1] == t and made[a[3][-1]] < t and
                        a[2] == size_of[r - nfixed] and in_place(reads, grp, leaf, root)):
                    a[1], home[r] = last[r], a
                    a[3].append(r)
                    break
            else:
                home[r] = [t, last[r], size_of[r - nfixed], [r]]
    offsets, size = _place({id(a): a for a in home.values()}.values())
    like, is_out = {}, set(outs)     # (shape, dtype) -> the inputs of that type no output is
    for i, v in enumerate(invars):
        if i not in is_out:
            like.setdefault((v.aval.shape, v.aval.dtype), []).append(i)
    donors, seen = [], set()
    for k in outs:
        donors.append(() if k is None or k < nfixed or k in seen or specs[k - nfixed][1] is None
                      else tuple(i for i in like.get(specs[k - nfixed], ())
                                 if _dead(i, k, calls, last, made[k], reads)))
        seen.add(k)
    return Plan(tuple(offsets.get(nfixed + j) for j in range(len(specs))), size, tuple(donors))


def _dead(i, k, calls, last, t, reads):
    """Whether input i is dead once call t has written buffer k: read last before t, or
    last by t, which may write k over it in place."""
    if last.get(i, -1) != t:
        return last.get(i, -1) < t
    ins, written, grp = calls[t]
    return in_place(reads, grp, list(ins).index(i), list(written).index(k))


def _place(allocations):
    """({buffer: offset}, arena bytes): largest first, each at the lowest aligned offset
    clear of every placed allocation whose lifetime overlaps its own: the first gap wide
    enough between the placed ones in offset order (NumPy finds it: a deep net's step
    places thousands, each overlapping hundreds)."""
    todo = sorted(allocations, key=lambda a: (-a[2], a[0]))
    starts, ends, offs, tops = (np.empty(len(todo), np.int64) for _ in range(4))
    offsets, size = {}, 0
    for n, a in enumerate(todo):
        start, end, nbytes = a[0], a[1], aligned(a[2])
        live = np.flatnonzero((starts[:n] <= end) & (ends[:n] >= start))
        at = 0
        if live.size:
            order = live[np.lexsort((tops[live], offs[live]))]
            below = np.maximum(np.maximum.accumulate(tops[order]), 0)  # `at` past each
            before = np.concatenate(([0], below[:-1]))
            fits = np.flatnonzero(offs[order] - before >= nbytes)
            at = int(before[fits[0]] if fits.size else below[-1])
        starts[n], ends[n], offs[n], tops[n] = start, end, at, at + nbytes
        size = max(size, at + nbytes)
        for k in a[3]:
            offsets[k] = at
    return offsets, size
