"""Shared by the autodiff tests: a registry snapshot that tests restore afterwards."""
import contextlib

import registry
from registry import tables


@contextlib.contextmanager
def registry_snapshot():
    """Undo every register/unregister made inside the block through the public API, so
    registry versions bump and jit caches notice the restore too."""
    grads, kernels, rules = (dict(tables._gradients), dict(tables._kernels),
                             dict(tables._shape_rules))
    try:
        yield registry
    finally:
        for name in set(tables._gradients) | set(grads):
            if name not in grads:
                registry.unregister_gradient(name)
            elif tables._gradients.get(name) is not grads[name]:
                registry.register_gradient(name, grads[name])
        for key in set(tables._kernels) | set(kernels):
            if key not in kernels:
                registry.unregister_kernel(*key)
            elif tables._kernels.get(key) is not kernels[key]:
                registry.register_kernel(*key, kernels[key])
        for name in set(tables._shape_rules) | set(rules):
            if name not in rules:
                del tables._shape_rules[name]   # no public unregister_shape_rule
            elif tables._shape_rules.get(name) is not rules[name]:
                registry.register_shape_rule(name, rules[name])
