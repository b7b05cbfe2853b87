"""Graph -> executable. `numpy`: eager kernels and the graph interpreter.
`llvm`: whole-graph compilation to fused native code (lowering.llvm)."""
from lowering import numpy_kernels  # registers the numpy backend's kernels
from lowering.interpreter import evaluate

__all__ = ["evaluate", "numpy_kernels"]
