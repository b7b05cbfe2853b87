"""Graph rewrites the llvm backend applies before partitioning, where its own kernels
disagree with the graph's choice of kernel.

A matmul with one row or one column, (.., 1, k) @ (.., k, n) or (.., m, k) @ (.., k, 1)
(what `v @ W` and `A @ v` with a vector v become), is a broadcast multiply reduced over
k: it then fuses with its operands' producers, reads the matrix once in order, and skips
the packed kernel's packing and register tiles, which are built for wide operands.
Measured against the packed kernel: v @ W 98 -> 61 us at 1000 x 1000 and 410 -> 64 us
at 256 x 4096, compile time 28 -> 21 ms at 64 x 64 (most of W10's loop body); A @ v was
10x faster at 1000 x 1000 and 300x on 1-d operands when it was rewritten in
tracer.numpy (which now leaves matmul to the backends: NumPy's BLAS does it best there).

A wider matmul whose operand is a transpose of the last two axes (what the gradient of
`x @ W` has: x.T @ dy and dy @ W.T) reads the transpose's input instead, the matmul
node saying so in its attrs (`transpose_a`/`transpose_b`, read by the llvm impl in
lowering.llvm.linalg, and by the NumPy kernel in a loop body that runs as a Python step
beside a NumpyInProgram kernel): the packed kernel copies A's row slivers and packs B
anyway, and now does it from the stored layout, so the transpose is no longer a pass
over memory of its own, and the node goes when nothing else reads it. A dtype conversion
between the two (half floats widened to float32 for the product, `tracer.numpy.matmul`)
moves ahead of the transpose, where it converts the stored layout, so it does not hide
the transpose.
"""
from ir import Graph, Node, Var
from ir.passes import dce
from ir.types import ShapedArray, dtype_kind
from lowering.llvm.linalg import KERNELS
from lowering.llvm.transpose import swaps_last_two
from registry import tables


def rewrite_matmuls(graph):
    """`graph` (and its regions) with each one-row or one-column matmul a multiply-reduce
    and the other matmuls reading transposed operands in place, unless the matmul
    kernel's llvm impl is a user's."""
    if tables.KERNELS.entries.get(("matmul", "llvm")) is not KERNELS["matmul"] or \
            "matmul" not in graph.kernels():        # (nothing to rewrite: nothing built)
        return graph
    producer = {id(o): n for n in graph.nodes for o in n.outputs}
    nodes, changed = [], False
    for n in graph.nodes:
        m = n.with_regions(rewrite_matmuls)
        if m.kernel == "matmul" and _thin(m):
            nodes.extend(_multiply_reduce(m))
            changed = True
            continue
        if m.kernel == "matmul":
            m = _fold_transposes(m, producer, nodes)
        changed |= m is not n
        nodes.append(m)
    if not changed:
        return graph
    return dce(Graph(graph.invars, graph.outvars, nodes, graph.constvars, graph.consts))


def _fold_transposes(node, producer, nodes):
    """The matmul reading the input of each operand that is a transpose of the last two
    axes (its flag toggles, should the matmul already read that operand transposed),
    converted first (a node appended to `nodes`) if a convert stood between them."""
    ins, attrs = list(node.inputs), node.attrs
    for i, flag in enumerate(("transpose_a", "transpose_b")):
        t = c = producer.get(id(ins[i]))
        if c is not None and c.kernel == "convert":
            t = producer.get(id(c.inputs[0]))
        if t is None or not swaps_last_two(t):
            continue
        ins[i], attrs[flag] = t.inputs[0], not attrs.get(flag, False)
        if c is not t:
            stored = Var(ShapedArray(ins[i].aval.shape, c.outputs[0].aval.dtype))
            nodes.append(Node("convert", [ins[i]], [stored], c.attrs, c.source))
            ins[i] = stored
    return node if ins == list(node.inputs) else Node("matmul", ins, node.outputs, attrs,
                                                      node.source)


def _thin(node):
    """One row or one column, not empty, not half floats (whose products the matmul
    kernel keeps in float32), operands not transposed (by an earlier pass)."""
    a, b = (x.aval for x in node.inputs)
    return (not node.attr_items and (a.shape[-2] == 1 or b.shape[-1] == 1)
            and a.size > 0 and b.size > 0
            and not (dtype_kind(a.dtype) == "f" and a.dtype.itemsize < 4))


def _multiply_reduce(node):
    """out[.., i, j] = sum over k of a[.., i, k] * b[.., k, j], with the operand of size
    one on its outer axis laid along the other's k axis: a row reduces over axis -2 of
    b, a column over axis -1 of a."""
    (a, b), (out,) = node.inputs, node.outputs
    *batch, m, k = a.aval.shape
    n, dt, batch = b.aval.shape[-1], out.aval.dtype, tuple(batch)
    if m == 1:      # a's row as a column beside b's k rows
        thin, wide, shape, axis = a, b, batch + (k, n), len(batch)
    else:           # b's column as a row beside a's k columns
        thin, wide, shape, axis = b, a, batch + (m, k), len(batch) + 1
    turned = batch + ((k, 1) if m == 1 else (1, k))
    column, spread, product, reduced = (Var(ShapedArray(s, dt)) for s in (
        turned, shape, shape, shape[:axis] + shape[axis + 1:]))
    src = node.source
    return [Node("reshape", [thin], [column], {"shape": turned}, src),
            Node("broadcast_to", [column], [spread], {"shape": shape}, src),
            Node("mul", [spread, wide], [product], None, src),
            Node("reduce_sum", [product], [reduced], {"axes": (axis,)}, src),
            Node("reshape", [reduced], [out], {"shape": out.aval.shape}, src)]
