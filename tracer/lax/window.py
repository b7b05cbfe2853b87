"""`reduce_window`: sum, max or min over sliding windows as one `reduce_window` kernel;
other computations, pytrees of operands, traced init values and window dilation as a
gather of the windows folded by the computation (a composition of existing kernels).

Every window is a fixed set of flat positions of the operand, so the kernel and both
gradients share one index map, computed once per shape (cached): `idx[k, p]` is the flat
operand position read by window element k of output p, or `size` (one slot past the end,
holding the init value) where the window covers padding or a hole of the base dilation.
The sum's gradient spreads dy over each window (a scatter_add); max/min send dy to the
first extreme of each window, as jax.lax's select_and_scatter_add does. Both are written
with take/scatter_add, so they differentiate again. Windows that tile the operand (the
usual pooling: strides = window, no padding or dilation) use one `tile_scatter` kernel
instead, in gather form: each position of dx reads its window, so no index arrays and
no scatter. The index map and both kernels' NumPy impls are lowering.numpy_windows',
their llvm impls lowering.llvm.windows'.
"""
import numpy as np

from ir import ShapedArray
from ir.errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from ir.types import dtype_kind
from lowering.numpy_windows import dilate, window_index, window_out_shape
from registry import declare_kernel
from tracer import numpy as tnp
from tracer.core import run_kernel
from tracer.lax.conv import ints, pads_of
from tracer.lax.lax_elementwise import add, max, min  # noqa: A004  (jax.lax's, as computations)
from tracer.numpy.reductions import computation as computation_dtype
from tracer.pytree import flatten, unflatten


_OPS = ((add, "add"), (max, "max"), (min, "min"), (tnp.add, "add"), (tnp.maximum, "max"),
        (tnp.minimum, "min"))


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window. One array reduced by tracer.lax.add, max or min with a
    concrete init_value and undilated windows runs the reduce_window kernel; any other
    computation, pytrees of operands, a traced init_value or window_dilation gathers the
    windows (one take of the index map) and folds them with computation."""
    xs, tree = flatten(operand)
    inits, init_tree = flatten(init_value)
    xs, inits = [tnp.asarray(x) for x in xs], [tnp.asarray(v) for v in inits]
    if tree != init_tree or not xs or len({x.shape for x in xs}) > 1:
        raise ArgumentError(f"reduce_window: operand and init_value must be pytrees of the "
                            f"same structure with arrays of one shape, got {tree} with shapes "
                            f"{[x.shape for x in xs]} and {init_tree}")
    if any(v.ndim for v in inits):
        raise ArgumentError(f"reduce_window expected init_values to be scalars but "
                            f"init_values have shapes {[v.shape for v in inits]}.")
    n = xs[0].ndim
    window = ints("reduce_window", "window_dimensions", window_dimensions, n)
    strides = ints("reduce_window", "window_strides", window_strides, n)
    bdil = ints("reduce_window", "base_dilation", base_dilation, n)
    wdil = ints("reduce_window", "window_dilation", window_dilation, n)
    pads = pads_of("reduce_window", padding, xs[0].shape,
                   [dilate(k, d) for k, d in zip(window, wdil)], strides)
    op = next((name for fn, name in _OPS if fn is computation), None)
    init = _concrete(inits[0]) if len(xs) == 1 and op and set(wdil) == {1} else None
    if init is None:
        return unflatten(tree, _folded(xs, inits, computation, tree, window, strides, pads,
                                       bdil, wdil))
    x = xs[0]
    wide = computation_dtype(x.dtype) if op == "add" else x.dtype    # half sums in float32
    out = run_kernel("reduce_window", [tnp.astype(x, wide)], {
        "op": op, "init": init, "window": window, "strides": strides, "pads": pads,
        "bdil": bdil})
    return unflatten(tree, [tnp.astype(out, x.dtype)])


def _concrete(value):
    """value as a Python float, or None when it is traced."""
    try:
        return float(np.asarray(value))
    except (TypeError, ValueError):
        return None


def _folded(xs, inits, computation, tree, window, strides, pads, bdil, wdil):
    """Each window's elements (init_value where it covers padding or a base-dilation hole)
    folded left to right into init_value by computation, all windows at once."""
    idx = window_index(xs[0].shape, window, strides, pads, bdil, wdil)          # (K, P)
    shape = window_out_shape(xs[0].shape, window, strides, pads, bdil, wdil)
    inits = [tnp.astype(v, x.dtype) for x, v in zip(xs, inits)]
    windows = [tnp.take(tnp.concatenate([tnp.reshape(x, (-1,)), tnp.reshape(v, (1,))]), idx,
                        axis=0) for x, v in zip(xs, inits)]
    acc = [tnp.broadcast_to(v, (idx.shape[1],)) for v in inits]
    for k in range(idx.shape[0]):
        out = computation(unflatten(tree, acc), unflatten(tree, [w[k] for w in windows]))
        leaves, out_tree = flatten(out)
        if out_tree != tree:
            raise ArgumentValueError(f"reduce_window output must have the same tree structure "
                                     f"as the operands {tree}, got {out_tree}")
        acc = [tnp.asarray(v) for v in leaves]
    return [tnp.reshape(a, shape) for a in acc]


def _rule(x, *, op, init, window, strides, pads, bdil):
    if dtype_kind(x.dtype) not in "fiu":
        raise DTypeError(f"reduce_window: needs a numeric operand, got {x}")
    if not (len(window) == len(strides) == len(pads) == len(bdil) == x.ndim):
        raise ShapeError(f"reduce_window: window {window}, strides {strides}, padding {pads} "
                         f"and base_dilation {bdil} need one entry per dim of {x}")
    return ShapedArray(window_out_shape(x.shape, window, strides, pads, bdil, (1,) * x.ndim),
                       x.dtype)


def _index(x, attrs):
    return window_index(tuple(x.shape), *(tuple(attrs[k]) for k in
                                          ("window", "strides", "pads", "bdil")), (1,) * x.ndim)


# ---- the gradient when windows tile x: one gather-form kernel, no index arrays ------------
def _tiled(attrs):
    return attrs["strides"] == attrs["window"] and set(attrs["bdil"]) == {1} and \
        set(attrs["pads"]) <= {(0, 0)}


def _tile_rule(x, dy, *, op, window):
    if dy.ndim != x.ndim or any(o != n // k for o, n, k in zip(dy.shape, x.shape, window)):
        raise ShapeError(f"tile_scatter: dy {dy} is not x {x} pooled by window {window}")
    return ShapedArray(x.shape, dy.dtype)


def _tile_grad(ct, inputs, out, attrs):
    """Linear in dy: each window gathers ct at its selected element(s)."""
    x, dy = inputs
    window = attrs["window"]
    mask = run_kernel("tile_scatter", [x, tnp.ones(dy.shape, dy.dtype)], attrs)
    return None, reduce_window(ct * mask, 0.0, add, window, window, "VALID")


def _tile_batch(inputs, dims, attrs):
    size = next(x.shape[d] for x, d in zip(inputs, dims) if d is not None)
    xs = [tnp.moveaxis(x, d, 0) if d is not None else tnp.broadcast_to(x, (size,) + x.shape)
          for x, d in zip(inputs, dims)]
    return run_kernel("tile_scatter", xs, {"op": attrs["op"],
                                           "window": (1,) + tuple(attrs["window"])}), 0


def _grad(dy, inputs, out, attrs):
    x, = inputs
    if _tiled(attrs) and dy.size:
        return (run_kernel("tile_scatter", [x, dy], {"op": attrs["op"],
                                                     "window": attrs["window"]}),)
    idx = _index(x, attrs)
    size = x.size
    g = tnp.reshape(dy, (1, idx.shape[1]))
    if attrs["op"] == "add":
        upd = tnp.broadcast_to(g, idx.shape)
    else:       # the first extreme of each window (a padding slot never wins over init)
        ext = tnp.concatenate([tnp.reshape(x, (size,)), tnp.full((1,), attrs["init"], x.dtype)])
        vals = run_kernel("take", [ext, idx], {"axis": 0})
        first = tnp.argmax(vals if attrs["op"] == "max" else -vals, axis=0)
        hit = tnp.equal(tnp.reshape(first, (1, idx.shape[1])), np.arange(idx.shape[0])[:, None])
        upd = tnp.where(hit, g, tnp.zeros((), dy.dtype))
    dx = run_kernel("scatter_add", [upd, idx], {"axis": 0, "size": size + 1})
    return (tnp.reshape(dx[:size], x.shape),)


def _batch(inputs, dims, attrs):
    x, = inputs
    bd = dims[0]
    a = dict(attrs)
    for k, v in (("window", 1), ("strides", 1), ("pads", (0, 0)), ("bdil", 1)):
        a[k] = tuple(a[k][:bd]) + (v,) + tuple(a[k][bd:])
    return run_kernel("reduce_window", [x], a), bd


declare_kernel("reduce_window", shape=_rule, gradient=_grad, batching=_batch)
declare_kernel("tile_scatter", shape=_tile_rule, gradient=_tile_grad, batching=_tile_batch)
