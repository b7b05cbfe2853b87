"""Parallel calls that share code: a deep network's layers schedule calls whose functions
differ only by their names (same shapes, same ops, same constants). The first such call
keeps its functions; each later one keeps only its `.a` entries, which call the first's
(not inlined), so LLVM optimizes and emits each distinct body once per module.
"""
import re

from llvmlite import ir


def share_duplicates(mb, calls):
    """Make each call of `calls` (parallel calls of module builder `mb`, argv entries
    emitted) whose functions are an earlier call's up to names forward to the earlier's."""
    first_of = {}
    for call in calls:
        name = call.name
        own = [g for g in mb.module.globals.values()
               if g.name == name or g.name.startswith(name + ".")]
        # a kernel's pasted-in IR (conv's) is declared in the module, defined in mb.texts:
        # its definition is part of what must match
        text = "\n".join([str(g) for g in own] + [mb.texts[g.name] for g in own
                                                   if g.name in mb.texts])
        key = re.sub(r'"' + re.escape(name) + r'(?=[".])', '"\0', text)
        first = first_of.setdefault(key, name)
        if first == name:
            continue
        entries = {f + ".a" for f, _ in call.launch.functions(name)}
        for g in own:
            if g.name not in entries:
                del mb.module.globals[g.name]
                mb.texts.pop(g.name, None)
        for entry in entries:
            callee = mb.module.globals[first + entry[len(name):]]
            callee.attributes.add("noinline")
            fn = mb.module.globals[entry]
            fn.blocks = []
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            b.ret(b.call(callee, fn.args, tail=True))
