"""Kernel registry (kernel name, backend) -> impl; gradient registry kernel name -> grad;
shape rules; backends. Mirrors TensorFlow.js's kernel and gradient registries."""
# The rules submodule first: importing it binds `registry.shape_rules` to the module,
# and the function of that name, imported next, must win.
from registry.shape_rules import infer_avals
from registry.tables import (backends, check_backend, epoch, get_gradient, get_kernel,
                             get_shape_rule, gradients, has_gradient, has_kernel, kernels,
                             register_backend, register_gradient, register_kernel,
                             register_shape_rule, shape_rules, unregister_backend,
                             unregister_gradient, unregister_kernel, unregister_shape_rule,
                             version)
from registry.batching import (batching_rules, get_batching_rule, has_batching_rule,
                               register_batching_rule, unregister_batching_rule)
from registry.families import (PRUNERS, declare_effects, declare_family, family, has_effects,
                               register_pruner)
from ir import passes as _passes
from registry.exporters import (exporters, get_exporter, has_exporter, register_exporter,
                                unregister_exporter)
from registry.define import declare_kernel, define_kernel, describe, forget_kernel

# what ir's passes ask of a kernel: effects (kept nodes) and pruners (dce)
_passes.has_effects, _passes.pruner = has_effects, PRUNERS.entries.get
register_backend("numpy")
register_backend("llvm")

__all__ = ["register_kernel", "get_kernel", "unregister_kernel", "has_kernel", "kernels",
           "register_gradient", "get_gradient", "unregister_gradient", "has_gradient",
           "gradients", "register_shape_rule", "get_shape_rule", "shape_rules",
           "unregister_shape_rule", "register_backend", "unregister_backend", "backends",
           "check_backend", "infer_avals", "epoch", "version",
           "register_exporter", "get_exporter", "has_exporter", "unregister_exporter",
           "exporters", "register_batching_rule", "get_batching_rule", "has_batching_rule",
           "unregister_batching_rule", "batching_rules", "declare_family", "family",
           "declare_effects", "has_effects", "declare_kernel", "define_kernel", "describe",
           "forget_kernel",
           "register_pruner"]
