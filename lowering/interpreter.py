"""The graph interpreter: runs each node through its `numpy`-backend kernel.

This is what `jit(backend="numpy")` executes, what eager `grad` uses, and what constant
folding calls. Kernels are looked up per call (one dict lookup per node), so a
re-registered kernel takes effect at once. A failing kernel raises KernelError naming the
node and the user's source line.
"""
import numpy as np

from ir import Literal
from ir.errors import KernelError, TracerError
from registry.tables import _kernels, get_kernel


def run_node(node, ins, backend="numpy"):
    """Run one node on concrete inputs; returns the list of its outputs."""
    impl = _kernels.get((node.kernel, backend)) or get_kernel(node.kernel, backend)
    try:
        out = impl(*ins, **dict(node.attr_items))
    except TracerError as e:
        if node.source and node.source not in str(e):
            raise type(e)(f"{e} (in {node.kernel!r} node created at {node.source})") from None
        raise
    except Exception as e:
        shapes = ", ".join(f"{np.asarray(i).dtype}{list(np.shape(i))}" for i in ins)
        raise KernelError(f"kernel {node.kernel!r} ({backend}) failed on ({shapes})"
                          f"{' at ' + node.source if node.source else ''}: "
                          f"{type(e).__name__}: {e}") from e
    return [out] if len(node.outputs) == 1 and not isinstance(out, tuple) else list(out)


def evaluate(graph, args, backend="numpy"):
    env = {id(v): c for v, c in zip(graph.constvars, graph.consts)}
    for v, a in zip(graph.invars, args):
        env[id(v)] = a
    for n in graph.nodes:
        outs = run_node(n, [x.value if type(x) is Literal else env[id(x)] for x in n.inputs],
                        backend)
        for o, val in zip(n.outputs, outs):
            env[id(o)] = val
    return [v.value if type(v) is Literal else env[id(v)] for v in graph.outvars]
