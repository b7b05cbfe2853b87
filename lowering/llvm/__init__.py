"""The `llvm` backend: whole-graph compilation to fused native code via llvmlite.

    from lowering.llvm import compile_graph
    program = compile_graph(graph)      # one LLVM module, cached in memory and on disk
    outs = program.run(inputs)          # usually one native call
    program.as_text(); print(program.graph)

Kernel impls come in three forms (lowering.llvm.protocol): `ScalarKernel` bodies and
`IndexMap`s fuse into their consumers' loops, `KernelEmitter`s emit whole kernels. A
node whose kernel has no llvm impl runs its numpy kernel inside the program.
Importing this package registers its impl of every built-in kernel (`BUILTIN`, collected
from the KERNELS table of each module that emits them) and the eager runner used by
`tracer.set_backend("llvm")`. A kernel declared later with `registry.define_kernel`
names its impl here (`llvm=BUILTIN[name]`), since a declaration replaces every part.
"""
import numpy as np

import registry
from ir import Graph, Node, ShapedArray, Var
from ir.graph import freeze_attrs
from lowering.llvm import caches
from lowering.llvm.program import Program, compile_graph
from lowering.llvm.protocol import (Index, IndexMap, KernelEmitter, NumpyInProgram,
                                     ScalarKernel)
from lowering.llvm.graph_cache import BUILTIN
from lowering.settings import settings
from registry.shape_rules import apply_shape_rule

for _name, _impl in BUILTIN.items():
    registry.register_kernel(_name, "llvm", _impl)

_eager_cache = caches.Lru(settings.eager_cache_size)


def run_eager(kernel, arrays, attrs):
    """Run one kernel on concrete arrays by compiling (once per kernel, input types,
    attrs and registry version) a one-node graph; the settings.eager_cache_size
    (TRACER_EAGER_CACHE_SIZE) most recently used such programs are kept."""
    avals = [ShapedArray(np.shape(a), np.asarray(a).dtype) for a in arrays]
    key = (kernel, tuple((a.shape, a.dtype) for a in avals), freeze_attrs(attrs),
           registry.version(kernel))
    entry = _eager_cache.get(key)
    if entry is None:
        outs, multi = apply_shape_rule(kernel, avals, attrs)
        invars, outvars = [Var(a) for a in avals], [Var(a) for a in outs]
        graph = Graph(invars, outvars, [Node(kernel, invars, outvars, attrs)])
        entry = (compile_graph(graph), multi)
        _eager_cache.put(key, entry)
    program, multi = entry
    result = program.run(list(arrays))
    return tuple(result) if multi else result[0]


registry.register_backend("llvm", eager=run_eager, compile=compile_graph)

__all__ = ["compile_graph", "Program", "ScalarKernel", "IndexMap", "KernelEmitter",
           "NumpyInProgram", "Index", "run_eager", "BUILTIN"]
