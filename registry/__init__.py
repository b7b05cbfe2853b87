"""Kernel registry (kernel name, backend) -> impl; gradient registry kernel name -> grad;
shape rules; backends. Mirrors TensorFlow.js's kernel and gradient registries."""
from registry.tables import (backends, check_backend, epoch, get_gradient, get_kernel,
                             get_shape_rule, gradients, has_gradient, has_kernel, kernels,
                             register_backend, register_gradient, register_kernel,
                             register_shape_rule, shape_rules, unregister_gradient,
                             unregister_kernel, version)
from registry.shape_rules import BUILTIN_KERNELS, infer_avals

register_backend("numpy")
register_backend("llvm")

__all__ = ["register_kernel", "get_kernel", "unregister_kernel", "has_kernel", "kernels",
           "register_gradient", "get_gradient", "unregister_gradient", "has_gradient",
           "gradients", "register_shape_rule", "get_shape_rule", "shape_rules",
           "register_backend", "backends", "check_backend", "infer_avals", "epoch",
           "version", "BUILTIN_KERNELS"]
