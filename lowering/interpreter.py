"""The graph interpreter: runs each node through one backend's kernels.

This is what `jit(backend=...)` executes for a backend with no compiler (`numpy`
included), what eager `grad`/`vjp` run on the active backend, and what constant folding
calls. Kernels are looked up per call (one dict lookup per node), so a re-registered
kernel takes effect at once. Every kernel result is checked against the node's types
(the shape rule's promise) before anything downstream trusts it, and the values a graph
returns never alias its inputs, its constants or each other (JAX semantics: a caller may
mutate any result in place).
"""
import weakref

import numpy as np

from ir import Literal
from ir.errors import KernelError, TracerError
from registry.tables import KERNELS, backend_eager, get_kernel

_impls = KERNELS.entries       # (kernel, backend) -> impl, read on hot paths


def _check(node, backend, outs):
    """KernelError unless `outs` match the node's output count, shapes and dtypes."""
    if len(outs) != len(node.outputs):
        raise KernelError(f"kernel {node.kernel!r} on backend {backend!r} returned "
                          f"{len(outs)} outputs, but its shape rule says "
                          f"{len(node.outputs)}{_where(node)}")
    for k, (o, var) in enumerate(zip(outs, node.outputs)):
        aval = var.aval
        dtype = o.dtype if hasattr(o, "dtype") else np.asarray(o).dtype
        if np.shape(o) != aval.shape or dtype != aval.dtype:
            got = f"{dtype}{list(np.shape(o))}"
            raise KernelError(f"kernel {node.kernel!r} on backend {backend!r} returned {got} "
                              f"for output {k}, but its shape rule says {aval}{_where(node)}. "
                              f"Fix the kernel (or its shape rule) so they agree.")


def _where(node):
    return f" (node created at {node.source})" if node.source else ""


def run_node(node, ins, backend="numpy"):
    """Run one node on concrete inputs with `backend`'s kernel (through the backend's eager
    runner if it has one, as llvm does); returns the list of its checked outputs."""
    attrs = dict(node.attr_items)
    eager = backend_eager(backend)
    try:
        if eager is not None:
            out = eager(node.kernel, ins, attrs)
        else:
            impl = _impls.get((node.kernel, backend)) or get_kernel(node.kernel, backend)
            out = impl(*ins, **attrs)
    except TracerError as e:
        if node.source and node.source not in str(e):
            raise type(e)(f"{e} (in {node.kernel!r} node created at {node.source})") \
                from e.__cause__
        raise
    except Exception as e:
        shapes = ", ".join(f"{np.asarray(i).dtype}{list(np.shape(i))}" for i in ins)
        raise KernelError(f"kernel {node.kernel!r} ({backend}) failed on ({shapes})"
                          f"{_where(node)}: {type(e).__name__}: {e}") from e
    outs = list(out) if isinstance(out, tuple) else [out]
    _check(node, backend, outs)
    return outs


def own(values, inputs):
    """`values` with every array that might alias one of `inputs`, a constant or an earlier
    value copied: an array that owns fresh, writable memory is returned as it is."""
    seen = [a for a in inputs if isinstance(a, np.ndarray)]
    ids = {id(a) for a in seen}
    result = []
    for v in values:
        if isinstance(v, np.ndarray) and (
                id(v) in ids or not v.flags.writeable or v.base is not None and any(
                    np.may_share_memory(v, a) for a in seen)):
            v = v.copy()
        if isinstance(v, np.ndarray):
            seen.append(v)
            ids.add(id(v))
        result.append(v)
    return result


def run(graph, args, backend="numpy"):
    """The graph's outputs on concrete `args`, which may alias the args, its constants or
    each other: what a loop kernel runs its region with, per iteration (nothing mutates a
    value inside a run; the kernel `own`s what it finally returns). A value is dropped
    after its last use, so memory holds what is live, not every intermediate."""
    env = {id(v): c for v, c in zip(graph.constvars, graph.consts)}
    for v, a in zip(graph.invars, args):
        env[id(v)] = a
    for n, dead in zip(graph.nodes, _deaths(graph)):
        outs = run_node(n, [x.value if type(x) is Literal else env[id(x)] for x in n.inputs],
                        backend)
        for o, val in zip(n.outputs, outs):
            env[id(o)] = val
        for k in dead:
            del env[k]
    return [np.array(v.value) if type(v) is Literal else env[id(v)] for v in graph.outvars]


_death_lists = weakref.WeakKeyDictionary()      # graph -> per node, the ids it frees


def _deaths(graph):
    """Per node of `graph`, the ids of the values read for the last time there (never a
    graph output)."""
    deaths = _death_lists.get(graph)
    if deaths is None:
        last = {}
        for i, n in enumerate(graph.nodes):
            for x in n.inputs:
                if type(x) is not Literal:
                    last[id(x)] = i
            for o in n.outputs:          # an output nobody reads dies where it is made
                last.setdefault(id(o), i)
        for v in graph.outvars:
            last.pop(id(v), None)
        deaths = [[] for _ in graph.nodes]
        for k, i in last.items():
            deaths[i].append(k)
        _death_lists[graph] = deaths
    return deaths


def evaluate(graph, args, backend="numpy"):
    """The graph's outputs on concrete `args`, each an array of its own."""
    return own(run(graph, args, backend), list(args) + list(graph.consts))
