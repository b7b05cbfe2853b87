"""LLVM backend: whole-graph compilation to fused native code via llvmlite."""
