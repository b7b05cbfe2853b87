"""Row fusion: a run of consecutive groups over the rows of one shape S = (..., C) --
loops over S or computing one value per row (shape S[:-1] or S[:-1]+(1,)), and
reductions of the last axis -- becomes one kernel doing every member for one row before
the next. Softmax (max; exp and sum; scale) then reads its input once and writes its
output once, and values used only inside the run live in row buffers that stay in L1
instead of full arrays.

Valid when each member reads the values made earlier in the run only at its own row:
through elementwise kernels at the same element, or through the reshape to S[:-1]+(1,)
and broadcast to S that keepdims produces. Work items are rows (schedule.launch).
"""
from ir import Var
from lowering.llvm import irutil
from lowering.llvm.emit import Operand, Values, group_function
from lowering.llvm.fusion import Group, merge_runs
from lowering.llvm.irutil import i64
from lowering.llvm.protocol import Index
from lowering.llvm.reductions import KERNELS as REDUCTIONS, reduce_at
from registry.families import family

ROW_BYTES = 64 * 1024     # bound on one kernel's row buffers (stack, per thread)
MIN_COLUMNS = 8


def merge_rows(part, groups):
    """`groups` with each valid run (>= 2 members, one a reduction) made one rows group."""
    last = {}         # row shape -> the position of the last reduction of its last axis
    for k, g in enumerate(groups):
        shape = _reduces_last(part, g)
        if shape is not None:
            last[shape] = k

    def merged_at(k):
        shape, run = _run(part, groups, k, last)
        return run and (len(run), _rows_group(part, shape, run, groups[k + len(run):]))
    return merge_runs(groups, merged_at)


def _reduces_last(part, g):
    n = g.node
    # a built-in reduction with its own impl (a user impl of it keeps its own group)
    if g.kind != "kernel" or family(n.kernel) != "reduction" or \
            part.impls[id(n)] is not REDUCTIONS.get(n.kernel):
        return None
    shape = n.inputs[0].aval.shape
    return shape if n.attrs["axes"] == (len(shape) - 1,) else None


def _shape(part, g):
    """The row shape S this group could fuse over as a first member, or None."""
    s = _reduces_last(part, g) or (g.shape if g.kind == "loop" and not g.tiled else None)
    return s if s is not None and len(s) >= 2 and s[-1] >= MIN_COLUMNS else None


def _run(part, groups, k, last):
    shape = _shape(part, groups[k])
    if shape is None or last.get(shape, -1) < k:    # (a run needs a reduction: below)
        return None, None
    run, produced = [], {}
    for g in groups[k:]:
        fits = _reduces_last(part, g) == shape or (
            g.kind == "loop" and not g.tiled and g.shape in (shape, shape[:-1], shape[:-1] + (1,)))
        if not fits or not _own_row_reads(part, g, shape, produced):
            break
        run.append(g)
        produced.update((id(v), v) for v in g.roots)
    # fusing pays when two members pass over whole rows (a reduction and another one or
    # an S-shaped loop): that is a pass over S saved. A reduction followed only by values
    # per row saves none, and its per-row members, run once a row, do not vectorize
    # (a matvec's rows then the logistic loss's exp, log and division on each row).
    whole = sum(g.kind == "kernel" or g.shape == shape for g in run)
    return shape, (run if whole >= 2 and any(g.kind == "kernel" for g in run) else None)


def _own_row_reads(part, g, shape, produced):
    """True if g reads each value in `produced` at its own row (see module doc)."""
    if not any(id(x) in produced for x in g.leaves):
        return True     # (a group's leaves are all it reads of other groups' values)
    rows, col = shape[:-1], shape[:-1] + (1,)
    if g.kind == "kernel":
        stack = [(g.node.inputs[0], "full")]
    else:
        state = {shape: "full", rows: "row", col: "col"}[g.shape]
        stack = [(y, state) for r in g.computed for y in part.producer[id(r)].inputs]
    while stack:
        x, state = stack.pop()
        if not isinstance(x, Var):
            continue
        if id(x) in produced:
            want = {shape: "full", rows: "row", col: "col"}.get(x.aval.shape)
            if state != want:
                return False
            continue
        if id(x) in part.materialized or not part.fusable(x):
            continue
        n = part.producer[id(x)]
        src, dst = n.inputs[0].aval.shape, x.aval.shape
        if part.kind[id(n)] == "scalar":
            nxt = state
        elif n.kernel == "broadcast_to" and state == "full" and src == col and dst == shape:
            nxt = "col"
        elif n.kernel == "reshape" and state in ("row", "col") and {src, dst} == {rows, col}:
            nxt = "row" if src == rows else "col"
        else:
            nxt = "bad"
        stack.extend((y, nxt) for y in n.inputs)
    return True


def _rows_group(part, shape, run, after):
    """One group for the run: roots are the values needed after it; the others are
    row-local while their row buffers fit ROW_BYTES."""
    made = [v for g in run for v in g.roots]
    needed = {id(v) for v in part.graph.outvars} | {id(x) for g in after for x in g.leaves}
    grp = Group("rows", [v for v in made if id(v) in needed], shape=shape)
    grp.members, grp.local, budget = run, [], ROW_BYTES
    for v in made:
        if id(v) not in needed:
            size = v.aval.dtype.itemsize * (grp.shape[-1] if v.aval.shape == grp.shape else 1)
            if size <= budget:
                budget -= size
                grp.local.append(v)
            else:
                grp.roots.append(v)
    seen, ids = set(), {id(v) for v in made}
    for g in run:
        grp.nodes.extend(g.nodes)
        for x in g.leaves:
            if id(x) not in ids and id(x) not in seen:
                seen.add(id(x))
                grp.leaves.append(x)
    return grp


def emit_rows(mb, part, grp, name):
    """Define the rows group's function: per row, each member in order."""
    shape, rows = grp.shape, grp.shape[:-1]
    fn, ctx = group_function(mb, name, grp, None, name)
    b = ctx.b
    dest = {id(x): a for x, a in zip(grp.roots, fn.args[len(grp.leaves):])}
    rowwise = {}
    for v in grp.local:
        full = v.aval.shape == shape
        with b.goto_entry_block():
            t = irutil.memtype(v.aval.dtype)
            dest[id(v)] = b.alloca(t, size=i64(shape[-1] if full else 1))
        rowwise[id(v)] = "row" if full else "one"
    # a member reads the buffers of the leaves and of the members before it
    values = Values(ctx, part, {id(x): a for x, a in zip(grp.leaves, fn.args)}, rowwise)

    def put(v, index, value):
        local = rowwise.get(id(v))
        flat = index.multi[-1] if local == "row" else i64(0) if local else index.flat
        irutil.store(b, dest[id(v)], flat, value, v.aval.dtype)

    with ctx.loop(ctx.start, ctx.end, "row") as row:
        at_row = Index(b, rows, flat=row).multi
        for m in grp.members:
            if m.kind == "kernel":
                n = m.node
                v = reduce_at(ctx.for_node(n), n.kernel, Operand(values, n.inputs[0], None),
                              at_row, n.attrs["axes"])
                put(n.outputs[0], Index(b, rows, multi=at_row), v)
            elif m.shape == shape:
                with ctx.loop(0, shape[-1], "j") as j:
                    _store_roots(values, m, Index(b, shape, multi=at_row + [j]), put)
            else:       # one value per row, of shape S[:-1] or S[:-1] + (1,)
                pos = at_row + [i64(0)] * (len(m.shape) - len(rows))
                _store_roots(values, m, Index(b, m.shape, multi=pos), put)
            values.buffers.update((id(v), dest[id(v)]) for v in m.roots)
    ctx.finish()


def _store_roots(values, member, index, put):
    memo, stored = {}, {id(r) for r in member.roots}
    for r in member.computed:
        v = values.value(r, index, memo)
        if id(r) in stored:
            put(r, index, v)
