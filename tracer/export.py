"""Export a traced function to ONNX, so a model traced here runs in any ONNX runtime.

`to_onnx` traces `fun` like `jit` (pytrees of arrays in and out), inlines custom_call
nodes, runs jit's optimization pipeline, and hands the graph to lowering.onnx, which
writes each node with the exporter registered for its kernel
(`registry.register_exporter(kernel, "onnx", fn)`; the built-in kernels' are
lowering.onnx's rules). onnx is imported only when exporting.
"""

import numpy as np

from ir.errors import ArgumentError, ShapeError, TracerError
from ir.passes import inline_calls
from lowering.onnx import batch_plan, to_model
from tracer.jit import make_graph
from tracer.background_compile import optimize
from tracer.pytree import LEAF, flatten, unflatten
from tracer.signature import positional_names


def _traced(fun, args):
    """The optimized graph of fun(*args), with custom calls inlined."""
    return optimize(inline_calls(make_graph(fun)(*args)))


def _batch_plan(fun, args, g1, name):
    """Trace again with batch b1 + 1 and compare (lowering.onnx.batch_plan): what
    changed is what follows the batch."""
    leaves, tree = flatten(list(args))
    leads = {np.shape(x)[0] for x in leaves if np.ndim(x)}
    if len(leads) != 1:
        raise ArgumentError(
            f"to_onnx({name}, dynamic_batch=True): every array argument must lead with "
            f"the batch dimension, got shapes {[np.shape(x) for x in leaves]}; close over "
            f"the others (e.g. parameters): to_onnx(lambda x: f(params, x), x, ...)")
    b1 = leads.pop()
    b2 = b1 + 1
    args2 = unflatten(tree, [np.zeros((b2,) + np.shape(x)[1:], np.asarray(x).dtype)
                             if np.ndim(x) else x for x in leaves])
    try:
        g2 = _traced(fun, args2)
    except TracerError as e:
        raise ShapeError(f"to_onnx({name}, dynamic_batch=True): it does not trace with "
                         f"batch size {b2} (the example has {b1}): {e}") from None
    return batch_plan(g1, g2, b1, b2, f"to_onnx({name}, dynamic_batch=True)")


def _input_names(fun, args):
    """`x`, or `params_0`, `params_1`, ... for an argument `params` with several leaves."""
    params, names = positional_names(fun), []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"arg{i}"
        leaves, tree = flatten(a)
        names += [base] if tree == LEAF else [f"{base}_{j}" for j in range(len(leaves))]
    return names


def to_onnx(fun, *example_args, path=None, dynamic_batch=False):
    """The traced, optimized graph of `fun(*example_args)` as an ONNX ModelProto (opset
    18), checked with onnx.checker and written to `path` if given.

    Inputs are named after `fun`'s parameters (`params_0`, ... for pytrees, in
    tree_flatten order); outputs are `output_0`, ... in the order of the flattened result.

    dynamic_batch=True makes the leading dimension of every input, and of each output
    that follows it, the symbolic dimension "batch". Every array argument must then lead
    with the batch (close over parameters instead of passing them), and the function is
    traced a second time with another batch size to find what depends on it: a shape
    attr entry equal to the batch (broadcast_to, reshape, slice limits, scatter sizes)
    and a constant equal to it (the divisor of a mean over the batch axis) become the
    run-time batch size; anything that depends on it otherwise (a reshape that merges
    the batch axis with another, a mean over the batch and another axis, the 1/n of a
    mean's gradient, a strided slice of the batch axis) raises a ShapeError naming the
    node, as does a kernel whose exporter reads such an attr as a constant. Regions
    are traced and compared the same way: a loop's carry, or a map over the batch, can
    follow the batch.
    ONNX Runtime lacks a few kernels ONNX defines (Erf on float64).
    """
    name = getattr(fun, "__name__", type(fun).__name__)
    graph = _traced(fun, example_args)
    plan = _batch_plan(fun, example_args, graph, name) if dynamic_batch else None
    model = to_model(graph, _input_names(fun, example_args), name, plan)
    if path is not None:
        import onnx
        onnx.save(model, path)
    return model
