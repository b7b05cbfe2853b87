"""The four tables: kernels[(name, backend)], gradients[name], shape_rules[name], backends.

Plain dicts with small functions around them. Re-registering replaces (that is how users
override a built-in, as in TensorFlow.js). Every change bumps a per-kernel version and a
global epoch, so caches (jit, compiled code) can tell whether what they hold is stale.

Threads: changes are made under one lock (so no version bump is lost), reads take none.
A cache built while another thread registers must take its `snapshot()` before it starts
reading the tables: it is then rebuilt on next use if anything it read changed meanwhile.
"""
import difflib
import os
import threading

from ir.errors import (ArgumentError, BackendNotFoundError, GradientNotFoundError,
                       KernelNotFoundError, ShapeRuleNotFoundError)

_kernels = {}
_gradients = {}
_shape_rules = {}
_backends = {}
_versions = {}
_epoch = [0]
_lock = threading.Lock()
# a child forked while another thread registers gets the lock free; every change made under
# it is one dict assignment, so the tables are whole (lowering.forks does this above here)
os.register_at_fork(after_in_child=_lock._at_fork_reinit)


def _touch(name):
    """Bump `name`'s version and the epoch; the caller holds _lock and has already changed
    the table (so a reader that sees the new version also sees the new entry)."""
    _versions[name] = _versions.get(name, 0) + 1
    _epoch[0] += 1


def epoch():
    """A counter that changes whenever any table changes (cheap staleness check)."""
    return _epoch[0]


def version(name):
    """A counter that changes whenever kernel `name`'s impls, gradient or shape rule do."""
    return _versions.get(name, 0)


def snapshot():
    """(epoch, {kernel name: version}) as of now, read together: what a cache entry built
    from the tables from now on must compare with to know whether it is current."""
    with _lock:
        return _epoch[0], dict(_versions)


def _check_name(name, what):
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"{what}: kernel name must be a non-empty string, got {name!r}")


def _did_you_mean(name, names):
    close = difflib.get_close_matches(name, sorted(names), n=3)
    return f" Did you mean {' or '.join(map(repr, close))}?" if close else ""


# ---- backends -------------------------------------------------------------------------

def register_backend(name, eager=None, compile=None):
    """Declare (or redeclare) a backend; its kernels are registered separately.

    `eager(kernel, inputs, attrs)` runs one kernel on concrete arrays for this backend
    (None: call its registered impls directly). `compile(graph)` turns the graph traced by
    `jit(..., backend=name)` into a program with `run(inputs) -> list of outputs` (None:
    jit interprets the graph with this backend's kernels)."""
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"register_backend: name must be a non-empty string, got {name!r}")
    for what, fn in (("eager", eager), ("compile", compile)):
        if fn is not None and not callable(fn):
            raise ArgumentError(f"register_backend({name!r}): {what} must be callable or "
                                f"None, got {type(fn).__name__}")
    with _lock:
        _backends[name] = (eager, compile)
        _epoch[0] += 1


def unregister_backend(name):
    """Remove a backend and every kernel registered for it."""
    check_backend(name)
    with _lock:
        for key in [k for k in _kernels if k[1] == name]:
            del _kernels[key]
            _touch(key[0])
        del _backends[name]
        _epoch[0] += 1


def backends():
    return tuple(_backends)


def check_backend(name):
    if name not in _backends:
        raise BackendNotFoundError(
            f"unknown backend {name!r}; registered backends: "
            f"{', '.join(map(repr, _backends))}.{_did_you_mean(str(name), _backends)}")
    return name


def backend_eager(name):
    """The backend's one-kernel eager runner, or None."""
    return _backends[check_backend(name)][0]


def backend_compiler(name):
    """The backend's graph compiler for jit, or None."""
    return _backends[check_backend(name)][1]


# ---- kernels --------------------------------------------------------------------------

def register_kernel(name, backend, impl):
    """Add or replace the impl of kernel `name` on `backend`."""
    _check_name(name, "register_kernel")
    check_backend(backend)
    if not callable(impl) and not hasattr(impl, "emit"):
        raise ArgumentError(f"register_kernel({name!r}, {backend!r}): impl must be callable "
                        f"(or an llvm emitter object), got {type(impl).__name__}")
    with _lock:
        _kernels[(name, backend)] = impl
        _touch(name)


def _missing_kernel(name, backend):
    keys = list(_kernels)      # one atomic copy: another thread may be registering
    have = sorted(b for (k, b) in keys if k == name)
    on_backend = sorted(k for (k, b) in keys if b == backend)
    hint = (f"it is registered only for backend(s) {', '.join(map(repr, have))}." if have
            else f"no backend has it.{_did_you_mean(name, on_backend)}")
    return KernelNotFoundError(
        f"no kernel {name!r} for backend {backend!r}: {hint} Backend {backend!r} has "
        f"{len(on_backend)} kernels: {', '.join(on_backend) or '(none)'}. Register one with "
        f"registry.register_kernel({name!r}, {backend!r}, impl).")


def get_kernel(name, backend):
    check_backend(backend)
    try:
        return _kernels[(name, backend)]
    except KeyError:
        raise _missing_kernel(name, backend) from None


def has_kernel(name, backend):
    return (name, backend) in _kernels


def unregister_kernel(name, backend):
    with _lock:
        if _kernels.pop((name, backend), None) is None:
            raise _missing_kernel(name, backend)
        _touch(name)


def kernels():
    """Every registered (kernel name, backend) pair, sorted."""
    return sorted(_kernels)


# ---- gradients ------------------------------------------------------------------------

def register_gradient(name, grad_fn):
    """Add or override the gradient of kernel `name`.

    `grad_fn(dy, inputs, outputs, attrs)` returns one gradient (or None) per input,
    written with `tracer.numpy` ops so it traces and can be differentiated again.
    """
    _check_name(name, "register_gradient")
    if not callable(grad_fn):
        raise ArgumentError(f"register_gradient({name!r}): grad_fn must be callable")
    with _lock:
        _gradients[name] = grad_fn
        _touch(name)


def get_gradient(name):
    try:
        return _gradients[name]
    except KeyError:
        raise GradientNotFoundError(
            f"no gradient registered for kernel {name!r}.{_did_you_mean(name, _gradients)} "
            f"Register one with "
            f"registry.register_gradient({name!r}, lambda dy, inputs, outputs, attrs: "
            f"(...one gradient per input...)).") from None


def has_gradient(name):
    return name in _gradients


def unregister_gradient(name):
    """Remove the gradient of `name`; differentiating through it is then an error."""
    get_gradient(name)
    with _lock:
        _gradients.pop(name, None)
        _touch(name)


def gradients():
    return sorted(_gradients)


# ---- shape rules ----------------------------------------------------------------------

def register_shape_rule(name, rule):
    """`rule(*avals, **attrs)` returns the output aval (or a tuple of them)."""
    _check_name(name, "register_shape_rule")
    if not callable(rule):
        raise ArgumentError(f"register_shape_rule({name!r}): rule must be callable")
    with _lock:
        _shape_rules[name] = rule
        _touch(name)


def get_shape_rule(name):
    try:
        return _shape_rules[name]
    except KeyError:
        raise ShapeRuleNotFoundError(
            f"kernel {name!r} has no shape rule, so it cannot be traced (jit, grad, "
            f"make_graph). Register one with registry.register_shape_rule({name!r}, "
            f"lambda *avals, **attrs: <object with .shape and .dtype>)."
            f"{_did_you_mean(name, _shape_rules)}") from None


def unregister_shape_rule(name):
    get_shape_rule(name)
    with _lock:
        _shape_rules.pop(name, None)
        _touch(name)


def shape_rules():
    return sorted(_shape_rules)
