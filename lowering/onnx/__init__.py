"""The ONNX backend: a graph as an ONNX model, and the built-in kernels' ONNX rules.

The rules go into registry.exporters' table under (kernel, "onnx"), where a user adds
the rule of a new kernel or overrides a built-in one (`registry.register_exporter`).
A rule is `fn(g, inputs, attrs)`: `inputs` are ONNX value names, `g` is the
`OnnxBuilder` (`g.op`, `g.const`, `g.cast`, `g.ints`, `g.in_avals`, `g.out_avals`,
`g.subgraph()`), and it returns the name of the node's output (a tuple of names for
several outputs). The built-ins target opset 18 and keep the kernels' NumPy semantics
where ONNX or ONNX Runtime differ (each module says how); they never read a concrete
dimension (shapes come from attrs via `g.ints` or from `Shape` at run time), which is
what lets `to_onnx(..., dynamic_batch=True)` work. NOT_EXPORTABLE lists the built-in
kernels that have none, with the reason.
"""
from lowering.onnx import bitcast, collectives, control, elementwise, nn, reductions, shapes
from lowering.onnx.builder import NOT_EXPORTABLE, OnnxBuilder
from lowering.onnx.model import to_model
from lowering.onnx.plan import Plan, batch_plan
from registry.exporters import register_exporter

for _rules in (elementwise.RULES, bitcast.RULES, shapes.RULES, reductions.RULES, nn.RULES,
               control.RULES, collectives.RULES):
    for _kernel, _rule in _rules.items():
        register_exporter(_kernel, "onnx", _rule)

__all__ = ["to_model", "batch_plan", "Plan", "OnnxBuilder", "NOT_EXPORTABLE"]
