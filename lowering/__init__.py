"""Graph -> executable. `numpy`: eager kernels and the graph interpreter.
`llvm`: whole-graph compilation to fused native code (lowering.llvm).
`onnx`: a graph as an ONNX model (lowering.onnx)."""
from lowering import numpy_kernels  # registers the numpy backend's kernels
# and its loops, LAPACK kernels, convolutions and windows
from lowering import numpy_control, numpy_linalg, numpy_windows  # noqa: F401
from lowering import host_callbacks  # noqa: F401  (debug.callback, pure_callback)
from lowering.interpreter import evaluate
from lowering import llvm  # registers the llvm backend's kernels and its eager runner
from lowering import onnx  # registers the built-in kernels' ONNX exporters

__all__ = ["evaluate", "numpy_kernels", "llvm", "onnx"]
