"""A cache keyed by the optimized graph, so that a warm process skips code generation.

target.py caches object code by module text, but producing that text (partitioning,
emitting, printing) costs milliseconds per graph. Here a digest of the graph's structure
(every node's kernel and its family, which steers fusion, inputs, attrs, output types and
source, regions as graphs with the values of their constants, which their code holds;
literal values; input and const types) plus the identity of the code generator maps to the graph's artifact
(lowering.llvm.artifact: the module text, whose object code target.py then loads, and
what the call path needs besides). Entries live in memory (the settings.code_cache_size
most recently used) and, next to the object files, as <key>.g files
(lowering.llvm.caches), in artifact.encode's plain form.

What a kernel's llvm impl emits is part of the code, so a graph is cached only when every
kernel in it has its built-in llvm impl (one of this package's KERNELS tables): a
user-registered impl is a Python object that nothing stable across processes identifies.
The generator's identity is the size and mtime of every lowering/llvm and ir source file
(as Python's own .pyc check), the
llvmlite, NumPy and Python versions, the target CPU and the Python build's object layout,
and every setting that may steer code generation (lowering.settings: `settings.key()`).
"""
import functools
import hashlib
import marshal
import os
import sys

import llvmlite
import numpy as np

from ir import Graph, Literal, Node, Var
from lowering.llvm import (artifact, caches, callbacks, control, conv_shared, entries, linalg,
                           reductions, scalars, scans, shapes, target, windows)
from lowering.llvm.fusion import Group
from lowering.settings import settings
from registry.families import family as _family
from registry.tables import KERNELS

_impls = KERNELS.entries       # (kernel, backend) -> impl, read on hot paths

FORMAT = 5
# Every built-in llvm impl: the package registers exactly these, and only graphs whose
# impls are all still these objects are graph-cached (their code is fixed by the source).
BUILTIN = {name: impl for table in (scalars.KERNELS, scans.KERNELS, shapes.KERNELS,
                                    reductions.KERNELS, linalg.KERNELS, control.KERNELS,
                                    conv_shared.KERNELS, windows.KERNELS, callbacks.KERNELS)
           for name, impl in table.items()}
SOURCES = ("lowering/llvm", "ir", "registry")   # the code generator, the graphs it reads,
#                                                 and the tables it asks


_memory = caches.Lru(settings.code_cache_size)
stats = {"memory_hits": 0, "disk_hits": 0, "stored": 0}


class _Uncacheable(Exception):
    pass


def _source_identity():
    """Taken at import, so that it describes the code this process runs."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = []
    for sub in SOURCES:
        with os.scandir(os.path.join(root, sub)) as it:
            files += [(sub, e.name, e.stat().st_size, e.stat().st_mtime_ns)
                      for e in it if e.name.endswith(".py")]
    return repr((FORMAT, sorted(files), llvmlite.__version__, np.__version__,
                 sys.version_info[:3]))


_SOURCES = _source_identity()


def _settings():
    """What code generation depends on besides the graph: the target and every setting."""
    return (target.TRIPLE, target.CPU, target.FEATURES, entries.DATA_OFFSET,
            entries.ITEMS_OFFSET, settings.key())


# NumPy computes dtype.name in Python (~5 us); a key names every node's output type
_name = functools.lru_cache(maxsize=None)(lambda dtype: dtype.name)


def _attr(v):
    """A canonical, type-tagged form of an attr value, or _Uncacheable. A region (a Graph)
    stands for its structure and its constants' values, which its code holds."""
    t = type(v)
    if v is None or t is bool or t is int or t is float or t is str:
        return v
    if t is tuple or t is list:
        return (t.__name__,) + tuple(_attr(x) for x in v)
    if isinstance(v, np.dtype):
        return ("dtype", _name(v))
    if t is Graph:
        return ("graph", _parts(v), [hashlib.sha256(
            np.ascontiguousarray(c).tobytes()).hexdigest() for c in v.consts])
    raise _Uncacheable


def key_of(g):
    """The cache key of graph `g` (after the backend's own passes), or None when it
    cannot be cached (a non-built-in llvm impl, an attr of an unknown type)."""
    try:
        parts = _parts(g)
    except (_Uncacheable, KeyError):
        return None
    # marshal version 0 shares nothing (no references, no interned strings): equal
    # structures give equal bytes in every process
    digest = _SOURCES_DIGEST.copy()
    digest.update(marshal.dumps((_settings(), parts), 0))
    return digest.hexdigest()


_SOURCES_DIGEST = hashlib.sha256(marshal.dumps(_SOURCES, 0))    # (3.5 KB, hashed once)


def _parts(g):
    """Graph `g` as nested tuples of plain values (a node's kernel and family, the
    types of its outputs: each written once per graph and referred to by number)."""
    number = artifact.numbering(g)[0]
    kernels, types, nodes = {}, {}, []
    for n in g.nodes:       # (loops: on CPython 3.11 a comprehension is a call)
        kernel = kernels.get(n.kernel)
        if kernel is None:
            impl = _impls.get((n.kernel, "llvm"))
            if impl is None or impl is not BUILTIN.get(n.kernel):
                raise _Uncacheable
            kernel = kernels[n.kernel] = len(kernels)
        ins, outs = [], []
        for x in n.inputs:
            ins.append(number[id(x)] if type(x) is Var else x.key)
        for o in n.outputs:
            t = types.get(o.aval)
            if t is None:
                t = types[o.aval] = len(types)
            outs.append(t)
        nodes.append((kernel, ins, [(k, _attr(v)) for k, v in n.attr_items]
                      if n.attr_items else None, outs, n.source))
    return ([(a.shape, _name(a.dtype), a.weak_type) for a in g.in_avals],
            [(v.aval.shape, _name(v.aval.dtype)) for v in g.constvars],
            [(k, _family(k)) for k in kernels],
            [(a.shape, _name(a.dtype), a.weak_type) for a in types],
            nodes, [number[id(v)] if type(v) is Var else v.key for v in g.outvars])


def lookup(key, g):
    """The artifact stored under `key` (memory, then disk) for graph `g`, or None."""
    if key is None:
        return None
    entry = _memory.get(key)
    if entry is not None:
        stats["memory_hits"] += 1
        return artifact.decode(entry, g)
    directory = target.disk_cache_dir()
    data = caches.read(directory, key + ".g") if directory else None
    if data is None:
        return None
    entry = marshal.loads(data)     # intact and written for `key` by this very code
    stats["disk_hits"] += 1
    _memory.put(key, entry)
    return artifact.decode(entry, g)


def store(key, g, art):
    """Remember artifact `art` of graph `g` (unless it holds Python steps or errors of
    classes outside ir.errors)."""
    if key is None or not artifact.cacheable(art):
        return
    entry = artifact.encode(art, g)
    _memory.put(key, entry)
    stats["stored"] += 1
    directory = target.disk_cache_dir()
    if directory:
        caches.write(directory, key + ".g", marshal.dumps(entry))


def call_key(part, call):
    """What emitting schedule call `call` of partition `part` reads, as bytes, for codegen
    to emit each distinct call once (lowering.llvm.sharing); None for a call running
    regions or a kernel without its built-in llvm impl. The group's fields (member groups,
    nodes, values: recursively, in a fixed order), each value numbered where it first
    appears, with its type and whether it is materialized or fused (then its producer
    too), each node's kernel, kind, attrs and source, and the launch facts but the time
    estimate."""
    if call.regions:
        return None
    number = {}

    def value(x):
        if type(x) is Literal:
            return ("literal", x.key)
        k = number.get(id(x))
        if k is not None:
            return k
        number[id(x)] = k = len(number)
        a, fused = x.aval, id(x) not in part.materialized and part.fusable(x)
        return (k, a.shape, a.dtype.str, a.weak_type, not fused,
                fused and node(part.producer[id(x)]))

    def node(n):
        if part.impls[id(n)] is not BUILTIN.get(n.kernel):
            raise _Uncacheable
        return (n.kernel, part.kind[id(n)], [value(x) for x in n.inputs],
                [(k, _attr(v)) for k, v in n.attr_items], [value(o) for o in n.outputs],
                n.source)

    def field(v):
        t = type(v)
        if t is Var or t is Literal:
            return value(v)
        if t is Node:
            return node(v)
        if t is Group:
            return ("group",) + tuple((k, field(x)) for k, x in sorted(vars(v).items()))
        if t is list or t is tuple:
            return (t.__name__,) + tuple(field(x) for x in v)
        return _attr(v)
    launch = call.launch
    try:
        return marshal.dumps((field(call.group), launch.items, launch.scratch,
                              launch.prepare, launch.grain), 0)
    except _Uncacheable:
        return None
