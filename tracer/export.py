"""Export a traced function to ONNX, so a model traced here runs in any ONNX runtime.

`to_onnx` traces `fun` like `jit` (pytrees of arrays in and out), inlines custom_call
nodes, runs jit's optimization pipeline, and writes each node with the exporter that
`registry.register_exporter(kernel, "onnx", fn)` registered for its kernel (the
built-in kernels' are in registry/exporters*.py and registry/onnx_control.py; those ONNX
cannot express are listed, with the reason, in registry.exporters.NOT_EXPORTABLE). An exporter `fn(g, inputs, attrs)` gets the `OnnxBuilder`
below as `g` and the ONNX names of the node's inputs, and returns the name of each
output. A node's regions are exported recursively, as ONNX subgraphs (Loop bodies, If
branches) built with `g.subgraph()`. onnx is imported only when exporting.
"""
import inspect

import numpy as np

from ir.errors import ArgumentError, KernelError, ShapeError, TracerError
from ir.graph import Literal, Var, is_region
from ir.passes import inline_calls
from ir.printer import format_literal
from registry.exporters import get_exporter
from registry.exporters_dtypes import export_widened
from tracer.jit import make_graph
from tracer.programs import optimize
from tracer.pytree import LEAF, flatten, unflatten

OPSET = 18          # reduction axes are inputs from opset 18 on, for every reduction
IR_VERSION = 8      # the oldest IR version that carries opset 18: any runtime since 2022


class OnnxBuilder:
    """What an ONNX exporter gets as `g`: it appends ONNX nodes and constants.

    `g.node`, `g.in_avals`, `g.out_avals` describe the node being exported (shapes as in
    the example arguments: under dynamic_batch, read attrs with `g.ints` and dimensions
    with ONNX `Shape`, never as Python ints from these avals).

    Control flow: `g.subgraph()` is a builder for an ONNX subgraph (a Loop body, an If
    branch) nested in this one: `sub.input(...)` declares its formal inputs,
    `sub.emit(region, names)` exports a region's nodes into it, `sub.finish(...)` makes
    the GraphProto. Names, constants (initializers of the main graph) and the batch size
    are shared with the main graph, whose values a subgraph reads as outer-scope names.
    """

    def __init__(self, plan=None, reserved=(), batch_source=None, parent=None):
        self.root = parent.root if parent is not None else self
        self.nodes, self.inputs, self.value_info, self._described = [], [], [], set()
        self.node, self.in_avals, self.out_avals, self._masks = None, (), (), {}
        if parent is None:
            self.plan, self.initializers, self._consts = plan or _Plan(), [], {}
            self._count, self._reserved = 0, set(reserved)
            self._batch_source, self._batch = batch_source, None

    def _fresh(self, hint):
        root = self.root
        root._count += 1
        name = f"{hint}_{root._count}"
        return self._fresh(hint) if name in root._reserved else name

    def op(self, op_type, *inputs, outputs=1, **attributes):
        """Append one ONNX node; returns its output name (a list if outputs > 1)."""
        from onnx import helper
        names = [self._fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, **attributes))
        return names[0] if outputs == 1 else names

    def const(self, value, dtype=None):
        """The name of a constant (an initializer, shared by equal constants)."""
        from onnx import numpy_helper
        root, arr = self.root, np.asarray(value, dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in root._consts:
            root._consts[key] = self._fresh("const")
            root.initializers.append(numpy_helper.from_array(arr, root._consts[key]))
        return root._consts[key]

    def cast(self, x, dtype):
        return self.op("Cast", x, to=onnx_dtype(dtype))

    def ints(self, attr):
        """The current node's int (or tuple of ints) attr as a 1-D int64 tensor: a
        constant, except that under dynamic_batch its batch-size entries are read from
        an input's shape at run time."""
        value = self.node.attrs[attr]
        entries = tuple(value) if isinstance(value, tuple) else (value,)
        mask = self._masks.pop(attr, None)
        if mask is None:
            return self.const(np.array(entries, np.int64))
        parts, run = [], []
        for e, is_batch in zip(entries, mask):
            if is_batch:
                parts += [self.const(np.array(run, np.int64))] if run else []
                parts.append(self.batch_size())
                run = []
            else:
                run.append(e)
        parts += [self.const(np.array(run, np.int64))] if run else []
        return self.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0]

    def literal(self, lit, is_batch=False):
        """A graph Literal as a 0-d constant, or as the run-time batch size."""
        if not is_batch:
            return self.const(lit.value, lit.aval.dtype)
        size = self.op("Squeeze", self.batch_size(), self.const(np.zeros(1, np.int64)))
        return self.cast(size, lit.aval.dtype)

    def batch_size(self):
        """The run-time batch size as an int64 tensor of shape (1,) (a main-graph value,
        so subgraphs share it)."""
        root = self.root
        if root._batch is None:
            root._batch = root.op("Shape", root._batch_source, start=0, end=1)
        return root._batch

    def type_of(self, v):
        """(dtype, dims) of a graph value: dims that follow the batch are "batch"."""
        return v.aval.dtype, self.root.plan.dims_of(v)

    def subgraph(self):
        return OnnxBuilder(parent=self)

    def input(self, hint, type_):
        """Declare a formal input of this subgraph, of type (dtype, dims)."""
        name = self._fresh(hint)
        self.inputs.append(_info(name, type_))
        self._described.add(name)
        return name

    def finish(self, outputs, types, name):
        """This subgraph as a GraphProto returning `outputs` (names, of types (dtype,
        dims)), each through an Identity so that every output is a value it defines."""
        from onnx import helper
        outs = [self.op("Identity", x) for x in outputs]
        return helper.make_graph(self.nodes, name, self.inputs,
                                 [_info(o, t) for o, t in zip(outs, types)],
                                 value_info=self.value_info)

    def emit(self, graph, inputs):
        """Export `graph`'s nodes into this builder, its inputs bound to the ONNX names
        `inputs`; returns the names of its outputs. Regions go through here too."""
        plan = self.root.plan
        names = {id(v): n for v, n in zip(graph.invars, inputs)}
        names.update((id(v), self.const(c)) for v, c in zip(graph.constvars, graph.consts))
        for n in graph.nodes:
            ins = [names[id(x)] if isinstance(x, Var) else
                   self.literal(x, (id(n), j) in plan.batch_literals)
                   for j, x in enumerate(n.inputs)]
            for o, out in zip(n.outputs, self.export_node(n, ins, plan.masks.get(id(n), {}))):
                names[id(o)] = out
                if out not in self._described and out not in ins:  # may pass through
                    self._described.add(out)
                    self.value_info.append(_info(out, self.type_of(o)))
        return [names[id(v)] if isinstance(v, Var) else self.literal(v) for v in graph.outvars]

    def export_node(self, node, inputs, masks):
        """Run `node`'s exporter; returns one ONNX name per node output."""
        try:
            fn = get_exporter(node.kernel, "onnx")
        except TracerError as e:
            raise type(e)(f"to_onnx: {e} (node {_describe(node)})") from None
        saved = self.node, self.in_avals, self.out_avals, self._masks
        self.node, self._masks = node, dict(masks)
        unread = self._masks           # region exporters export nodes in between
        self.in_avals = tuple(x.aval for x in node.inputs)
        self.out_avals = tuple(o.aval for o in node.outputs)
        try:
            outs = export_widened(self, fn, list(inputs), node.attrs)
        except TracerError:
            raise
        except Exception as e:
            raise KernelError(f"to_onnx: the onnx exporter of {_describe(node)} failed: "
                              f"{type(e).__name__}: {e}") from e
        finally:
            self.node, self.in_avals, self.out_avals, self._masks = saved
        outs = [outs] if isinstance(outs, str) else list(outs)
        if len(outs) != len(node.outputs):
            raise KernelError(f"to_onnx: the onnx exporter of {node.kernel!r} returned "
                              f"{len(outs)} names for {len(node.outputs)} outputs")
        if unread:
            attr = next(iter(unread))
            raise ShapeError(f"to_onnx(dynamic_batch=True): {_describe(node)} has attr "
                             f"{attr}={node.attrs[attr]} holding the batch size, but its "
                             f"exporter reads it as a constant (g.ints({attr!r}) would "
                             f"follow the batch); export with a fixed batch instead")
        return outs


def _info(name, type_):
    from onnx import helper
    dtype, dims = type_
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), dims)


def onnx_dtype(dtype):
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _describe(node):
    ins = ", ".join(str(x.aval) for x in node.inputs)
    return f"{node.kernel}({ins})" + (f" at {node.source}" if node.source else "")


def _traced(fun, args):
    """The optimized graph of fun(*args), with custom calls inlined."""
    return optimize(inline_calls(make_graph(fun)(*args)))


class _Plan:
    """What export needs beyond the graph: each value's dims (ints, "batch", or None
    for unknown) and, under dynamic_batch, the node attrs and literals that are the
    batch size (keyed by node identity, so regions' nodes have theirs). Static (the
    example's shapes) unless `_batch_plan` fills it in."""

    def __init__(self):
        self.dims, self.masks, self.batch_literals = {}, {}, set()

    def dims_of(self, v):
        return self.dims.get(id(v), v.aval.shape)


def _all_vars(g):
    return g.constvars + g.invars + [o for n in g.nodes for o in n.outputs]


def _batch_plan(fun, args, g1, name):
    """Trace again with batch b1 + 1 and compare: what changed is what follows the batch.

    Dims and int attrs that are b1 in the example and b1 + 1 in the second trace become
    the run-time batch size; anything else that changes (a reshape to (b*n,), a mean over
    the batch axis and another, a structure that depends on the batch) raises ShapeError
    naming the node. Regions are compared the same way, recursively."""
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
    plan = _Plan()
    _match(g1, g2, b1, b2, plan, f"to_onnx({name}, dynamic_batch=True)")
    return plan


def _match(g1, g2, b1, b2, plan, where):
    """Record in `plan` what differs between g1 (batch b1) and g2 (batch b2)."""
    vars1, vars2 = _all_vars(g1), _all_vars(g2)
    if (len(vars1) != len(vars2) or len(g1.nodes) != len(g2.nodes)
            or any(a.kernel != b.kernel for a, b in zip(g1.nodes, g2.nodes))):
        raise ShapeError(f"{where}: the graph changes with the batch size ({len(g1.nodes)} "
                         f"nodes at batch {b1}, {len(g2.nodes)} at {b2}); use an example "
                         f"batch size larger than 1 and unlike the other dimensions, or "
                         f"export with a fixed batch")
    for c1, c2 in zip(g1.consts, g2.consts):
        if np.shape(c1) != np.shape(c2) or not np.array_equal(c1, c2, equal_nan=True):
            raise ShapeError(f"{where}: a constant of shape {np.shape(c1)} depends on the "
                             f"batch size; export with a fixed batch")
    pos2 = {id(v): k for k, v in enumerate(vars2)}
    pos1 = {id(v): k for k, v in enumerate(vars1)}
    for v1, v2 in zip(vars1, vars2):
        s1, s2 = v1.aval.shape, v2.aval.shape
        if len(s1) != len(s2) or v1.aval.dtype != v2.aval.dtype:
            raise ShapeError(f"{where}: a value of type {v1.aval} becomes {v2.aval} at "
                             f"batch {b2}; export with a fixed batch")
        plan.dims[id(v1)] = tuple(d if d == e else "batch" if (d, e) == (b1, b2) else None
                                  for d, e in zip(s1, s2))
    for n1, n2 in zip(g1.nodes, g2.nodes):
        for j, (x1, x2) in enumerate(zip(n1.inputs, n2.inputs)):
            if isinstance(x1, Var) and isinstance(x2, Var) and pos1[id(x1)] == pos2[id(x2)]:
                continue
            if isinstance(x1, Literal) and isinstance(x2, Literal):
                if x1 == x2:
                    continue
                if x1.value == b1 and x2.value == b2:
                    plan.batch_literals.add((id(n1), j))
                    continue
            raise ShapeError(
                f"{where}: input {j} of {_describe(n1)} changes with the batch size "
                f"({_show(x1)} at batch {b1}, {_show(x2)} at {b2}), e.g. a mean over the "
                f"batch axis and another, or the 1/n of a mean's gradient; export with a "
                f"fixed batch")
        for r1, r2 in zip(n1.regions, n2.regions):
            _match(r1, r2, b1, b2, plan, f"{where}, in a region of {n1.kernel}")
        masks = {}
        for (k, a1), (_, a2) in zip(n1.attr_items, n2.attr_items):
            if a1 != a2 and not is_region(a1):
                masks[k] = _batch_mask(a1, a2, b1, b2)
                if masks[k] is None:
                    raise ShapeError(
                        f"{where}: {_describe(n1)} has attr {k}={a1} at batch {b1} but "
                        f"{a2} at batch {b2}; only entries equal to the batch size can "
                        f"follow it at run time (e.g. a reshape that merges the batch axis "
                        f"with another cannot); export with a fixed batch")
        if masks:
            plan.masks[id(n1)] = masks


def _show(x):
    return format_literal(x) if isinstance(x, Literal) else str(x.aval)


def _batch_mask(a1, a2, b1, b2):
    """Which entries of an int (or int tuple) attr are the batch size, or None if the
    attr changes in another way."""
    if isinstance(a1, tuple) and isinstance(a2, tuple) and len(a1) == len(a2):
        mask = [_batch_mask(x, y, b1, b2) for x, y in zip(a1, a2)]
        return None if None in mask else tuple(m[0] for m in mask)
    if isinstance(a1, (int, np.integer)) and not isinstance(a1, bool):
        return (True,) if (a1, a2) == (b1, b2) else (False,) if a1 == a2 else None
    return None


def _input_names(fun, args):
    """`x`, or `params_0`, `params_1`, ... for an argument `params` with several leaves."""
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
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
    import onnx
    name = getattr(fun, "__name__", type(fun).__name__)
    graph = _traced(fun, example_args)
    plan = _batch_plan(fun, example_args, graph, name) if dynamic_batch else _Plan()
    model = _model(graph, plan, _input_names(fun, example_args), name)
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise KernelError(f"to_onnx({name}): the exported model fails onnx.checker (an "
                          f"exporter built nodes of the wrong type or shape?): {e}") from None
    if path is not None:
        onnx.save(model, path)
    return model


def _model(graph, plan, in_names, name):
    """The ModelProto: one exporter call per node, declared types for every value."""
    from onnx import helper
    out_names = [f"output_{k}" for k in range(len(graph.outvars))]
    batched = [n for v, n in zip(graph.invars, in_names) if "batch" in plan.dims_of(v)]
    g = OnnxBuilder(plan, in_names + out_names, batched[0] if batched else None)
    g._described.update(in_names)
    for src, out in zip(g.emit(graph, in_names), out_names):
        g.nodes.append(helper.make_node("Identity", [src], [out]))
    model = helper.make_model(
        helper.make_graph(g.nodes, name, [_info(n, g.type_of(v)) for v, n in
                                          zip(graph.invars, in_names)],
                          [_info(n, g.type_of(v)) for v, n in zip(graph.outvars, out_names)],
                          g.initializers, value_info=g.value_info),
        opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tracer")
    model.ir_version = IR_VERSION
    return model
