"""Phase 3, codegen: a schedule -> one LLVM module, a function per distinct group call, each
with its entry. It reads the schedule (groups, launch facts, buffers); it writes only the
module. The group functions are emitted on lowering.llvm.emit's context (their signature
and failure codes are described there); the segments' runner and the thread pool call
them through their entries (lowering.llvm.entries). Static shapes are constants, so
loops have constant trip counts.
"""
import contextlib
import itertools
import math
import re

from llvmlite import ir

from ir.errors import CodegenError
from lowering.llvm import irutil, mathlib_shared, target, transpose
from lowering.llvm.emit import INTERLEAVED, Values, emit_kernel, group_function, row_hints
from lowering.llvm.entries import argv_entry
from lowering.llvm.epilogues import emit_epilogue
from lowering.llvm.protocol import Index
from lowering.llvm.rows import emit_rows
from lowering.llvm.sharing import share_duplicates


class ModuleBuilder:
    """The module being built, plus pasted-in IR texts (mathlib, matmul) and the error
    table shared by its functions."""

    def __init__(self):
        self.module = ir.Module(name="tracer")
        self.module.triple, self.module.data_layout = target.TRIPLE, target.DATA_LAYOUT
        self.texts = {}         # symbol -> IR text defining it
        self.forwarded = {}     # call -> the earlier call whose code it runs (sharing.py)
        self.errors = []        # (exception class, message); code = index + 1
        self.range_checks = {}  # function name -> [(lo slot, hi slot, n, code)]
        self.callbacks = []     # host callback sites: (callable, in avals, out avals)

    def external(self, symbol, ret, args, text):
        """Declare `symbol` for calls; its definition `text` is pasted into the module."""
        self.texts.setdefault(symbol, text)
        return irutil.intrinsic(self.module, symbol, ret, args)

    def error_code(self, error, message):
        key = (error, message)
        if key not in self.errors:
            if len(self.errors) == irutil.MAX_ERRORS:
                raise CodegenError(f"llvm backend: more than {irutil.MAX_ERRORS} distinct "
                                   f"run-time checks in one module")
            self.errors.append(key)
        return self.errors.index(key) + 1

    def text(self):
        text = str(self.module)
        texts = "\n".join(dict.fromkeys(
            mathlib_shared.module_texts(self.texts, text, target.CURRENT.isa).values()))
        for sym in self.texts:
            pattern = r'@"?' + re.escape(sym) + r'"?\('
            text = re.sub(r"^declare [^\n]*" + pattern + r".*\n", "", text, flags=re.M)
            texts = re.sub(r"^define (?!internal )([^\n]*" + pattern + ")", r"define internal \1",
                           texts, flags=re.M)
        text = text.replace(") nounwind\n{", ") #0\n{")
        return "\n".join([text, texts] +
                         ['attributes #0 = { nounwind "no-trapping-math"="true" }\n'])


def emit_program(sched, key=None):
    """The module of schedule `sched`: each call's group functions, each with its entry
    (lowering.llvm.entries). A call whose `key(part, call)` an earlier call had is not
    emitted: it runs that call's code (None: no key; lowering.llvm.sharing)."""
    mb, part = ModuleBuilder(), sched.part
    declared, first_of = 0, {}
    for step in sched.steps:
        for call in step.calls:
            k = key and key(part, call)
            first = call.name if k is None else first_of.setdefault(k, call.name)
            if first != call.name:
                mb.forwarded[call.name] = first
                continue
            emit_group(mb, part, call, call.name)
        declared = _prefetch(mb, declared)
    share_duplicates(mb, sched.steps)
    _emit_entries(mb, sched.steps)
    return mb


def _emit_entries(mb, steps):
    """The entries of the calls that keep their code: with their bounds fixed at the work
    items when every call running that code is a segment's with those items, else taking
    them from the caller (parallel pieces; calls of other sizes)."""
    runs = {}
    for step in steps:
        for call in step.calls:
            first = mb.forwarded.get(call.name, call.name)
            runs.setdefault(first, set()).add(
                (step.kind, tuple(items for _, items in call.launch.functions(first))))
    for step in steps:
        for call in step.calls:
            if call.name in mb.forwarded:
                continue
            (kind, items), *others = runs[call.name]
            fixed = kind == "segment" and not others
            for (f, _), n in zip(call.launch.functions(call.name), items):
                argv_entry(mb.module, mb.module.globals[f], n if fixed else None)


def _prefetch(mb, done):
    """Have the libraries that the functions declared since the module's `done` first
    globals call compile meanwhile (target.prefetch); the number of globals now. A symbol
    with pasted text is not one yet: mb.text() decides whether its library is called."""
    fresh = itertools.islice(mb.module.globals.values(), done, None)
    target.prefetch("\n".join(str(g) for g in fresh if isinstance(g, ir.Function)
                              and g.is_declaration and g.name not in mb.texts))
    return len(mb.module.globals)


def emit_group(mb, part, call, name):
    """Define the function `name` of schedule call `call` (and `name`.prep for a kernel's
    prepare step)."""
    grp, launch = call.group, call.launch
    if grp.kind == "rows":
        emit_rows(mb, part, grp, name)
    elif grp.kind == "epilogue":
        emit_epilogue(mb, part, grp, launch, name)
    elif grp.kind == "kernel":
        emit_kernel(mb, part, grp, launch, name)
    else:
        fn, ctx = group_function(mb, name, grp, None, name)
        values = Values(ctx, part, {id(x): a for x, a in zip(grp.leaves, fn.args)})
        _emit_loop(ctx, values, grp, fn.args[len(grp.leaves):len(grp.leaves) + len(grp.roots)])
        ctx.finish()
    for fname in (name, name + ".prep"):
        irutil.fold_range_checks(mb.module, fname, mb.range_checks.pop(fname, ()))


# A flat loop of at least LONG_LOOP items with an op costing at least COSTLY (protocol
# costs: a transcendental is 20) runs INTERLEAVED vector iterations side by side: LLVM keeps
# such a body to one, and its long dependency chains (exp: a dozen fmas in a row) then leave
# the FMA pipes idle. One thread, 4M float32: exp(x) 700 -> 645 us, sin 1.86 -> 1.58 ms, W1
# 1.62 -> 1.41 ms on AVX-512; sin 3.51 -> 3.14 ms, W1 3.46 -> 3.20 ms with AVX2 code;
# float64 tanh 6.9 -> 4.3 ms (2 and 8 were slower overall). Long chains of cheap ops (the
# random bits' threefry, ~100 integer ops) ran no faster, and shorter loops keep their
# compile time.
LONG_LOOP, COSTLY = 1 << 16, 20


def _emit_loop(ctx, values, grp, outs):
    """A loop group over its work items (schedule.launch counts them the same way)."""
    b, shape = ctx.b, grp.shape
    if math.prod(shape) == 0:
        return
    if transpose.applies(grp):
        x = grp.nodes[0].inputs[0]
        return transpose.emit(ctx, values.buffers[id(x)], outs[0], shape, x.aval.dtype)
    out = {id(r): ptr for r, ptr in zip(grp.roots, outs)}
    walk = (_flat(ctx, shape, _interleaving(values.part, grp)) if grp.flat else
            _nested(ctx, shape) if not grp.tiled else
            transpose.tiled(ctx, grp, values))
    with walk as index:
        memo = {}
        for r in grp.computed:      # in order: a later root reuses earlier ones' registers
            v = values.value(r, index, memo)
            if id(r) in out:
                irutil.store(b, out[id(r)], index.flat, v, r.aval.dtype)


def _interleaving(part, grp):
    """The loop hints of a flat loop group (see LONG_LOOP)."""
    costly = any(part.impls[id(n)].cost >= COSTLY for n in grp.nodes)
    return ((("llvm.loop.interleave.count", INTERLEAVED),)
            if costly and math.prod(grp.shape) >= LONG_LOOP else ())


@contextlib.contextmanager
def _flat(ctx, shape, hints=()):
    with ctx.loop(ctx.start, ctx.end, "i", hints) as i:
        yield Index(ctx.b, shape, flat=i)


@contextlib.contextmanager
def _nested(ctx, shape):
    outer, row = row_hints(shape)
    with ctx.nest(shape, parallel=True, hints=outer, inner=row) as multi:
        yield Index(ctx.b, shape, multi=multi)
