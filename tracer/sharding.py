"""Meshes, partition specs and shard_map, as in JAX, in one process or over processes.

    mesh = tracer.make_mesh((2, 4), ("x", "y"))
    f = tracer.shard_map(lambda b: tracer.lax.psum(b, "y"), mesh,
                         in_specs=tracer.P(("x", "y")), out_specs=tracer.P("x"))

`shard_map` runs `f` once per mesh position on its block. In one process the positions
are simulated: each global array is split into its blocks (one array axis per mesh axis
it is split over, in mesh order, in front), `f` runs under one named `vmap` per mesh axis
(outermost first, so collectives over the mesh's names reduce over those axes), and the
per-position results are joined back per `out_specs`. An output whose spec omits a mesh
axis must not vary along it (a psum over it, or a value computed from replicated inputs),
as JAX requires. So shard_map composes with jit, grad and vmap like any traced function.

In a job of several processes (tracer.distributed.initialize() under mpiexec), a mesh from
`make_mesh` has one process per position (rank r at the row-major position r), and
shard_map takes JAX's multi-controller local view: each process passes its OWN block of
each argument (what in_specs would slice from the global array) and gets back its own
block of each result. `f` runs once, on those blocks, with the mesh's names bound to
their sizes, and each collective over a mesh axis carries the mesh and runs as an MPI
collective among the processes along that axis (lowering/mpi.py). A `Mesh` made directly
is always simulated in this process (the one-process oracle of a multi-process run).
"""
import math

from ir.errors import ArgumentError, ShapeError
from tracer import numpy as tnp
from tracer.pytree import flatten, unflatten
from tracer.vmap import named_axes, vmap


class PartitionSpec(tuple):
    """How an array is split over mesh axes, one entry per leading array axis: None
    (not split), a mesh axis name, or a tuple of names (split over all, the first
    major). `P()` is replicated; trailing axes not named are not split."""

    def __new__(cls, *entries):
        return super().__new__(cls, entries)

    def __repr__(self):
        return f"P({', '.join(map(repr, self))})"

    def names(self, j):
        """The mesh axis names array axis `j` is split over, major first."""
        e = self[j] if j < len(self) else None
        return () if e is None else tuple(e) if isinstance(e, (tuple, list)) else (e,)

    def used(self):
        return {a for j in range(len(self)) for a in self.names(j)}


P = PartitionSpec


class Mesh:
    """Named positions: `shape` maps each axis name to its size, in order. Simulated in
    this process (shard_map batches over them) unless `processes` (make_mesh in a job of
    several processes): then one process per position."""

    def __init__(self, axis_shapes, axis_names, *, processes=False):
        axis_shapes, axis_names = tuple(axis_shapes), tuple(axis_names)
        if len(axis_shapes) != len(axis_names) or len(set(axis_names)) < len(axis_names) \
                or any(not isinstance(s, int) or s < 1 for s in axis_shapes):
            raise ArgumentError(f"make_mesh: axis_shapes {axis_shapes} and axis_names "
                                f"{axis_names} must have one positive int size per distinct "
                                f"name")
        self.axis_names = axis_names
        self.axis_sizes = axis_shapes
        self.shape = dict(zip(axis_names, axis_shapes))
        self.size = math.prod(axis_shapes)
        self.processes = processes
        self.key = tuple(zip(axis_names, axis_shapes))

    def __repr__(self):
        return f"Mesh({', '.join(f'{n!r}: {s}' for n, s in self.shape.items())})"


def make_mesh(axis_shapes, axis_names):
    """A mesh of positions with these axis sizes and names (jax.make_mesh's arguments).
    In a multi-process job it has one process per position."""
    from tracer import distributed
    count = distributed.process_count()
    mesh = Mesh(axis_shapes, axis_names, processes=count > 1)
    if count > 1 and mesh.size != count:
        raise ArgumentError(f"make_mesh: {mesh} has {mesh.size} positions but the job has "
                            f"{count} processes; make one position per process")
    for name in mesh.axis_names * mesh.processes:    # every process splits together
        distributed.world.axis_comm(mesh.key, name)
    return mesh


class _ProcessAxis(tuple):
    """A (name, size) binding of a mesh axis whose positions are processes."""

    def __new__(cls, name, size, mesh_key):
        self = super().__new__(cls, (name, size))
        self.mesh = mesh_key
        return self


def process_mesh(name):
    """The ((name, size), ...) of the mesh of processes that binds axis `name` innermost,
    or None (a vmap or simulated mesh binds it)."""
    for bound in reversed(named_axes.bound):
        if bound[0] == name:
            return getattr(bound, "mesh", None)
    return None


def _specs_per_leaf(prefix, tree, what):
    """One PartitionSpec per leaf of `tree`, from the pytree prefix `prefix`."""
    if prefix is None or isinstance(prefix, PartitionSpec):
        return [prefix or P()] * len(flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)) \
            and len(prefix) == len(tree):
        return [s for p, t in zip(prefix, tree) for s in _specs_per_leaf(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict) and sorted(prefix) == sorted(tree):
        return [s for k in sorted(tree) for s in _specs_per_leaf(prefix[k], tree[k], what)]
    raise ArgumentError(f"shard_map: {what} {prefix!r} is not a pytree prefix of the "
                        f"values (a PartitionSpec, or tuples, lists, dicts of them, with "
                        f"one entry per value)")


def _map_specs(prefix, fn):
    """`prefix` with each PartitionSpec (or None) leaf replaced by fn(spec)."""
    if prefix is None or isinstance(prefix, PartitionSpec):
        return fn(prefix or P())
    if isinstance(prefix, (tuple, list)):
        return type(prefix)(_map_specs(p, fn) for p in prefix)
    if isinstance(prefix, dict):
        return {k: _map_specs(v, fn) for k, v in prefix.items()}
    raise ArgumentError(f"shard_map: out_specs must be PartitionSpecs or tuples, lists, "
                        f"dicts of them, got {prefix!r}")


def _check_spec(spec, ndim, mesh, what):
    names = [a for j in range(len(spec)) for a in spec.names(j)]
    unknown = [a for a in names if a not in mesh.shape]
    if len(spec) > ndim or unknown or len(set(names)) < len(names):
        raise ShapeError(f"shard_map: {what} has spec {spec} for a rank-{ndim} value over "
                         f"{mesh}: a spec names at most one entry per axis, only the mesh's "
                         f"axes, each mesh axis once")


def _split(x, spec, mesh, what):
    """The global `x` as (one axis per mesh axis of `spec`, in mesh order, then its block)."""
    x = tnp.asarray(x)
    _check_spec(spec, x.ndim, mesh, what)
    shape, order = [], []                       # order: mesh axis name per front axis
    for j, n in enumerate(x.shape):
        names = spec.names(j)
        parts = math.prod(mesh.shape[a] for a in names)
        if n % parts:
            raise ShapeError(f"shard_map: {what} of shape {x.shape} is split over {names} "
                             f"({parts} blocks) along axis {j} of size {n}, which does not "
                             f"divide evenly; pad it or choose another spec")
        shape += [mesh.shape[a] for a in names] + [n // parts]
        order += list(names) + [None]
    front = sorted((i for i, a in enumerate(order) if a is not None),
                   key=lambda i: mesh.axis_names.index(order[i]))
    perm = front + [i for i, a in enumerate(order) if a is None]
    return tnp.transpose(tnp.reshape(x, tuple(shape)), tuple(perm))


def _join(y, spec, mesh, what):
    """Inverse of _split: per-position blocks (mesh axes of `spec` in front) -> global."""
    front = [a for a in mesh.axis_names if a in spec.used()]
    ndim = y.ndim - len(front)
    _check_spec(spec, ndim, mesh, what)
    perm, shape = [], []
    for j in range(ndim):
        names = spec.names(j)
        perm += [front.index(a) for a in names] + [len(front) + j]
        shape.append(math.prod(mesh.shape[a] for a in names) * y.shape[len(front) + j])
    return tnp.reshape(tnp.transpose(y, tuple(perm)), tuple(shape))


def shard_map(f, mesh, in_specs, out_specs):
    """`f` run once per position of `mesh` on its block of each argument (split per
    `in_specs`, a pytree prefix of the arguments), its results joined per `out_specs`
    (a pytree prefix of the results), as jax.shard_map; collectives inside `f` name the
    mesh's axes."""
    if not isinstance(mesh, Mesh):
        raise ArgumentError(f"shard_map: mesh must be a tracer.make_mesh mesh, got "
                            f"{type(mesh).__name__}")
    name = getattr(f, "__name__", "function")
    if mesh.processes:
        return _over_processes(f, mesh, in_specs, out_specs, name)

    def mapped(*args):
        specs = _specs_per_leaf(in_specs, args, "in_specs")
        leaves, tree = flatten(list(args))
        blocks = [_split(x, s, mesh, f"argument leaf {i}")
                  for i, (x, s) in enumerate(zip(leaves, specs))]
        def body(*bs):
            return f(*unflatten(tree, list(bs)))
        body.__name__ = f"shard_map({name})"
        fun = body
        for a in reversed(mesh.axis_names):
            fun = vmap(fun, in_axes=tuple(0 if a in s.used() else None for s in specs),
                       out_axes=_map_specs(out_specs, lambda s, a=a: 0 if a in s.used()
                                           else None),
                       axis_name=a, axis_size=mesh.shape[a])
        outs, out_tree = flatten(fun(*blocks))
        out_leaf_specs = _specs_per_leaf(out_specs, unflatten(out_tree, outs), "out_specs")
        return unflatten(out_tree, [_join(y, s, mesh, f"output leaf {i}") for i, (y, s)
                                    in enumerate(zip(outs, out_leaf_specs))])
    mapped.__name__ = f"shard_map_{name}"
    return mapped


def _over_processes(f, mesh, in_specs, out_specs, name):
    """`f` on this process's blocks, with the mesh's axes bound as axes of processes."""
    def local(*args):
        leaves = flatten(list(args))[0]
        for i, (x, s) in enumerate(zip(leaves, _specs_per_leaf(in_specs, args, "in_specs"))):
            _check_spec(s, tnp.ndim(x), mesh, f"argument leaf {i} (this process's block)")
        outside = named_axes.bound
        named_axes.bound = outside + [_ProcessAxis(a, n, mesh.key)
                                      for a, n in mesh.shape.items()]
        try:
            outs = f(*args)
        finally:
            named_axes.bound = outside
        for i, (y, s) in enumerate(zip(flatten(outs)[0],
                                       _specs_per_leaf(out_specs, outs, "out_specs"))):
            _check_spec(s, tnp.ndim(y), mesh, f"output leaf {i} (this process's block)")
        return outs
    local.__name__ = f"shard_map_{name}"
    return local
