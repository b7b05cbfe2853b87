"""jit's placement keywords, JAX's `device`, `in_shardings` and `out_shardings`, on a
host that is one CPU device: every array already lives where they could put it, so they
place nothing. They are checked as JAX checks them, the values once when jit is applied
and the pytree structure once per traced signature (never per call): None, or a sharding
of one CPU device (a jax `SingleDeviceSharding`, or any object with a one-device
`device_set`), is accepted; a sharding over several devices, a non-CPU device or a
PartitionSpec (which needs a mesh in context, which this project does not have: split
arrays with tracer.shard_map) is an error naming what to pass instead.
"""
from ir.errors import ArgumentError, ArgumentValueError
from tracer.pytree import flatten, is_pytree, num_leaves, unflatten
from tracer.sharding import PartitionSpec
from tracer.tree_util import _prefix_leaves, tree_map


def placement(where, device, in_shardings, out_shardings):
    """The structure checks of these keywords (`Placement`), or None when there are none;
    raises on values JAX rejects."""
    if device is not None:
        _check_devices(where, "device", [device])
        for what, given in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
            if given is not None:
                raise ArgumentValueError(f"{where}: when device is specified on jit, "
                                         f"{what} should not be (as in JAX); pass one of "
                                         f"them")
    for what, spec in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        for leaf in flatten(spec)[0]:
            _check_leaf(where, what, leaf)
    if in_shardings is None and out_shardings is None:
        return None
    return Placement(where, in_shardings, out_shardings)


class Placement:
    """in_shardings and out_shardings, checked against a signature's arguments before
    it is traced and its results after: each a pytree prefix of them, as JAX requires."""

    def __init__(self, where, in_shardings, out_shardings):
        self.where, self.outs = where, out_shardings
        # a list of arguments' shardings is taken as the tuple, as JAX does
        self.ins = tuple(in_shardings) if type(in_shardings) is list else in_shardings

    def check_arguments(self, args, kwargs):
        """`args`: the dynamic positional arguments; `kwargs`: every keyword argument
        (JAX refuses them all, static ones too, once in_shardings is given)."""
        if self.ins is None:
            return
        if kwargs:
            raise ArgumentValueError(f"{self.where}: jit does not support keyword arguments "
                                     f"({', '.join(sorted(kwargs))}) when in_shardings is "
                                     f"specified (as in JAX); pass them positionally")
        _check_prefix(self.where, "in_shardings", self.ins, tuple(args),
                      "the positional arguments", "argument")

    def placed(self, out_info):
        """`out_info` (the results' ShapeDtypeStructs, as eval_shape returns them) with the
        sharding out_shardings gives each result, as JAX's eval_shape reports it."""
        return _placed(self.outs, out_info)

    def check_results(self, out_tree):
        if self.outs is not None:
            results = unflatten(out_tree, [0] * num_leaves(out_tree))   # stand-ins
            _check_prefix(self.where, "out_shardings", self.outs, results, "the results",
                          "result")


def _placed(spec, value):
    """`value` with each leaf given the sharding of its entry in the prefix `spec`."""
    specs, td = flatten(spec, lambda s: s is None)
    subtrees = _prefix_leaves(td, value, "out_info", "eval_shape")
    return unflatten(td, [sub if s is None else tree_map(lambda a, s=s: type(a)(
        a.shape, a.dtype, weak_type=a.weak_type, sharding=s), sub)
        for s, sub in zip(specs, subtrees)])


def with_sharding_constraint(x, shardings):
    """jax.lax.with_sharding_constraint on one CPU device: `x` unchanged, once `shardings`
    (one sharding, or a pytree prefix of x of them) is checked as jit's in_shardings."""
    where = "with_sharding_constraint"
    for leaf in flatten(shardings)[0]:
        _check_leaf(where, "shardings", leaf)
    _check_prefix(where, "shardings", shardings, x, "the values", "value")
    return x


def _check_leaf(where, what, leaf):
    if isinstance(leaf, PartitionSpec) or type(leaf).__name__ in ("P", "PartitionSpec"):
        raise NotImplementedError(
            f"{where}: {what} has the PartitionSpec {leaf!r}, which JAX resolves against a "
            f"mesh in context (jax.set_mesh); this project has no mesh context (one CPU "
            f"device): pass None or a single-device sharding, or split arrays over a mesh "
            f"with tracer.shard_map")
    devices = getattr(leaf, "device_set", None)
    if devices is None:
        raise ArgumentError(f"{where}: {what} leaf specifications are expected to be "
                            f"shardings, PartitionSpecs or None (as in JAX), but got "
                            f"{leaf!r}")
    _check_devices(where, f"{what} sharding {leaf!r}", list(devices))


def _check_devices(where, what, devices):
    """One CPU device, duck-typed on jax's Device (`.platform`)."""
    platforms = [getattr(d, "platform", None) for d in devices]
    if None in platforms:
        raise ArgumentError(f"{where}: {what} must be a device (as jax.devices()[0]), got "
                            f"{devices[platforms.index(None)]!r}")
    if len(devices) != 1 or platforms != ["cpu"]:
        raise ArgumentValueError(f"{where}: {what} places arrays on {len(devices)} "
                                 f"device(s) of platform(s) {sorted(set(platforms))}; this "
                                 f"project runs on one CPU device, so pass None or a "
                                 f"single-CPU-device sharding (tracer.shard_map splits "
                                 f"arrays over a mesh)")


def _check_prefix(where, what, spec, value, of, each, path=""):
    """`spec` is a pytree prefix of `value` (a None or a sharding stands for a subtree)."""
    if spec is None or not is_pytree(spec):
        return
    kids, kind = flatten(spec, lambda y: y is not spec)
    parts, want = flatten(value, lambda y: y is not value)
    if kind != want:
        raise ArgumentValueError(
            f"{where}: {what} must be a pytree prefix of {of}, but at {what}{path} it is "
            f"{_shape(spec)} where {of} have {_shape(value)}; give one entry per {each} "
            f"(tuples, lists, dicts of shardings or None), or a single sharding or None")
    keys = kind[1] if kind[0] == "dict" else range(len(kids))
    for k, s, v in zip(keys, kids, parts):
        _check_prefix(where, what, s, v, of, each, f"{path}[{k!r}]")


def _shape(x):
    if isinstance(x, dict):
        return f"a dict with keys {sorted(x)}"
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a {type(x).__name__}"
