"""Host callbacks, as JAX's: `tracer.debug.callback`, `tracer.debug.print` and
`tracer.pure_callback`.

Eagerly each just calls the Python function. Traced, each is one node whose `callback`
attr is a `HostCallback` (hashed by identity, printed by name) called with the node's
inputs as NumPy arrays every time the program runs, on either backend (the numpy
kernels in lowering.host_callbacks; the llvm backend calls back into Python from
compiled code, lowering.llvm.callbacks), once per iteration or branch taken inside
scan, fori_loop, while_loop and cond.

* `debug_callback` has no outputs and is a declared side effect (registry effects):
  never folded, merged, reordered or removed. Under grad/vjp/jvp it sees the primal
  values and adds no gradient; under vmap it is called once per example, in order
  (JAX's rule: unrolled over the batch).
* `pure_callback` has outputs of the declared shapes and dtypes (checked at every call:
  CallbackError naming the callback otherwise) and no effect: an unused one is dropped,
  equal ones may be merged. It has no gradient (GradientError, as JAX's, unless wrapped
  in custom_vjp/custom_jvp); under vmap it follows `vmap_method`: "sequential" (a loop
  of calls, one per example), "expand_dims" (one call, unbatched arguments with a
  leading axis of size 1), "broadcast_all" (one call, every argument broadcast to the
  batch), None (an error naming vmap_method, as JAX's).

An exception raised by a callback reaches the caller as CallbackError (a KernelError,
so a RuntimeError, as JAX's XlaRuntimeError), naming the callback, from the original.
"""
import builtins

import numpy as np

import registry
from ir import ShapedArray
from ir.errors import ArgumentError, ArgumentValueError, GradientError, KernelError, TracerError
from tracer import core
from tracer.pytree import flatten, unflatten

VMAP_METHODS = ("sequential", "expand_dims", "broadcast_all")


class CallbackError(KernelError):
    """A host callback raised, or returned values other than it declared."""


class CallbackVmapError(TracerError, NotImplementedError):
    """vmap of a pure_callback whose vmap_method does not say how to batch it."""


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


class HostCallback:
    """The `callback` attr of a callback node: `self(arrays, results)` calls the user's
    function on the node's inputs (NumPy arrays; `tree` rebuilds its arguments) and
    returns its flat results checked against `results` ((shape, dtype) pairs), raising
    CallbackError naming it on any failure."""

    def __init__(self, kind, fn, tree, out_tree=None):
        self.kind, self.fn, self.tree, self.out_tree = kind, fn, tree, out_tree
        self.name = f"{kind}({_name(fn)})"

    def __repr__(self):
        return self.name

    def __call__(self, arrays, results=()):
        args, kwargs = unflatten(self.tree, list(arrays))
        try:
            out = self.fn(*args, **kwargs)
        except Exception as e:
            raise CallbackError(f"{self.name} raised {type(e).__name__}: {e}") from e
        if self.kind != "pure_callback":
            return []
        return self.check(out, results)

    def check(self, out, results):
        leaves, tree = flatten(out)
        if tree != self.out_tree:
            raise CallbackError(f"{self.name} returned a value of structure {tree}, but "
                                f"result_shape_dtypes declares {self.out_tree}")
        checked = []
        for i, (x, (shape, dtype)) in enumerate(zip(leaves, results)):
            x = np.asarray(x)
            if x.shape != tuple(shape):
                raise CallbackError(f"{self.name}: Incorrect output shape for return value "
                                    f"{i}: Expected: {tuple(shape)}, Actual: {x.shape}")
            if x.dtype != dtype:
                raise CallbackError(f"{self.name}: Incorrect output dtype for return value "
                                    f"{i}: Expected: {np.dtype(dtype)}, Actual: {x.dtype}")
            checked.append(np.require(x, None, ["C", "A"]))
        return checked


def _leaves(args, kwargs, where):
    leaves, tree = flatten((tuple(args), dict(kwargs)))
    return [x if isinstance(x, core.Tracer) else core.as_array(x, where)
            for x in leaves], tree


def _eager(leaves):
    return core.current_trace() is None and not any(isinstance(x, core.Tracer)
                                                    for x in leaves)


def _emit(kernel, leaves, attrs):
    """One node in the innermost trace (one of constants only too: it still runs at every
    call of the traced program)."""
    trace = core.innermost_trace(leaves) or core.current_trace()
    return trace.emit(kernel, leaves, attrs)


def debug_callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """`callback(*args, **kwargs)` for its side effect, when the program runs (see the
    module doc); returns None. `ordered` and `partitioned` are accepted as JAX's: every
    callback here runs in program order, in one process."""
    if not callable(callback):
        raise ArgumentError(f"debug.callback: callback must be callable, got "
                            f"{type(callback).__name__}")
    leaves, tree = _leaves(args, kwargs, "debug.callback")
    host = HostCallback("debug_callback", callback, tree)
    if _eager(leaves):
        host(leaves)
        return None
    _emit("debug_callback", leaves, {"callback": host})
    return None


def debug_print(fmt, *args, ordered=False, **kwargs):
    """Print `fmt.format(*args, **kwargs)` (the values as NumPy arrays) to stdout when the
    program runs, as jax.debug.print."""
    if not isinstance(fmt, str):
        raise ArgumentError(f"debug.print: the format must be a str, got "
                            f"{type(fmt).__name__}")

    def _print(*a, **k):
        builtins.print(fmt.format(*a, **k))
    _print.__qualname__ = f"print({fmt!r})"
    debug_callback(_print, *args, ordered=ordered, **kwargs)


def _result_avals(result_shape_dtypes):
    leaves, tree = flatten(result_shape_dtypes)
    results = []
    for x in leaves:
        try:
            shape, dtype = tuple(int(d) for d in x.shape), np.dtype(x.dtype)
        except (AttributeError, TypeError) as e:
            raise ArgumentError(f"pure_callback: result_shape_dtypes must be a pytree of "
                                f"objects with .shape and .dtype (tracer.ShapeDtypeStruct), "
                                f"got {x!r}") from e
        results.append((shape, dtype))
    return tuple(results), tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  vectorized=None, **kwargs):
    """`callback(*args, **kwargs)`, a pure host function whose results have the shapes
    and dtypes of `result_shape_dtypes` (a pytree of ShapeDtypeStruct-likes), as
    jax.pure_callback (see the module doc). `sharding` is accepted and ignored;
    `vectorized=True` is JAX's deprecated spelling of vmap_method="expand_dims"."""
    if not callable(callback):
        raise ArgumentError(f"pure_callback: callback must be callable, got "
                            f"{type(callback).__name__}")
    if vectorized is not None and vmap_method is not None:
        raise ArgumentValueError("pure_callback: pass vmap_method or vectorized, not both")
    if vectorized:
        vmap_method = "expand_dims"
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ArgumentValueError(f"pure_callback: vmap_method must be one of "
                                 f"{', '.join(map(repr, VMAP_METHODS))} or None, got "
                                 f"{vmap_method!r}")
    results, out_tree = _result_avals(result_shape_dtypes)
    leaves, tree = _leaves(args, kwargs, "pure_callback")
    host = HostCallback("pure_callback", callback, tree, out_tree)
    if _eager(leaves):
        return unflatten(out_tree, host(leaves, results))
    outs = _emit("pure_callback", leaves, {"callback": host, "results": results,
                                           "vmap_method": vmap_method})
    return unflatten(out_tree, list(outs))


# ---- the kernels' facts -------------------------------------------------------------------

def _debug_shape(*avals, callback):
    return ()


def _pure_shape(*avals, callback, results, vmap_method):
    return tuple(ShapedArray(s, d) for s, d in results)


def _debug_batched(inputs, dims, attrs):
    """JAX's rule: the callback unrolled over the batch, each call on one example."""
    from tracer.vmap import batch_size, moveaxis
    size = batch_size(inputs, dims)
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(inputs, dims)]
    for i in range(size):
        _emit("debug_callback", [x if d is None else x[i] for x, d in zip(moved, dims)],
              attrs)
    return (), ()


def _pure_batched(inputs, dims, attrs):
    from tracer import numpy as tnp
    from tracer.vmap import batch_size, loop_rule, moveaxis, to_dim
    method, host = attrs["vmap_method"], attrs["callback"]
    if method is None:
        raise CallbackVmapError(
            f"vmap is only supported for pure_callback when vmap_method is set: {host} has "
            f"vmap_method=None; pass vmap_method='sequential' (a loop of calls), "
            f"'expand_dims' or 'broadcast_all' (one call on the batched arguments)")
    if method == "sequential":
        return loop_rule("pure_callback")(inputs, dims, attrs)
    size = batch_size(inputs, dims)
    ins = []
    for x, d in zip(inputs, dims):
        if d is not None:
            ins.append(moveaxis(x, d, 0))
        elif method == "broadcast_all":
            ins.append(to_dim(x, None, size, 0))
        else:
            ins.append(tnp.reshape(x, (1,) + tuple(np.shape(x))))
    results = tuple(((size,) + tuple(s), d) for s, d in attrs["results"])
    outs = _emit("pure_callback", ins, dict(attrs, results=results))
    outs = outs if isinstance(outs, tuple) else (outs,)
    return outs, (0,) * len(outs)


def _pure_gradient(dy, inputs, outputs, attrs):
    raise GradientError(
        f"{attrs['callback']}: Pure callbacks do not support JVP or transpose, so they "
        f"cannot be differentiated. Please use tracer.custom_vjp (or custom_jvp) to use "
        f"callbacks while taking gradients.")


registry.declare_kernel("debug_callback", shape=_debug_shape, batching=_debug_batched,
                        differentiable=False, effects=True)
registry.declare_kernel("pure_callback", shape=_pure_shape, batching=_pure_batched,
                        gradient=_pure_gradient)
