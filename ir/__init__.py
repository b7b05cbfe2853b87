"""Graph data model: typed values, nodes that each name a kernel, graphs, passes, export."""
from ir.errors import (ArgumentError, BackendNotFoundError, CodegenError, ConcretizationError,
                       DTypeError, GradientError, GradientNotFoundError, IRError, KernelError,
                       KernelNotFoundError, OutOfBoundsError, ShapeError,
                       ShapeRuleNotFoundError, TracerError)
from ir.types import (BFLOAT16, ShapedArray, SUPPORTED_DTYPES, aval_of, check_dtype,
                      dtype_kind, scalar_array, weak_dtype)
from ir.graph import Graph, Literal, Node, Var
from ir.passes import cse, dce, fold_constants
from ir.printer import format_graph
from ir.networkx_dot import to_dot, to_networkx
from ir.render import render

# Graph's text, export and picture methods (see ir.graph.Graph)
Graph.__str__, Graph.to_networkx, Graph.to_dot, Graph.render = (format_graph, to_networkx,
                                                               to_dot, render)

__all__ = ["Graph", "Node", "Var", "Literal", "ShapedArray", "SUPPORTED_DTYPES", "BFLOAT16",
           "aval_of", "check_dtype", "dtype_kind", "scalar_array", "weak_dtype", "dce", "cse",
           "fold_constants", "format_graph", "TracerError",
           "ShapeError", "OutOfBoundsError", "DTypeError", "ArgumentError",
           "KernelNotFoundError", "BackendNotFoundError", "ShapeRuleNotFoundError",
           "GradientNotFoundError", "GradientError", "ConcretizationError", "KernelError",
           "IRError", "CodegenError"]
