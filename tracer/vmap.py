"""`vmap` as a graph transform, like grad: trace `fun` once on one example's types, then
re-emit each node through its kernel's batching rule into a new trace, and evaluate that
graph with `eval_graph` (on arrays it runs; on tracers it inlines into the enclosing
trace). So `make_graph(vmap(f))` shows batched kernels, and vmap nests with jit, grad,
vjp, jvp and itself in any order.

A node whose inputs are all unbatched is emitted as it is. Otherwise its rule comes from
`registry.batching` (registered rules win), else the kernel's family (registry.families):
every "elementwise" kernel shares one rule, as does every "along_axis" and every "linalg"
one (FAMILY_RULES); any other kernel is batched by a loop over the batch (one
`tracer.lax.map` region), with one warning naming it.

Named axes: `vmap(f, axis_name="i")` binds "i" (with the batch size) while `f` is traced,
so collectives inside it (tracer.lax.psum...) can be traced, and batches with "i" as the
axis being batched, so each collective node over "i" goes through its NAMED_RULES entry
(a reduction or a shuffle along the batch dim, even of unbatched inputs); a collective
over another name is batched like any kernel (it maps over the batch). Region rules
(scan, cond) batch their bodies inside the same binding.
"""
import threading
import warnings

import numpy as np

from ir import Literal, ShapedArray
from ir.passes import reads_axis
from ir.errors import ArgumentError, ArgumentValueError, KernelError
from lowering import forks
from registry import batching as _table
from registry import families
from tracer import core
from tracer import numpy as tnp
from tracer.core import Tracer, eval_graph, run_kernel, trace_flat
from tracer.float0s import Float0Leaves, is_float0, zeros
from tracer.signature import leaf_aval, presents
from tracer.pytree import flatten, unflatten
from tracer.vmap_axes import (LeafNames, axes_per_leaf, check_positional, check_spec,
                              mapped_size, normalize)

_warned = set()
_warn_lock = forks.lock()


class _Axes(threading.local):
    """This thread's named axes: `bound`, the (name, size) pairs of the enclosing
    vmaps being traced, innermost last; `batching`, the name vmap is batching now."""

    def __init__(self):
        self.bound = []
        self.batching = None


named_axes = _Axes()
# kernel -> rule(inputs, batch_dims, attrs, size) for a collective over the axis being
# batched (registered by tracer.lax.collectives)
NAMED_RULES = {}


AXIS_SIZE = "axis_size"    # what a trace that read a bound axis's size records


def reads_named_axes(touched):
    """Whether a trace that recorded kernels `touched` (core.recording_kernels) depends on
    the named axes bound around it: a collective, or an axis's size read as a number."""
    return AXIS_SIZE in touched or not NAMED_RULES.keys().isdisjoint(touched)


def bound_axis_size(name):
    """The size of axis `name`, bound by an enclosing vmap (or shard_map) being traced."""
    core.note_kernel(AXIS_SIZE)
    for bound, size in reversed(named_axes.bound):
        if bound == name:
            return size
    have = ", ".join(repr(n) for n, _ in named_axes.bound) or "none"
    raise NameError(f"unbound axis name: {name!r} (bound here: {have}); a collective "
                    f"runs inside vmap(f, axis_name={name!r}) or a shard_map over a mesh "
                    f"with that axis")


class _naming:
    """Context manager: set axes.bound and axes.batching for one vmap's trace/batch."""

    def __init__(self, bound, batching):
        self.new = bound, batching

    def __enter__(self):
        self.old = named_axes.bound, named_axes.batching
        named_axes.bound, named_axes.batching = self.new

    def __exit__(self, *exc):
        named_axes.bound, named_axes.batching = self.old


# ---- helpers the rules share ------------------------------------------------------------

def moveaxis(x, src, dst):
    """x with axis `src` moved to position `dst` (no node when nothing moves)."""
    if src == dst:
        return x
    perm = [i for i in range(len(np.shape(x))) if i != src]
    perm.insert(dst, src)
    return tnp.transpose(x, tuple(perm))


def batch_size(inputs, dims):
    """The batch size, read from the first batched input."""
    return next(np.shape(x)[d] for x, d in zip(inputs, dims) if d is not None)


def batched_axis(axis, d):
    """A per-example axis -> the same axis of the batched operand (batch dim at d)."""
    return axis + (axis >= d)


def to_dim(x, d, size, dst):
    """x with its batch dim at `dst`: moved if batched (at `d`), broadcast if not. A
    constant is broadcast by a node, never baked in as a `size`-times larger array."""
    if d is not None:
        return moveaxis(x, d, dst)
    shape = tuple(np.shape(x))
    if dst:
        x = tnp.reshape(x, shape[:dst] + (1,) + shape[dst:])
    out_shape = shape[:dst] + (size,) + shape[dst:]
    if isinstance(x, Tracer):
        return run_kernel("broadcast_to", [x], {"shape": out_shape})
    return core.current_trace().emit("broadcast_to", [x], {"shape": out_shape})


def flat_index(idx, n, size, axis=0):
    """Indices (size, ...) into one example's axis of length n -> indices into the
    (size * n) axis of all examples. Each is first checked against its own example's axis
    by a take from arange(n), whose error names the index and that axis (`axis`, the
    unbatched kernel's) as the unbatched kernel's would; on a longer axis (no n-element
    constant, as tracer.numpy.indexing's checks) an index out of it becomes -1, which the
    flat take refuses, instead of reading a neighbouring example."""
    from tracer.numpy.indexing import TAKE_CHECKED
    idx = tnp.astype(idx, np.int64)
    offsets = tnp.reshape(tnp.arange(size, dtype=np.int64) * n, (size,) + (1,) * (idx.ndim - 1))
    if n <= TAKE_CHECKED:
        ref = np.arange(n, dtype=np.int64).reshape((1,) * axis + (n,))
        return tnp.reshape(run_kernel("take", [ref, idx], {"axis": axis}), idx.shape) + offsets
    return tnp.where(idx < 0, -1, tnp.where(idx >= n, -1, idx + offsets))


def elementwise_rule(kernel):
    """The rule every elementwise kernel shares: batched operands keep their common batch
    dim (moved to 0 if they differ), unbatched ones are broadcast to match."""
    def rule(inputs, dims, attrs):
        size = batch_size(inputs, dims)
        batched = {d for d in dims if d is not None}
        d = batched.pop() if len(batched) == 1 else 0
        out = run_kernel(kernel, [to_dim(x, xd, size, d) for x, xd in zip(inputs, dims)],
                         attrs)
        return out, (d,) * len(out) if isinstance(out, tuple) else d
    return rule


def along_axis_rule(kernel):
    """The rule of every "along_axis" kernel (one `axis` attr; each lane along it is
    computed alone, e.g. cumsum, argsort): the axis is renumbered, the batch dim stays."""
    def rule(inputs, dims, attrs):
        (x,), (d,) = inputs, dims
        axis = attrs["axis"]
        return run_kernel(kernel, [x], {**attrs, "axis": batched_axis(axis, d)}), d
    return rule


def leading_rule(kernel):
    """The rule of every "linalg" kernel (batched over its operands' leading dims): the
    batch dim goes first."""
    def rule(inputs, dims, attrs):
        size = batch_size(inputs, dims)
        out = run_kernel(kernel, [to_dim(x, d, size, 0) for x, d in zip(inputs, dims)], attrs)
        return out, (0,) * len(out) if isinstance(out, tuple) else 0
    return rule


FAMILY_RULES = {"elementwise": elementwise_rule, "along_axis": along_axis_rule,
                "linalg": leading_rule}


_loop_rules = []     # [make(kernel)]: installed by tracer.lax.scan, which sits above vmap


def install_loop_rule(make):
    """Set the fallback: `make(kernel)` is a rule batching `kernel` by a loop."""
    _loop_rules[:] = [make]


def loop_rule(kernel):
    """The fallback: the kernel applied per example, in one `tracer.lax.map` region (the
    rule tracer.lax.scan installs)."""
    return _loop_rules[0](kernel)


def _warn_loop(kernel, source):
    with _warn_lock:
        if kernel in _warned:
            return
        _warned.add(kernel)
    also = (f", or declare it elementwise with registry.families.declare_family({kernel!r}, "
            f"'elementwise') if it is" if families.family(kernel) is None else "")
    warnings.warn(f"vmap: kernel {kernel!r}{f' (at {source})' if source else ''} has no "
                  f"batching rule, so it is batched by a loop over the batch (one "
                  f"tracer.lax.map region), which is slower. Register one with "
                  f"registry.register_batching_rule({kernel!r}, lambda inputs, batch_dims, "
                  f"attrs: (outputs, out_batch_dims)){also}.", stacklevel=2)


def rule_for(kernel, source=None):
    """The batching rule vmap uses for `kernel` (registered, shared elementwise, or the
    loop, with its warning naming `source`, the node's source line)."""
    rule = _table.BATCHING_RULES.entries.get(kernel)
    if rule is not None:
        return rule
    shared = FAMILY_RULES.get(families.family(kernel))
    if shared is not None:
        return shared(kernel)
    _warn_loop(kernel, source)
    return loop_rule(kernel)


# ---- the transform ----------------------------------------------------------------------

def _checked(node, out, dims, size):
    """A rule's result as (tuple of outputs, tuple of dims), checked against the node."""
    outs = out if isinstance(out, tuple) else (out,)
    dims = dims if isinstance(dims, tuple) else (dims,)
    if len(outs) != len(node.outputs) or len(dims) != len(outs):
        raise KernelError(f"the batching rule of {node.kernel!r} returned {len(outs)} outputs "
                          f"and {len(dims)} batch dims; the kernel has {len(node.outputs)} "
                          f"outputs (return (output, dim), or tuples for several outputs)")
    for o, d, v in zip(outs, dims, node.outputs):
        want = v.aval.shape if d is None else v.aval.shape[:d] + (size,) + v.aval.shape[d:]
        if tuple(np.shape(o)) != want:
            raise KernelError(f"the batching rule of {node.kernel!r} returned shape "
                              f"{tuple(np.shape(o))} with batch dim {d}; expected {want} "
                              f"(per-example {v.aval.shape}, batch size {size})")
    return outs, dims


def batch_values(graph, size, args, in_dims):
    """Emit `graph` batched into the current trace; returns (outputs, their batch dims)."""
    env = {id(v): (c, None) for v, c in zip(graph.constvars, graph.consts)}
    env.update((id(v), (a, d)) for v, a, d in zip(graph.invars, args, in_dims))
    trace = core.current_trace()
    named = named_axes.batching

    def read(x):
        return (x.value, None) if type(x) is Literal else env[id(x)]
    for n in graph.nodes:
        ins, dims = zip(*[read(x) for x in n.inputs]) if n.inputs else ((), ())
        rule = NAMED_RULES.get(n.kernel) if named is not None else None
        if rule is not None and n.attrs["axis_name"] == named:
            out, dims_out = rule(list(ins), list(dims), n.attrs, size)
            outs, dims_out = _checked(n, out, dims_out, size)
        else:
            unbatched = all(d is None for d in dims)
            if unbatched and named is not None and ins and reads_axis(n, named):
                # its regions read the axis (a loop testing lax.axis_index): it differs
                # per position, so it is batched, through its first input
                ins = (tnp.broadcast_to(ins[0], (size,) + np.shape(ins[0])),) + ins[1:]
                dims, unbatched = (0,) + dims[1:], False
            if unbatched:
                out = trace.emit(n.kernel, list(ins), n.attrs, n.source)
                outs = out if isinstance(out, tuple) else (out,)
                dims_out = (None,) * len(outs)
            else:
                out, dims_out = rule_for(n.kernel, n.source)(list(ins), list(dims), n.attrs)
                outs, dims_out = _checked(n, out, dims_out, size)
        for v, o, d in zip(n.outputs, outs, dims_out):
            env[id(v)] = (o, d)
    return [read(v) for v in graph.outvars]


def _place(x, d, dst, size, where, sum_match=False, index=0):
    """Output `index` with its batch dim moved to `dst` (None: it must be unbatched, or
    with `sum_match` it is summed over the batch, as JAX's)."""
    if dst is None:
        if d is not None and sum_match:
            return tnp.sum(x, axis=d)
        if d is not None:
            name = named_axes.batching
            jax_words = (f"vmap has mapped output (axis_name={name}) but out_axes is None"
                         if name is not None else f"at vmap out_axes for output {index}, got "
                         f"axis spec None but output was batched on axis {d}")
            raise ArgumentValueError(
                f"{jax_words}: in {where}, output {index} depends on a batched input; give "
                f"it an out axis, or pass sum_match=True to sum it over the batch (in "
                f"shard_map: its out_specs omits a mesh axis it varies along; name the axis "
                f"there, or make it equal at every position, e.g. with a psum over the axis)")
        return x
    return to_dim(x, d, size, dst)


def batch_graph(graph, size, in_dims, out_dims=0, where="vmap", sum_match=False):
    """(graph on batched inputs -> batched outputs, captured values): the batched form of
    `graph`, inputs batched at `in_dims` (None: unbatched), outputs at `out_dims` (an int
    for all, or one entry per output; `sum_match`: see _place)."""
    if not isinstance(out_dims, (list, tuple)):
        out_dims = [out_dims] * len(graph.outvars)
    avals = [v.aval if d is None else ShapedArray(v.aval.shape[:d] + (size,) +
                                                   v.aval.shape[d:], v.aval.dtype)
             for v, d in zip(graph.invars, in_dims)]

    def batched(*xs):
        outs = batch_values(graph, size, xs, in_dims)
        return [_place(o, d, dst, size, where, sum_match, i)
                for i, ((o, d), dst) in enumerate(zip(outs, out_dims))]
    return trace_flat(batched, avals)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         sum_match=False):
    """Vectorize `fun` over an axis of its arguments, as `jax.vmap`: `in_axes` and
    `out_axes` are ints (negative count from the end), None (not mapped / broadcast), or
    pytree prefixes; keyword arguments are mapped over their axis 0, as JAX's (in_axes
    covers the positional ones only). As in JAX, `fun` gets an unmapped argument that is
    not an array as it is (a function, a Python number for custom_vjp's nondiff_argnums);
    an unmapped array is traced, unlike JAX's, as eager values here are NumPy arrays,
    whose own indexing cannot take a traced index. `axis_size` is needed only when
    no argument is mapped; `axis_name` (a hashable, e.g. "i") names the mapped axis for
    the collectives inside `fun` (tracer.lax.psum(x, "i")...). With `sum_match`, an
    output batched where its out_axes is None is summed over the batch (JAX's) instead
    of being an error. `spmd_axis_name` (a mesh axis name or a tuple of them) is where
    JAX would shard the batch in an SPMD program; accepted and checked, it changes
    nothing here, where a batch is never split over devices (shard_map splits blocks).
    A float0 argument or result (tracer.float0s) is a constant, never traced: `fun`
    gets one example's float0 zeros (its mapped axis is not checked against the batch
    size), and a float0 result is float0 zeros with the batch axis at its out_axes."""
    name = getattr(fun, "__name__", "function")
    where = f"vmap({name})" if axis_name is None else f"vmap({name}, axis {axis_name!r})"
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ArgumentError(f"{where}: axis_size must be a non-negative int, got {axis_size!r}")
    for what, value in (("axis_name", axis_name), ("spmd_axis_name", spmd_axis_name)):
        try:
            hash(value)
        except TypeError:
            raise ArgumentError(f"{where}: {what} must be hashable (e.g. a string, or a "
                                f"tuple of them), got {value!r}") from None
    in_axes = check_spec(in_axes, out_axes, where)

    def vmapped(*args, **kwargs):
        check_positional(in_axes, args, where)
        spec = axes_per_leaf(in_axes, tuple(args), "in_axes", where)
        spec += [0] * len(flatten(kwargs)[0])
        leaves, in_tree = flatten([*args, kwargs])
        names = LeafNames(fun, args, kwargs)

        def in_axis(i, shape):
            return normalize(spec[i], len(shape), lambda: f"in_axes for {names[i]}", where,
                             shape)
        for i, x in enumerate(leaves):
            if is_float0(x):        # a constant: one example's value, never traced
                d = in_axis(i, x.shape)
                leaves[i] = x if d is None else zeros(x.shape[:d] + x.shape[d + 1:])
        traced = [i for i, (x, d) in enumerate(zip(leaves, spec)) if not is_float0(x) and (
            d is not None or isinstance(x, (Tracer, np.ndarray, np.generic)) or
            hasattr(x, "__array__"))]
        ins = [x if isinstance(x, Tracer) else core.as_array(x, where)
               for x in (leaves[i] for i in traced)]
        avals = [leaf_aval(x, where) for x in ins]
        axes = [in_axis(i, a.shape) for i, a in zip(traced, avals)]
        mapped = [(i, a, spec[i], a.shape[d]) for i, a, d in zip(traced, avals, axes)
                  if d is not None]
        if not leaves and axis_size is None:       # JAX's words, then ours
            raise ArgumentValueError(f"vmap wrapped function must be passed at least one "
                                     f"argument containing an array or axis_size must be "
                                     f"specified, got empty *args={tuple(args)} and "
                                     f"**kwargs={kwargs}: {where} has nothing to map over; "
                                     f"pass an array, or pass axis_size")
        size = mapped_size(mapped, axis_size, where, names)
        example = [a if d is None else ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype)
                   for a, d in zip(avals, axes)]
        trees = {}

        def flat_fun(*xs):
            given = dict(zip(traced, xs))
            *a, kw = unflatten(in_tree, [given.get(i, x) for i, x in enumerate(leaves)])
            outs, trees["out"] = flatten(fun(*a, **kw))
            for out in outs:
                if not isinstance(out, (Tracer, np.ndarray, np.generic, int, float)) and \
                        not hasattr(out, "__array__"):
                    raise ArgumentError(
                        f"{where}: Output from batched function {out!r} of type "
                        f"{type(out).__name__} is not a valid JAX type: return arrays or "
                        f"numbers (in pytrees)")
            trees["float0"] = Float0Leaves(outs)
            return trees["float0"].others(outs)
        outside = named_axes.bound
        bound = outside if axis_name is None else outside + [(axis_name, size)]
        with _naming(bound, named_axes.batching):
            graph, captured = trace_flat(flat_fun, example)
        f0 = trees["float0"]
        ranks = f0.merge([len(v.aval.shape) for v in graph.outvars],
                         {i: x.ndim for i, x in f0.values.items()})
        shaped = unflatten(trees["out"], list(range(len(ranks))))
        outs_axes = axes_per_leaf(out_axes if not isinstance(out_axes, list)
                                  else tuple(out_axes), shaped, "out_axes", where)
        outs_axes = [normalize(d, r + 1, lambda i=i: f"out_axes for output {i}", where)
                     for i, (d, r) in enumerate(zip(outs_axes, ranks))]
        with _naming(outside, axis_name):
            g, more = batch_graph(graph, size, axes + [None] * len(captured),
                                  f0.others(outs_axes), where, bool(sum_match))
        f0_out = {i: x if outs_axes[i] is None else zeros(
            x.shape[:outs_axes[i]] + (size,) + x.shape[outs_axes[i]:])
            for i, x in f0.values.items()}
        return unflatten(trees["out"], f0.merge(eval_graph(g, ins + captured + more), f0_out))
    doc = ("Vectorized version of {fun}. Takes similar arguments as {fun} but with "
           "additional array axes over which {fun} is mapped.")
    if getattr(fun, "__doc__", None):
        doc += "\n\nOriginal documentation:\n\n" + fun.__doc__.replace("{", "{{").replace("}", "}}")
    return presents(vmapped, fun, f"vmap_{name}", doc)
