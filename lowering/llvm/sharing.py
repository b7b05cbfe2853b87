"""Calls that share code: a deep network's layers, and an optimizer's update of each of
its parameters, schedule calls whose functions differ only by their names (same ops, same
constants; a flat loop's trip count is its `end` argument, so tensors of any size match).
The first such call keeps its functions; each later one keeps only its entries (a parallel
call's `.a` functions, a segment call's group functions), which call the first's (not
inlined), so LLVM optimizes and emits each distinct body once per module.
"""
import re

from llvmlite import ir


def share_duplicates(mb, steps):
    """Make each call of the segment and parallel `steps` (module builder `mb`, entries
    emitted) whose functions are an earlier call's up to names forward to the earlier's."""
    first_of = {}
    for step in steps:
        for call in step.calls:
            name = call.name
            own = [g for g in mb.module.globals.values()
                   if g.name == name or g.name.startswith(name + ".")]
            # a kernel's pasted-in IR (conv's) is declared in the module, defined in
            # mb.texts: its definition is part of what must match
            text = "\n".join([str(g) for g in own] + [mb.texts[g.name] for g in own
                                                       if g.name in mb.texts])
            key = (step.kind, re.sub(r'"' + re.escape(name) + r'(?=[".])', '"\0', text))
            first = first_of.setdefault(key, name)
            if first != name:
                _forward(mb, own, name, first, step.kind == "parallel", call.launch)


def _forward(mb, own, name, first, parallel, launch):
    """Reduce call `name`'s functions `own` to its entries, each calling the same
    function of call `first`."""
    entries = {f + ".a" if parallel else f for f, _ in launch.functions(name)}
    for g in own:
        if g.name not in entries:
            del mb.module.globals[g.name]
            mb.texts.pop(g.name, None)
    for entry in entries:
        callee = mb.module.globals[first + entry[len(name):]]
        callee.attributes.discard("alwaysinline")
        callee.attributes.add("noinline")
        fn = mb.module.globals[entry]
        fn.blocks = []
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(b.call(callee, fn.args, tail=True))
