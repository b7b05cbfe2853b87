"""The built-in kernels' backend-independent facts: each kernel's shape rule, family,
gradient, batching rule and differentiability, declared in one `registry.declare_kernel`
call (a table row for the simple elementwise ones), one module per kind. Gradients and
batching rules are written with traceable ops, which is why the declarations live here,
above registry. The backends' impls are in lowering/, registered by kernel name."""
from registry.tables import SHAPE_RULES
from tracer.kernels import elementwise, reductions, scans  # noqa: F401  (declare them)
from tracer.kernels import shapes, indexing, contraction  # noqa: F401

# every kernel declared in this package, in declaration order
BUILTIN_KERNELS = tuple(k for k, rule in SHAPE_RULES.entries.items()
                        if rule.__module__.startswith(__name__ + "."))
