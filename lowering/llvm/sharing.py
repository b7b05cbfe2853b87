"""Calls that share code: a deep network's layers, and an optimizer's update of each of
its parameters, schedule calls whose functions differ only by their names (same ops, same
constants; a flat loop's trip count is its `end` argument, so tensors of any size match).
The first such call keeps its functions; a later call keeps none: its program step (a
segment's table, a parallel step's phases) calls the first's entries with its own
buffers and work items (artifact.build, through mb.forwarded). So LLVM optimizes and
emits each distinct body once per module.

Two ways find them. Before emitting, codegen skips a call whose key (what its emission
reads: graph_cache.call_key) an earlier call has, and forwards it: W18's 24 layers were
emitted, printed and compared 24 times, 0.25 s of its codegen's 0.26. After emitting,
share_duplicates compares the text of the calls that had no key or a key of their own.
"""
import re


def share_duplicates(mb, steps):
    """Make each call of `steps` (module builder `mb`, entries emitted) whose functions are
    an earlier call's up to names run the earlier's: its functions are dropped and it is
    added to mb.forwarded ({call: the call whose code it runs}, which holds those codegen
    did not emit), every call forwarded to the one that keeps its code."""
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
            first = first_of.setdefault(re.sub(r'"' + re.escape(name) + r'(?=[".])', '"\0',
                                               text), name)
            if first != name:
                for g in own:
                    del mb.module.globals[g.name]
                    mb.texts.pop(g.name, None)
                forwarded[name] = first
    for name, first in forwarded.items():   # codegen's first may be a later duplicate
        while first in forwarded:
            first = forwarded[first]
        forwarded[name] = first
