"""The core tables: kernels[(name, backend)], gradients[name], shape_rules[name], backends.

Each is a VersionedTable (registry.versioned): re-registering replaces and bumps the
kernel's version, which jit and compiled-code caches compare with.
"""
from ir.errors import (ArgumentError, BackendNotFoundError, GradientNotFoundError,
                       KernelNotFoundError, ShapeRuleNotFoundError)
from registry.versioned import EPOCH, epoch, snapshot, version  # noqa: F401  (re-exported)
from registry.versioned import VersionedTable, check_kernel_name, did_you_mean


# ---- backends -------------------------------------------------------------------------

def _check_backend_entry(name, entry):
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"register_backend: name must be a non-empty string, got {name!r}")
    for what, fn in zip(("eager", "compile"), entry):
        if fn is not None and not callable(fn):
            raise ArgumentError(f"register_backend({name!r}): {what} must be callable or "
                                f"None, got {type(fn).__name__}")


def _missing_backend(name):
    return BackendNotFoundError(
        f"unknown backend {name!r}; registered backends: "
        f"{', '.join(map(repr, _backends))}.{did_you_mean(str(name), _backends)}")


BACKENDS = VersionedTable(_missing_backend, _check_backend_entry, per_kernel=False)
_backends = BACKENDS.entries


def register_backend(name, eager=None, compile=None):
    """Declare (or redeclare) a backend; its kernels are registered separately.

    `eager(kernel, inputs, attrs)` runs one kernel on concrete arrays for this backend
    (None: call its registered impls directly). `compile(graph)` turns the graph traced by
    `jit(..., backend=name)` into a program with `run(inputs) -> list of outputs` (None:
    jit interprets the graph with this backend's kernels)."""
    BACKENDS.register(name, (eager, compile))


def unregister_backend(name):
    """Remove a backend and every kernel registered for it."""
    check_backend(name)
    for key in [k for k in list(_kernels) if k[1] == name]:
        KERNELS.discard(*key)
    BACKENDS.unregister(name)


def backends():
    return tuple(_backends)


def check_backend(name):
    if name not in _backends:
        raise _missing_backend(name)
    return name


def backend_eager(name):
    """The backend's one-kernel eager runner, or None."""
    return BACKENDS.get(name)[0]


def backend_compiler(name):
    """The backend's graph compiler for jit, or None."""
    return BACKENDS.get(name)[1]


# ---- kernels --------------------------------------------------------------------------

def _check_kernel(name, backend, impl):
    check_kernel_name(name, "register_kernel")
    check_backend(backend)
    if not callable(impl) and not hasattr(impl, "emit"):
        raise ArgumentError(f"register_kernel({name!r}, {backend!r}): impl must be callable "
                            f"(or an llvm emitter object), got {type(impl).__name__}")


def _missing_kernel(name, backend):
    check_backend(backend)
    keys = list(_kernels)      # one atomic copy: another thread may be registering
    have = sorted(b for (k, b) in keys if k == name)
    on_backend = sorted(k for (k, b) in keys if b == backend)
    hint = (f"it is registered only for backend(s) {', '.join(map(repr, have))}." if have
            else f"no backend has it.{did_you_mean(name, on_backend)}")
    return KernelNotFoundError(
        f"no kernel {name!r} for backend {backend!r}: {hint} Backend {backend!r} has "
        f"{len(on_backend)} kernels: {', '.join(on_backend) or '(none)'}. Register one with "
        f"registry.register_kernel({name!r}, {backend!r}, impl).")


KERNELS = VersionedTable(_missing_kernel, _check_kernel)
_kernels = KERNELS.entries
register_kernel, unregister_kernel = KERNELS.register, KERNELS.unregister
get_kernel, has_kernel, kernels = KERNELS.get, KERNELS.has, KERNELS.keys


# ---- gradients ------------------------------------------------------------------------

def _check_gradient(name, grad_fn):
    """`grad_fn(dy, inputs, outputs, attrs)` returns one gradient (or None) per input,
    written with `tracer.numpy` ops so it traces and can be differentiated again."""
    check_kernel_name(name, "register_gradient")
    if not callable(grad_fn):
        raise ArgumentError(f"register_gradient({name!r}): grad_fn must be callable")


def _missing_gradient(name):
    return GradientNotFoundError(
        f"no gradient registered for kernel {name!r}.{did_you_mean(name, _gradients)} "
        f"Register one with "
        f"registry.register_gradient({name!r}, lambda dy, inputs, outputs, attrs: "
        f"(...one gradient per input...)).")


GRADIENTS = VersionedTable(_missing_gradient, _check_gradient)
_gradients = GRADIENTS.entries
register_gradient, unregister_gradient = GRADIENTS.register, GRADIENTS.unregister
get_gradient, has_gradient, gradients = GRADIENTS.get, GRADIENTS.has, GRADIENTS.keys


# ---- shape rules ----------------------------------------------------------------------

def _check_shape_rule(name, rule):
    """`rule(*avals, **attrs)` returns the output aval (or a tuple of them)."""
    check_kernel_name(name, "register_shape_rule")
    if not callable(rule):
        raise ArgumentError(f"register_shape_rule({name!r}): rule must be callable")


def _missing_shape_rule(name):
    return ShapeRuleNotFoundError(
        f"kernel {name!r} has no shape rule, so it cannot be traced (jit, grad, "
        f"make_graph). Register one with registry.register_shape_rule({name!r}, "
        f"lambda *avals, **attrs: <object with .shape and .dtype>)."
        f"{did_you_mean(name, _shape_rules)}")


SHAPE_RULES = VersionedTable(_missing_shape_rule, _check_shape_rule)
_shape_rules = SHAPE_RULES.entries
register_shape_rule, unregister_shape_rule = SHAPE_RULES.register, SHAPE_RULES.unregister
get_shape_rule, shape_rules = SHAPE_RULES.get, SHAPE_RULES.keys
