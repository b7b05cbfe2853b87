"""Control flow as native code: `scan`, `while`, `cond` and `remat` nodes compile to loops
and branches in the module instead of a numpy step interpreting their regions.

Each region is partitioned and scheduled like a whole graph (schedule.region; so fusion
happens inside a body) and emitted as `i64 <name>(ptr in..., ptr out..., ptr scratch)`:
its group functions called in order on buffers at offsets fixed at compile time in the
scratch the caller passes. A control node is a whole kernel whose
function runs the loop: scan is a counted loop whose x and y slices are pointer offsets
into the stacked buffers; while tests and branches; cond switches on the index. Carries
are double-buffered in the node's scratch (iteration k reads one half and writes the
other), so nothing is allocated per iteration, and the code does not depend on the trip
count; a carried buffer the body only writes one slot of is updated in place. Groups
inside a region run single-threaded. A region that needs a Python step (a kernel without
an llvm impl) makes its node fall back to the numpy kernel (`native`)."""
from collections import Counter

import numpy as np
from llvmlite import ir

from ir import Graph, Literal
from lowering.llvm import codegen, entries, irutil
from lowering.llvm.irutil import I1, I8, I32, I64, PTR, i64
from lowering.llvm.protocol import Index, IndexMap, KernelEmitter, ScalarKernel
from lowering.llvm.schedule import ALIGN, aligned, memo, nbytes, region


def _memcpy(b, dst, src, size):
    if size:
        fn = irutil.intrinsic(b.module, "llvm.memcpy.p0.p0.i64", ir.VoidType(),
                              [PTR, PTR, I64, I1])
        b.call(fn, [dst, src, i64(size), ir.Constant(I1, 0)])


def _at(b, ptr, offset):
    """ptr + offset bytes (offset an int or an i64 value)."""
    off = offset if isinstance(offset, ir.Value) else i64(offset)
    return b.gep(ptr, [off], inbounds=True, source_etype=I8)


def _const_global(mb, array, stem):
    data = bytearray(np.ascontiguousarray(array).tobytes()) or bytearray(1)
    t = ir.ArrayType(I8, len(data))
    gv = ir.GlobalVariable(mb.module, t, mb.module.get_unique_name(stem))
    gv.linkage, gv.global_constant, gv.align = "private", True, ALIGN
    gv.initializer = ir.Constant(t, data)
    return gv


def emit_region(mb, reg, name):
    """Define `i64 name(ptr in..., ptr out..., ptr scratch)` running region `reg` (a
    schedule.Region)."""
    g = reg.graph
    nin, nout = len(g.invars), len(g.outvars)
    fn = ir.Function(mb.module, ir.FunctionType(I64, [PTR] * (nin + nout + 1)), name)
    entries.inline_into_caller(fn)
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    outs, scratch = fn.args[nin:nin + nout], fn.args[-1]
    loc = {id(v): a for v, a in zip(g.invars, fn.args)}
    for v, c in zip(g.constvars, g.consts):
        loc[id(v)] = _const_global(mb, c, name + ".c")
    loc.update({k: outs[j] for k, j in reg.out_at.items()})
    loc.update({k: _at(b, scratch, off) for k, off in reg.offset.items()})
    shared = _at(b, scratch, reg.temps)
    for call in reg.calls:
        grp, gname = call.group, f"{name}.{call.name}"
        codegen.emit_group(mb, reg.part, call, gname)
        args = [loc[id(x)] for x in grp.leaves] + [loc[id(r)] for r in grp.roots]
        args += [shared] * (call.launch.scratch is not None)
        for f, items in call.launch.functions(gname):
            callee = mb.module.globals[f]
            entries.inline_into_caller(callee)
            irutil.return_if_failed(b, b.call(callee, args + [i64(0), i64(items)]))
    for j, v in enumerate(g.outvars):
        if type(v) is Literal:
            irutil.store(b, outs[j], i64(0), irutil.const(v.value, v.aval.dtype), v.aval.dtype)
        elif loc[id(v)] is not outs[j]:
            _memcpy(b, outs[j], loc[id(v)], nbytes(v.aval))
    b.ret(i64(0))
    return fn


def _pointers(ctx, ins):
    """Each input's buffer; a literal input gets a one-element local."""
    out = []
    for x in ins:
        if x.ptr is None:
            v = x.read([])
            out.append(irutil.slot(ctx.b, ctx.b.zext(v, I8) if v.type is I1 else v))
        else:
            out.append(x.ptr)
    return out


def loop_body(body, n_consts, n_carry):
    """(graph, slots): where carry output k is `dynamic_update_index(carry input k, i, v)`
    and nothing else reads that node, the graph drops output k and returns (i, v) last
    instead; the loop writes slot i of carry k's one buffer after the iteration's reads:
    an iteration costs one slot, not a copy of the whole buffer (a checkpoint tape)."""
    return memo(body, ("loop", n_consts, n_carry), None,
                lambda: _in_place(body, n_consts, n_carry))


def _in_place(body, n_consts, n_carry):
    uses = Counter([id(x) for n in body.nodes for x in n.inputs] +
                   [id(v) for v in body.outvars])
    producer = {id(o): n for n in body.nodes for o in n.outputs}
    slots, dropped, extra = [], set(), []
    for k, out in enumerate(body.outvars[:n_carry]):
        n = producer.get(id(out))
        if (n is not None and n.kernel == "dynamic_update_index" and uses[id(out)] == 1
                and n.inputs[0] is body.invars[n_consts + k] and out.aval.shape[0]):
            slots.append(k)
            dropped.add(id(n))
            extra += n.inputs[1:]
    graph = body if not slots else Graph(
        body.invars, [v for k, v in enumerate(body.outvars) if k not in slots] + extra,
        [n for n in body.nodes if id(n) not in dropped], body.constvars, body.consts)
    return graph, slots


def _updates(body, slots):
    """The (i, v) outputs of a loop body made by loop_body."""
    return body.outvars[len(body.outvars) - 2 * len(slots):] if slots else []


class _Carry:
    """Loop-carried values in the node's scratch: double-buffered (halves A and B;
    iteration t reads half t % 2 and writes the other), except carries updated in place
    (`slots`, see loop_body), which have one buffer and an (i, v) area the body writes."""

    def __init__(self, b, scratch, avals, body, slots):
        self.b, self.avals, self.slots = b, avals, slots
        sizes, offs = self.layout(avals, body, slots)
        ptrs = [_at(b, scratch, o) for o in offs]
        n = len(avals)
        self.a = ptrs[:n]
        it = iter(ptrs[n:])
        self.bb = [self.a[k] if k in slots else next(it) for k in range(n)]
        self.updates = [(next(it), next(it)) for _ in slots]
        self.bytes = sum(aligned(s) for s in sizes)

    @staticmethod
    def layout(avals, body, slots):
        """(byte sizes, offsets) of A, then B of the double-buffered, then each (i, v)."""
        extra = _updates(body, slots)
        sizes = [nbytes(a) for a in avals] + [
            nbytes(a) for k, a in enumerate(avals) if k not in slots] + [
            nbytes(v.aval) for v in extra]
        offs, at = [], 0
        for size in sizes:
            offs.append(at)
            at += aligned(size)
        return sizes, offs

    @staticmethod
    def size(avals, body, slots):
        return sum(aligned(s) for s in _Carry.layout(avals, body, slots)[0])

    def fill(self, ptrs):
        for dst, src, a in zip(self.a, ptrs, self.avals):
            _memcpy(self.b, dst, src, nbytes(a))

    def at(self, odd):
        """(read, written) pointers of an iteration of parity `odd` (an i1): the body's
        carry inputs, and its carry outputs then its (i, v) outputs."""
        b = self.b
        cur = [b.select(odd, y, x) for x, y in zip(self.a, self.bb)]
        nxt = [b.select(odd, x, y) for k, (x, y) in enumerate(zip(self.a, self.bb))
               if k not in self.slots]
        return cur, nxt, [p for pair in self.updates for p in pair]

    def update(self, ctx, body):
        """After an iteration: write each in-place carry's slot i (clamped) from v."""
        b, extra = self.b, _updates(body, self.slots)
        for j, (k, (ip, vp)) in enumerate(zip(self.slots, self.updates)):
            dtype, n = extra[2 * j].aval.dtype, self.avals[k].shape[0]
            i = _clamp(ctx, irutil.load(b, ip, i64(0), dtype), dtype, n)
            step = nbytes(self.avals[k]) // n
            _memcpy(b, _at(b, self.a[k], b.mul(i, i64(step))), vp, step)

    def drain(self, ptrs, odd):
        for dst, src, a in zip(ptrs, self.at(odd)[0], self.avals):
            _memcpy(self.b, dst, src, nbytes(a))


def _scan(ctx, ins, outs, *, body, n_consts, n_carry, length, reverse, unroll):
    b = ctx.b
    graph, slots = loop_body(body, n_consts, n_carry)
    fn = emit_region(ctx.mb, region(graph), ctx.unique("body"))
    ptrs = _pointers(ctx, ins)
    consts, xs = ptrs[:n_consts], ptrs[n_consts + n_carry:]
    carry = _Carry(b, ctx.scratch, [o.aval for o in outs[:n_carry]], graph, slots)
    rscratch = _at(b, ctx.scratch, carry.bytes)
    carry.fill(ptrs[n_consts:n_consts + n_carry])
    x_step = [nbytes(x.aval) // max(length, 1) for x in ins[n_consts + n_carry:]]
    y_step = [nbytes(o.aval) // max(length, 1) for o in outs[n_carry:]]
    with ctx.loop(0, length, "t") as t:
        k = b.sub(i64(length - 1), t) if reverse else t
        cur, nxt, upd = carry.at(b.trunc(t, I1))
        xk = [_at(b, p, b.mul(k, i64(s))) for p, s in zip(xs, x_step)]
        yk = [_at(b, o.ptr, b.mul(k, i64(s))) for o, s in zip(outs[n_carry:], y_step)]
        irutil.return_if_failed(b, b.call(fn, consts + cur + xk + nxt + yk + upd + [rscratch]))
        carry.update(ctx, graph)
    carry.drain([o.ptr for o in outs[:n_carry]], ir.Constant(I1, length % 2))


def _scan_scratch(in_avals, out_avals, *, body, n_consts, n_carry, **_):
    graph, slots = loop_body(body, n_consts, n_carry)
    return _Carry.size(out_avals[:n_carry], graph, slots) + region(graph).scratch


def _while(ctx, ins, outs, *, cond, body, n_cond, n_body, count=False):
    b = ctx.b
    nk = len(ins) - n_cond - n_body
    graph, slots = loop_body(body, n_body, nk)
    fc = emit_region(ctx.mb, region(cond), ctx.unique("cond"))
    fb = emit_region(ctx.mb, region(graph), ctx.unique("body"))
    ptrs = _pointers(ctx, ins)
    cc, bc, init = ptrs[:n_cond], ptrs[n_cond:n_cond + n_body], ptrs[n_cond + n_body:]
    carry = _Carry(b, ctx.scratch, [o.aval for o in outs[:nk]], graph, slots)
    flag = _at(b, ctx.scratch, carry.bytes)
    rscratch = _at(b, ctx.scratch, carry.bytes + ALIGN)
    carry.fill(init)
    trips = ctx.slot(i64(0))
    test = b.append_basic_block("while.test")
    step = b.append_basic_block("while.body")
    done = b.append_basic_block("while.done")
    b.branch(test)
    b.position_at_end(test)
    cur, nxt, upd = carry.at(b.trunc(b.load(trips), I1))
    irutil.return_if_failed(b, b.call(fc, cc + cur + [flag, rscratch]))
    b.cbranch(irutil.load(b, flag, i64(0), np.bool_), step, done)
    b.position_at_end(step)
    irutil.return_if_failed(b, b.call(fb, bc + cur + nxt + upd + [rscratch]))
    carry.update(ctx, graph)
    b.store(b.add(b.load(trips), i64(1)), trips)
    b.branch(test)
    b.position_at_end(done)
    carry.drain([o.ptr for o in outs[:nk]], b.trunc(b.load(trips), I1))
    if count:
        b.store(b.load(trips), outs[nk].ptr)


def _while_scratch(in_avals, out_avals, *, cond, body, n_cond, n_body, count=False):
    nk = len(in_avals) - n_cond - n_body
    graph, slots = loop_body(body, n_body, nk)
    return (_Carry.size(out_avals[:nk], graph, slots) + ALIGN +
            max(region(cond).scratch, region(graph).scratch))


def _cond(ctx, ins, outs, *, branches):
    b = ctx.b
    ptrs = _pointers(ctx, ins)
    fns = [emit_region(ctx.mb, region(g), ctx.unique(f"branch{k}"))
           for k, g in enumerate(branches)]
    index = b.load(ptrs[0], typ=I32)
    blocks = [b.append_basic_block(f"branch{k}") for k in range(len(fns))]
    done = b.append_basic_block("cond.done")
    switch = b.switch(index, blocks[-1])
    for k, (fn, block) in enumerate(zip(fns, blocks)):
        if k < len(fns) - 1:
            switch.add_case(ir.Constant(I32, k), block)
        b.position_at_end(block)
        irutil.return_if_failed(b, b.call(fn, ptrs[1:] + [o.ptr for o in outs] + [ctx.scratch]))
        b.branch(done)
    b.position_at_end(done)


def _remat(ctx, ins, outs, *, body, policy=None):
    fn = emit_region(ctx.mb, region(body), ctx.unique("body"))
    irutil.return_if_failed(ctx.b, ctx.b.call(fn, _pointers(ctx, ins) + [o.ptr for o in outs] + [ctx.scratch]))


class ControlEmitter(KernelEmitter):
    """A control-flow kernel: `regions(node)` are the (label, graph) pairs it runs as
    regions (a loop body as loop_body rewrote it), each scheduled by schedule.region;
    native only if none of them needs a Python step."""

    def __init__(self, body, regions, scratch):
        super().__init__(body, fuse_inputs=False, scratch=scratch)
        self.regions = regions

    def native(self, node):
        return not any(region(g).python for _, g in self.regions(node))


def _scan_regions(node):
    a = node.attrs
    return [("body", loop_body(a["body"], a["n_consts"], a["n_carry"])[0])]


def _while_regions(node):
    a = node.attrs
    nk = len(node.inputs) - a["n_cond"] - a["n_body"]
    return [("cond", a["cond"]), ("body", loop_body(a["body"], a["n_body"], nk)[0])]


def _clamp(ctx, value, dtype, n):
    """An integer register value as an i64 index clamped into [0, n) (as the numpy
    kernels of dynamic_index and dynamic_update_index do)."""
    v = ctx.convert(value, dtype, np.int64)
    smin, smax = (irutil.typed_intrinsic(ctx.b, f, I64, 2) for f in ("smin", "smax"))
    return ctx.b.call(smax, [ctx.b.call(smin, [v, i64(n - 1)]), i64(0)])


def _clamped(ctx, read, i, n):
    """Input i (an integer scalar) as a clamped index."""
    return _clamp(ctx, read(i, Index(ctx.b, (), multi=[])), ctx.in_dtypes[i], n)


def _dynamic_index(ctx, index, read):
    shape = ctx.in_avals[0].shape
    if not shape[0]:        # no slot to read (the numpy kernel raises IndexError too)
        ctx.fail_if(ir.Constant(I1, 1), f"dynamic_index: axis 0 of {ctx.in_avals[0]} is "
                                        f"empty, so there is no slot to read")
        return ctx.const(0)
    i = _clamped(ctx, read, 1, shape[0])
    return read(0, Index(ctx.b, shape, multi=[i] + list(index.multi)))


def _dynamic_update_index(ctx, index, read):
    shape, multi = ctx.out_aval.shape, list(index.multi)
    hit = ctx.b.icmp_signed("==", multi[0], _clamped(ctx, read, 1, shape[0]))
    new = read(2, Index(ctx.b, shape[1:], multi=multi[1:]))
    return ctx.b.select(hit, new, read(0, index))


KERNELS = {
    "scan": ControlEmitter(_scan, _scan_regions, _scan_scratch),
    "while": ControlEmitter(_while, _while_regions, _while_scratch),
    "cond": ControlEmitter(
        _cond, lambda n: [(f"branch{k}", g) for k, g in enumerate(n.attrs["branches"])],
        lambda i, o, *, branches: max(region(g).scratch for g in branches)),
    "remat": ControlEmitter(_remat, lambda n: [("body", n.attrs["body"])],
                            lambda i, o, *, body, policy=None: region(body).scratch),
    "stop_gradient": ScalarKernel(lambda ctx, x: x, cost=0),
    "dynamic_index": IndexMap(_dynamic_index),
    "dynamic_update_index": IndexMap(_dynamic_update_index),
}
