"""The small, unsigned and half-float dtypes in ONNX: nodes computed in a wider dtype.

ONNX has all of int8..uint64, float16 and bfloat16, but ONNX Runtime's CPU kernels cover
them patchily (no int16 Max, no float16 ReduceSum, no uint64 ReduceMax or TopK, ...). So a
node touching them runs its exporter on operands cast to the dtype the numpy backend
computes in (float32 for float16/bfloat16; int32/int64 for the narrower ints, whose
wrap-around the cast back restores exactly), and its outputs are cast back: each node's
result is the dtype its kernel promises, as in the graph. uint64 has no wider dtype: its
kernels that wrap alike in two's complement run on its bits as int64, and those that order
values on those bits with the top bit flipped (which maps uint64's order onto int64's);
the rest (div, shifts right, conversions) keep uint64, where ONNX Runtime has kernels.
"""
import numpy as np

from ir import BFLOAT16, ShapedArray

F32, I32, I64 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)
U64 = np.dtype(np.uint64)
WIDER = {np.dtype(np.float16): F32, BFLOAT16: F32, np.dtype(np.int8): I32,
         np.dtype(np.int16): I32, np.dtype(np.uint8): I32, np.dtype(np.uint16): I32,
         np.dtype(np.uint32): I64}
# moving data, which ONNX Runtime does for every dtype but bfloat16's Expand (and which it
# can get wrong cast: Cast-Expand-Cast of a (1, 3) to (0, 3) gives (1, 3))
MOVES = frozenset({"broadcast_to", "reshape", "transpose", "slice", "rev", "concatenate"})
U64_AS_INT64 = frozenset({
    "add", "sub", "mul", "neg", "pow", "matmul", "reduce_sum", "reduce_prod", "cumsum",
    "cumprod", "select", "eq", "ne", "and", "or", "xor", "not", "shl", "pad", "take",
    "scatter_add"})
U64_ORDERED = frozenset({"max", "min", "gt", "ge", "lt", "le", "reduce_max", "reduce_min",
                         "argmax", "argmin", "argsort"})
TOP_BIT = np.array(np.iinfo(np.int64).min)


def _plan(dtype, kernel):
    """(dtype to compute in, flip the top bit) for a value of `dtype` in `kernel`, or None
    to keep it as it is."""
    if kernel in MOVES and not (kernel == "broadcast_to" and dtype == BFLOAT16):
        return None
    if dtype == U64:
        ordered = kernel in U64_ORDERED
        return (I64, ordered) if ordered or kernel in U64_AS_INT64 else None
    return (WIDER[dtype], False) if dtype in WIDER else None


def _wide(aval, plan):
    return aval if plan is None else ShapedArray(aval.shape, plan[0], aval.weak_type)


def _flip(g, x, plan):
    return g.op("BitwiseXor", x, g.const(TOP_BIT)) if plan[1] else x


def export_widened(g, fn, inputs, attrs):
    """fn(g, inputs, attrs), on widened operands where the node has a dtype above (and no
    regions, whose subgraphs keep their declared types); the outputs cast back."""
    kernel = g.node.kernel
    ins = [_plan(a.dtype, kernel) for a in g.in_avals]
    outs_true = g.out_avals
    plans = [_plan(a.dtype, kernel) for a in outs_true]
    if g.node.regions or not any(ins + plans):
        return fn(g, inputs, attrs)
    inputs = [x if p is None else _flip(g, g.cast(x, p[0]), p) for x, p in zip(inputs, ins)]
    g.in_avals = tuple(map(_wide, g.in_avals, ins))
    g.out_avals = tuple(map(_wide, outs_true, plans))
    outs = fn(g, inputs, attrs)
    outs = [outs] if isinstance(outs, str) else list(outs)
    back = [o if p is None else g.cast(_flip(g, o, p), a.dtype)
            for o, a, p in zip(outs, outs_true, plans)]
    return tuple(back) + tuple(outs[len(back):])    # extra names: export_node says so
