"""Graph rewrites the llvm backend applies before partitioning, where its own kernels
disagree with the graph's choice of kernel.

A matmul of one row, (1, k) @ (k, n) (what `v @ W` with a vector v becomes), is a
broadcast multiply reduced over k: it then fuses with v's producers and W's, reads W
once in order, and skips the packed kernel's packing and register tiles, which are built
for wide operands. Measured against the packed kernel: run time 98 -> 48 us at
1000 x 1000 and 410 -> 67 us at 256 x 4096; compile time about halves (28 -> 14 ms at
64 x 64, which is most of W10's loop body).
"""
from ir import Graph, Node, Var
from ir.types import ShapedArray, dtype_kind
from lowering.llvm.linalg import KERNELS
from registry.tables import _kernels


def thin_matmuls(graph):
    """`graph` (and its regions) with each one-row, unbatched matmul a multiply-reduce,
    unless the matmul kernel's llvm impl is a user's."""
    if _kernels.get(("matmul", "llvm")) is not KERNELS["matmul"]:
        return graph
    nodes, changed = [], False
    for n in graph.nodes:
        m = n.with_regions(thin_matmuls)
        changed |= m is not n
        if m.kernel == "matmul" and _one_row(m):
            nodes.extend(_multiply_reduce(m))
            changed = True
        else:
            nodes.append(m)
    return (Graph(graph.invars, graph.outvars, nodes, graph.constvars, graph.consts)
            if changed else graph)


def _one_row(node):
    """(1, k) @ (k, n), not empty, not half floats (whose products the matmul kernel
    keeps in float32)."""
    a, b = (x.aval for x in node.inputs)
    return (a.ndim == 2 and b.ndim == 2 and a.shape[0] == 1 and a.size > 0 and b.size > 0
            and not (dtype_kind(a.dtype) == "f" and a.dtype.itemsize < 4))


def _multiply_reduce(node):
    (a, b), (out,) = node.inputs, node.outputs
    (k, n), dt = b.aval.shape, out.aval.dtype
    column, wide, product, row = (Var(ShapedArray(s, dt)) for s in ((k, 1), (k, n), (k, n),
                                                                    (n,)))
    return [Node("reshape", [a], [column], {"shape": (k, 1)}, node.source),
            Node("broadcast_to", [column], [wide], {"shape": (k, n)}, node.source),
            Node("mul", [wide, b], [product], None, node.source),
            Node("reduce_sum", [product], [row], {"axes": (0,)}, node.source),
            Node("reshape", [row], [out], {"shape": (1, n)}, node.source)]
