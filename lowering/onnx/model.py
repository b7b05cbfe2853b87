"""A graph as a checked ONNX ModelProto: one exporter call per node, a declared type for
every value."""
from ir.errors import KernelError
from lowering.onnx.builder import OnnxBuilder, tensor_info
from lowering.onnx.plan import Plan

OPSET = 18          # reduction axes are inputs from opset 18 on, for every reduction
IR_VERSION = 8      # the oldest IR version that carries opset 18: any runtime since 2022


def to_model(graph, in_names, name, plan=None):
    """`graph` as an opset-18 ModelProto named `name`, its inputs named `in_names` and
    its outputs `output_0`, ...; `plan` (lowering.onnx.plan) says which dims follow the
    batch (None: every dim is static). The model passes onnx.checker's full check, or
    this raises KernelError."""
    import onnx
    from onnx import helper
    plan = plan or Plan()
    out_names = [f"output_{k}" for k in range(len(graph.outvars))]
    batched = [n for v, n in zip(graph.invars, in_names) if "batch" in plan.dims_of(v)]
    g = OnnxBuilder(plan, in_names, out_names, batched[0] if batched else None)
    for src, out in zip(g.emit(graph, in_names), out_names):
        g.nodes.append(helper.make_node("Identity", [src], [out]))
    model = helper.make_model(
        helper.make_graph(g.nodes, name, [tensor_info(n, g.type_of(v)) for v, n in
                                          zip(graph.invars, in_names)],
                          [tensor_info(n, g.type_of(v)) for v, n in
                           zip(graph.outvars, out_names)],
                          g.initializers, value_info=g.value_info),
        opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tracer")
    model.ir_version = IR_VERSION
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise KernelError(f"to_onnx({name}): the exported model fails onnx.checker (an "
                          f"exporter built nodes of the wrong type or shape?): {e}") from None
    return model
