"""Collectives over a named axis, as jax.lax: psum, pmean, pmax, pmin, all_gather,
psum_scatter, ppermute, all_to_all, axis_index (and axis_size, read while tracing).

Each is a kernel whose node carries the axis name and size and its hashable parameters
(never a communicator; inside a shard_map over a mesh of processes also `mesh`, its
((name, size), ...) pairs), traced inside `vmap(f, axis_name=...)` or `shard_map`, which
bind the name; over processes lowering/mpi.py runs them as MPI collectives. In one
process, vmap batches a node over its own axis by the NAMED_RULES below (a reduction or
shuffle along the batch dim), so no collective reaches a backend; over another axis it is
batched like any kernel (the registered rules: the batch dim is just one more array
axis). Gradients are JAX's transposes: psum's is psum (so under vmap the gradient of a
psum is the axis size), all_gather <-> psum_scatter, ppermute by the inverse permutation,
all_to_all with its axes swapped; pmax and pmin have none. Collectives are declared side
effects (registry.declare_effects): never folded, merged or dropped (axis_index too: it
differs between processes). Pytrees are accepted where JAX accepts them (each leaf is one
node).
"""
import numpy as np

import registry
from ir import ShapedArray
from ir.errors import ArgumentError, GradientError, ShapeError
from tracer import core
from tracer import numpy as tnp
from tracer.pytree import flatten, unflatten
from tracer.sharding import process_mesh
from tracer.vmap import NAMED_RULES, bound_axis_size, moveaxis, to_dim

KERNELS = ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "all_to_all",
           "axis_index")


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _bind(kernel, x, axis_name, **params):
    """One `kernel` node over `axis_name`, always in the current trace (a constant operand
    too: in one position a collective of a constant still depends on the axis); with no
    trace (eagerly in a shard_map over processes) it runs."""
    size = bound_axis_size(axis_name)
    mesh = process_mesh(axis_name)
    where = {"axis_name": axis_name, "axis_size": size, **({"mesh": mesh} if mesh else {})}
    trace, inputs = core.current_trace(), [] if x is None else [x]
    if trace is None:                   # eagerly, over processes: run the MPI kernel
        return core.run_kernel(kernel, inputs, {**where, **params})
    return trace.emit(kernel, inputs, {**where, **params})


def _per_leaf(x, axis_name, fn):
    """fn applied to each leaf of the pytree `x` (after checking the names are bound)."""
    leaves, tree = flatten(x)
    for name in _names(axis_name):
        bound_axis_size(name)           # an unbound name fails here, whatever the leaves
    return unflatten(tree, [fn(tnp.asarray(leaf) if not isinstance(leaf, core.Tracer)
                               else leaf) for leaf in leaves])


def _one_name(op, axis_name):
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            raise ArgumentError(f"{op}: over one axis name only, got {axis_name!r}; nest "
                                f"calls for several axes")
        return axis_name[0]
    return axis_name


def _reduce(kernel, x, axis_name):
    names = _names(axis_name)
    for name in names:
        x = _bind(kernel, x, name)
    return x if names else tnp.copy(x)          # over no axis: x's value, a new array


def psum(x, axis_name):
    """The sum of `x` (a pytree) over every position of the named axis (or tuple of axes)."""
    return _per_leaf(x, axis_name, lambda v: _reduce("psum", v, axis_name))


def axis_size(axis_name):
    """The size of the named axis (a tuple of names: the product of their sizes), a
    Python int, known while tracing."""
    return int(np.prod([bound_axis_size(a) for a in _names(axis_name)]))


def pmean(x, axis_name):
    """The mean of `x` (a pytree) over the named axis (or tuple of axes)."""
    n = axis_size(axis_name)
    return _per_leaf(x, axis_name, lambda v: _reduce("psum", v, axis_name) / n)


def pmax(x, axis_name):
    """The maximum of `x` (a pytree) over the named axis (or tuple of axes); no gradient."""
    return _per_leaf(x, axis_name, lambda v: _reduce("pmax", v, axis_name))


def pmin(x, axis_name):
    """The minimum of `x` (a pytree) over the named axis (or tuple of axes); no gradient."""
    return _per_leaf(x, axis_name, lambda v: _reduce("pmin", v, axis_name))


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every position's `x` stacked along a new axis `axis` (tiled: concatenated along
    it)."""
    name = _one_name("all_gather", axis_name)
    return _per_leaf(x, name, lambda v: _bind(
        "all_gather", v, name, axis=_axis("all_gather", axis, v.ndim + (not tiled), v.shape),
        tiled=bool(tiled)))


def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False):
    """The psum of `x`, of which position i keeps block i of `scatter_dimension` (whose
    size is the axis size, removed; tiled: a multiple of it, divided)."""
    name = _one_name("psum_scatter", axis_name)
    return _per_leaf(x, name, lambda v: _bind(
        "psum_scatter", v, name, tiled=bool(tiled),
        scatter_dimension=_axis("psum_scatter", scatter_dimension, v.ndim, v.shape)))


def ppermute(x, axis_name, perm):
    """Position `dst` gets the `x` of position `src` for each (src, dst) in `perm`;
    positions no pair sends to get zeros."""
    name = _one_name("ppermute", axis_name)
    try:
        perm = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise ArgumentError(f"ppermute: perm must be (source, destination) pairs of ints, "
                            f"got {perm!r}") from None
    n = bound_axis_size(name)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if any(not 0 <= i < n for i in srcs + dsts) or len(set(srcs)) < len(srcs) or \
            len(set(dsts)) < len(dsts):
        raise ArgumentError(f"ppermute: perm {perm} over axis {name!r} of size {n} must "
                            f"name each position in 0..{n - 1} at most once as a source "
                            f"and once as a destination")
    return _per_leaf(x, name, lambda v: _bind("ppermute", v, name, perm=perm))


def all_to_all(x, axis_name, split_axis, concat_axis, *, tiled=False):
    """Split `split_axis` into one block per position, send block j to position j, and
    concatenate the received blocks along `concat_axis` (untiled: `split_axis` has the
    axis size and goes; the blocks form a new axis `concat_axis`). Over a tuple of names
    the positions are numbered row-major over them, as axis_index does."""
    names = _names(axis_name)
    if len(names) == 1:
        return _per_leaf(x, names[0], lambda v: _bind(
            "all_to_all", v, names[0], tiled=bool(tiled),
            split_axis=_axis("all_to_all", split_axis, v.ndim, v.shape),
            concat_axis=_axis("all_to_all", concat_axis, v.ndim, v.shape)))
    return _per_leaf(x, names, lambda v: _all_to_all_names(v, names, split_axis, concat_axis,
                                                           bool(tiled)))


def _all_to_all_names(v, names, split_axis, concat_axis, tiled):
    """all_to_all over several names: `split_axis` cut into one axis per name (and the
    block), an untiled all_to_all over each name on its axis, last name first (each
    axis then numbers its source), and the sources merged into `concat_axis`."""
    sizes = [bound_axis_size(n) for n in names]
    n, k = int(np.prod(sizes)), len(names)
    split = _axis("all_to_all", split_axis, v.ndim, v.shape)
    concat = _axis("all_to_all", concat_axis, v.ndim, v.shape)
    block = _blocks("all_to_all", v.shape, split, n, tiled, "split_axis")
    shape = v.shape[:split] + tuple(sizes) + (block,) * tiled + v.shape[split + 1:]
    y = tnp.reshape(v, shape)
    for m in reversed(range(k)):
        y = _bind("all_to_all", y, names[m], tiled=False, split_axis=split + m,
                  concat_axis=split + m)
    y = tnp.reshape(y, v.shape[:split] + (n,) + shape[split + k:])     # the sources, merged
    if not tiled:
        return moveaxis(y, split, concat)
    at = concat + (concat > split)              # the concat axis in y (the block's, if split)
    y = moveaxis(y, split, at - 1 if at > split else at)
    out = list(v.shape)
    out[split], out[concat] = block, out[concat] * n if concat != split else n * block
    return tnp.reshape(y, tuple(out))


def axis_index(axis_name):
    """This position's index along the named axis (int32); a tuple of names gives the
    row-major index over them."""
    out = None
    for name in _names(axis_name):
        i = _bind("axis_index", None, name)
        out = i if out is None else out * bound_axis_size(name) + i
    return out


def _axis(op, axis, ndim, shape):
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < max(ndim, 1):
        raise ShapeError(f"{op}: axis {axis!r} is out of range for an operand of shape "
                         f"{shape} (valid: {-ndim} to {ndim - 1})")
    return int(axis) % max(ndim, 1)


# ---- shape rules ------------------------------------------------------------------------

def _blocks(op, shape, dim, n, tiled, what):
    """The block size along `dim` split into n positions (untiled: dim must be n)."""
    size = shape[dim]
    if (size != n) if not tiled else (size % n):
        need = f"the axis size {n}" if not tiled else f"a multiple of the axis size {n}"
        raise ShapeError(f"{op}: {what} {dim} of an operand of shape {shape} must have "
                         f"{need}, got {size}" + ("" if tiled else "; or pass tiled=True"))
    return size // n


def _same(x, **attrs):
    return x


def _all_gather_shape(x, *, axis_name, axis_size, axis, tiled, mesh=None):
    s = list(x.shape)
    if tiled:
        s[axis] *= axis_size
    else:
        s.insert(axis, axis_size)
    return ShapedArray(tuple(s), x.dtype)


def _psum_scatter_shape(x, *, axis_name, axis_size, scatter_dimension, tiled, mesh=None):
    s = list(x.shape)
    k = _blocks("psum_scatter", x.shape, scatter_dimension, axis_size, tiled,
                "scatter_dimension")
    if tiled:
        s[scatter_dimension] = k
    else:
        del s[scatter_dimension]
    return ShapedArray(tuple(s), x.dtype)


def _all_to_all_shape(x, *, axis_name, axis_size, split_axis, concat_axis, tiled, mesh=None):
    s = list(x.shape)
    k = _blocks("all_to_all", x.shape, split_axis, axis_size, tiled, "split_axis")
    if tiled:
        s[split_axis] = k
        s[concat_axis] *= axis_size
    else:
        del s[split_axis]
        s.insert(concat_axis, axis_size)
    return ShapedArray(tuple(s), x.dtype)


SHAPES = {"psum": _same, "pmax": _same, "pmin": _same, "ppermute": _same,
          "all_gather": _all_gather_shape, "psum_scatter": _psum_scatter_shape,
          "all_to_all": _all_to_all_shape,
          "axis_index": lambda **attrs: ShapedArray((), np.dtype(np.int32))}


# ---- batching over the bound axis (size n): the batch dim is the axis ------------------

def _keep_dtype(out, x):
    return out if out.dtype == np.dtype(x.dtype) else tnp.astype(out, x.dtype)


def _total(x, d, n, reduce):
    """The reduction over positions: along the batch dim, or of n copies of x."""
    if d is not None:
        return _keep_dtype(reduce(x, axis=d), x)
    return _keep_dtype(x * n, x) if reduce is tnp.sum else x


def _named_psum(reduce):
    return lambda inputs, dims, attrs, n: (_total(inputs[0], dims[0], n, reduce), None)


def _named_all_gather(inputs, dims, attrs, n):
    (x,), (d,), axis = inputs, dims, attrs["axis"]
    out = to_dim(x, d, n, axis)
    if attrs["tiled"]:
        out = tnp.reshape(out, out.shape[:axis] + (-1,) + out.shape[axis + 2:])
    return out, None


def _named_psum_scatter(inputs, dims, attrs, n):
    (x,), (d,), sd = inputs, dims, attrs["scatter_dimension"]
    total = _total(x, d, n, tnp.sum)
    if attrs["tiled"]:
        total = tnp.reshape(total, total.shape[:sd] + (n, -1) + total.shape[sd + 1:])
    return total, sd


def _named_ppermute(inputs, dims, attrs, n):
    (x,), (d,) = inputs, dims
    src = dict((dst, s) for s, dst in attrs["perm"])
    out = tnp.take(to_dim(x, d, n, 0), np.array([src.get(i, 0) for i in range(n)]), axis=0)
    if len(src) < n:
        mask = np.array([i in src for i in range(n)]).reshape((n,) + (1,) * (out.ndim - 1))
        out = tnp.where(mask, out, tnp.zeros((), out.dtype))
    return out, 0


def _named_all_to_all(inputs, dims, attrs, n):
    """Position i gets block i of every position j, in order of j, along concat_axis."""
    (x,), (d,) = inputs, dims
    s, c = attrs["split_axis"] + 1, attrs["concat_axis"] + 1   # batch dim at 0
    x = to_dim(x, d, n, 0)
    x = tnp.reshape(x, x.shape[:s] + (n, -1) + x.shape[s + 1:])  # (j, .., i, block, ..)
    y = moveaxis(moveaxis(x, s, 0), 1, s)                        # (i, .., j, block, ..)
    if attrs["tiled"]:                                           # j-major along concat
        y = moveaxis(y, s, c)
        return tnp.reshape(y, y.shape[:c] + (-1,) + y.shape[c + 2:]), 0
    # untiled: the block has size 1 and goes; j becomes axis c of the result
    return tnp.squeeze(moveaxis(y, s, c if c <= s else c + 1),
                       axis=s + 1 if c <= s else s), 0


def _named_axis_index(inputs, dims, attrs, n):
    return tnp.arange(n, dtype=np.int32), 0


NAMED = {"psum": _named_psum(tnp.sum), "pmax": _named_psum(tnp.max),
         "pmin": _named_psum(tnp.min), "all_gather": _named_all_gather,
         "psum_scatter": _named_psum_scatter, "ppermute": _named_ppermute,
         "all_to_all": _named_all_to_all, "axis_index": _named_axis_index}


# ---- batching over another axis: the batch dim is one more array axis -------------------

def _mapped(kernel, shifted=()):
    """Run the kernel on the batched operand with its axis attrs renumbered (batch at 0)."""
    def rule(inputs, dims, attrs):
        (x,), (d,) = inputs, dims
        if not shifted:
            return core.current_trace().emit(kernel, [x], attrs), d
        new = {**attrs, **{k: attrs[k] + 1 for k in shifted}}
        return core.current_trace().emit(kernel, [moveaxis(x, d, 0)], new), 0
    return rule


MAPPED = {"psum": (), "pmax": (), "pmin": (), "ppermute": (), "all_gather": ("axis",),
          "psum_scatter": ("scatter_dimension",),
          "all_to_all": ("split_axis", "concat_axis")}


# ---- gradients (JAX's transposes) -------------------------------------------------------

def _again(kernel, params):
    """The gradient: `kernel` over the same axis with `params(attrs)` on the cotangent."""
    def grad(dy, inputs, outputs, attrs):
        new = {k: attrs[k] for k in ("axis_name", "axis_size", "mesh") if k in attrs}
        new.update(params(attrs))
        return (core.current_trace().emit(kernel, [dy], new),)
    return grad


def _no_gradient(kernel):
    def grad(dy, inputs, outputs, attrs):
        raise GradientError(f"{kernel} over axis {attrs['axis_name']!r} has no gradient "
                            f"(as in jax.lax); differentiate a psum of a one-hot mask of "
                            f"the maximum instead, or stop_gradient its input")
    return grad


GRADIENTS = {
    "psum": _again("psum", lambda a: {}),
    "ppermute": _again("ppermute", lambda a: {"perm": tuple((d, s) for s, d in a["perm"])}),
    "all_gather": _again("psum_scatter", lambda a: {"scatter_dimension": a["axis"],
                                                     "tiled": a["tiled"]}),
    "psum_scatter": _again("all_gather", lambda a: {"axis": a["scatter_dimension"],
                                                     "tiled": a["tiled"]}),
    "all_to_all": _again("all_to_all", lambda a: {"split_axis": a["concat_axis"],
                                                   "concat_axis": a["split_axis"],
                                                   "tiled": a["tiled"]}),
    "pmax": _no_gradient("pmax"), "pmin": _no_gradient("pmin"),
}


for _k in KERNELS:
    registry.declare_kernel(_k, shape=SHAPES[_k], gradient=GRADIENTS.get(_k), effects=True,
                            batching=_mapped(_k, MAPPED[_k]) if _k in MAPPED else None)
    NAMED_RULES[_k] = NAMED[_k]
