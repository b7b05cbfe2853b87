"""The builder an ONNX rule writes its nodes with (`g`), and the export of a graph's
nodes through the exporter table (registry.exporters) into ONNX nodes.

`OnnxBuilder.emit` exports a graph's nodes in order, each with the exporter registered
for its kernel and format "onnx" (on operands widened where ONNX Runtime lacks the
dtype: lowering.onnx.dtypes), and regions recursively as ONNX subgraphs. onnx itself is
imported only when a node is built.
"""
import numpy as np

from ir.errors import KernelError, ShapeError, TracerError
from ir.graph import Var
from lowering.onnx.dtypes import export_widened
from registry.exporters import EXPORTERS, missing_exporter

# Built-in kernels with no ONNX exporter, and why: models using them fail to export with
# this reason (a user may still register an exporter of their own).
NOT_EXPORTABLE = dict.fromkeys(
    ("cholesky", "eigh", "qr", "slogdet", "solve", "svd"),
    "ONNX has no matrix decompositions or solves (opset 18 has only Det), and an unrolled "
    "elimination would not give LAPACK's results")
NOT_EXPORTABLE.update(dict.fromkeys(
    ("debug_callback", "pure_callback"),
    "a host callback calls a Python function of this process, which an ONNX model cannot "
    "hold"))


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

    The main graph's builder is `OnnxBuilder(plan, inputs, outputs, batch_source)`: the
    names of the model's inputs (declared already) and outputs are never given to other
    values, and the batch size is read from input `batch_source`.
    """

    def __init__(self, plan=None, inputs=(), outputs=(), batch_source=None, parent=None):
        self.root = parent.root if parent is not None else self
        self.nodes, self.inputs, self.value_info = [], [], []
        self._described = set(inputs)
        self.node, self.in_avals, self.out_avals, self._masks = None, (), (), {}
        if parent is None:
            self.plan, self.initializers, self._consts = plan, [], {}
            self._count, self._reserved = 0, set(inputs) | set(outputs)
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
        self.inputs.append(tensor_info(name, type_))
        self._described.add(name)
        return name

    def finish(self, outputs, types, name):
        """This subgraph as a GraphProto returning `outputs` (names, of types (dtype,
        dims)), each through an Identity so that every output is a value it defines."""
        from onnx import helper
        outs = [self.op("Identity", x) for x in outputs]
        return helper.make_graph(self.nodes, name, self.inputs,
                                 [tensor_info(o, t) for o, t in zip(outs, types)],
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
                    self.value_info.append(tensor_info(out, self.type_of(o)))
        return [names[id(v)] if isinstance(v, Var) else self.literal(v) for v in graph.outvars]

    def export_node(self, node, inputs, masks):
        """Run `node`'s exporter; returns one ONNX name per node output."""
        fn = EXPORTERS.entries.get((node.kernel, "onnx"))
        if fn is None:
            e = missing_exporter(node.kernel, "onnx", NOT_EXPORTABLE.get(node.kernel))
            raise type(e)(f"to_onnx: {e} (node {describe(node)})")
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
            raise KernelError(f"to_onnx: the onnx exporter of {describe(node)} failed: "
                              f"{type(e).__name__}: {e}") from e
        finally:
            self.node, self.in_avals, self.out_avals, self._masks = saved
        outs = [outs] if isinstance(outs, str) else list(outs)
        if len(outs) != len(node.outputs):
            raise KernelError(f"to_onnx: the onnx exporter of {node.kernel!r} returned "
                              f"{len(outs)} names for {len(node.outputs)} outputs")
        if unread:
            attr = next(iter(unread))
            raise ShapeError(f"to_onnx(dynamic_batch=True): {describe(node)} has attr "
                             f"{attr}={node.attrs[attr]} holding the batch size, but its "
                             f"exporter reads it as a constant (g.ints({attr!r}) would "
                             f"follow the batch); export with a fixed batch instead")
        return outs


def tensor_info(name, type_):
    from onnx import helper
    dtype, dims = type_
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), dims)


def onnx_dtype(dtype):
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def describe(node):
    ins = ", ".join(str(x.aval) for x in node.inputs)
    return f"{node.kernel}({ins})" + (f" at {node.source}" if node.source else "")
