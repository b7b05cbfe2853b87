"""Calls that share code: a deep network's layers, and an optimizer's update of each of
its parameters, schedule calls whose functions differ only by their names (same ops, same
constants; a flat loop's trip count is its `end` argument, so tensors of any size match).
The first such call keeps its functions. A later parallel call keeps none: its program
step calls the first's (artifact.build, through mb.forwarded); a later segment call keeps
its group functions, inlined into its segment, each calling the first's (not inlined). So
LLVM optimizes and emits each distinct body once per module, and no function per later
parallel call: W18's 136 one-line forwarders took 0.12 s of its module's 0.28 s of LLVM.

Two ways find them. Before emitting, codegen skips a call whose key (what its emission
reads: graph_cache.call_key) an earlier call has, and forwards it: W18's 24 layers were
emitted, printed and compared 24 times, 0.25 s of its codegen's 0.26. After emitting,
share_duplicates compares the text of the calls that had no key or a key of their own.
"""
import re

from llvmlite import ir


def forward(mb, name, first, functions):
    """Make the group `functions` of segment call `name` call the same functions of call
    `first`, defining them if they are not yet."""
    for f in functions:
        callee = mb.module.globals[first + f[len(name):]]
        fn = mb.module.globals.get(f)
        if fn is None:
            fn = ir.Function(mb.module, callee.function_type, f)
            fn.attributes.add("nounwind")
        fn.blocks = []
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(b.call(callee, fn.args, tail=True))


def share_duplicates(mb, steps):
    """Make each call of the segment and parallel `steps` (module builder `mb`, entries
    emitted) whose functions are an earlier call's up to names run the earlier's, adding
    it to mb.forwarded ({call: the call whose code it runs}, which holds those codegen did
    not emit). Then keep the segment bodies forwarded to out of line."""
    first_of, forwarded = {}, mb.forwarded
    for step in steps:
        for call in step.calls:
            name = call.name
            if name in forwarded:
                continue
            own = [g for g in mb.module.globals.values()
                   if g.name == name or g.name.startswith(name + ".")]
            # a kernel's pasted-in IR (conv's) is declared in the module, defined in
            # mb.texts: its definition is part of what must match
            text = "\n".join([str(g) for g in own] + [mb.texts[g.name] for g in own
                                                       if g.name in mb.texts])
            key = (step.kind, re.sub(r'"' + re.escape(name) + r'(?=[".])', '"\0', text))
            first = first_of.setdefault(key, name)
            if first != name:
                functions = [f for f, _ in call.launch.functions(name)]
                entries = set(functions) if step.kind == "segment" else ()
                for g in own:
                    if g.name not in entries:
                        del mb.module.globals[g.name]
                        mb.texts.pop(g.name, None)
                if entries:
                    forward(mb, name, first, functions)
                forwarded[name] = first
    for step in steps:
        for call in step.calls:
            first = forwarded.get(call.name)
            functions = [f for f, _ in call.launch.functions(call.name)]
            if first in forwarded:      # codegen's first was found a later duplicate
                while first in forwarded:
                    first = forwarded[first]
                forwarded[call.name] = first
                if step.kind == "segment":
                    forward(mb, call.name, first, functions)
            for f in functions if first and step.kind == "segment" else ():
                callee = mb.module.globals[first + f[len(call.name):]]
                callee.attributes.discard("alwaysinline")
                callee.attributes.add("noinline")
