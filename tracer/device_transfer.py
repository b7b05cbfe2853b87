"""jax.device_put and jax.device_get for a host that is one CPU device: arrays are NumPy
arrays already, so putting one copies it (the result never shares memory with what was
passed, unless may_alias=True) and getting one is np.asarray; traced values pass through.
`device` is checked as JAX checks it (None, a CPU device or sharding, or a pytree prefix
of x of those) and places nothing."""
import numpy as np

from ir import scalar_array
from ir.errors import ArgumentValueError
from tracer.core import Tracer
from tracer.pytree import flatten, flatten_with_path, unflatten
from tracer.tree_util import keystr, structure_difference


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """x (a pytree) with each leaf a NumPy array on the host; donate=True or
    may_alias=True let a leaf that is already an array be returned as it is."""
    if donate and may_alias:
        raise ArgumentValueError("device_put: may_alias and donate cannot be True at the same "
                                 "time.")
    for name, where in (("device", device), ("src", src)):
        bad = []
        _check_placement(where, x, (), bad)
        if bad:
            raise ArgumentValueError(
                f"device_put {name} specification must be a tree prefix of the "
                f"corresponding value; Mismatch details ({len(bad)} found):\n  " +
                "\n  ".join(bad) + f"\ndevice_put: pass as {name} None, one CPU device or "
                f"sharding, or a pytree prefix of x of them")
    leaves, tree = flatten(x)
    alias = donate or may_alias

    def put(v):
        if isinstance(v, Tracer):
            return v
        a = scalar_array(v, "device_put") if type(v) is int else np.asarray(v)
        return a if alias and a is v else np.array(a, copy=True)
    return unflatten(tree, [put(v) for v in leaves])


def device_get(x):
    """x (a pytree) with each array leaf as a NumPy array; Python scalars stay as they are."""
    leaves, tree = flatten(x)
    return unflatten(tree, [v if isinstance(v, (bool, int, float)) else np.asarray(v)
                            for v in leaves])


def _placement(where):
    """True for None or a CPU device or sharding (duck-typed, JAX's objects included); a
    ValueError in JAX's words for a string or another platform's device."""
    if where is None:
        return True
    if isinstance(where, (str, bytes)):
        raise ArgumentValueError(f"device_put: Received invalid value {where!r} for a "
                                 f"device; pass None (the one CPU device), a device or a "
                                 f"sharding object")
    platform = getattr(where, "platform", None)
    if platform is not None and platform != "cpu":
        raise ArgumentValueError(f"device_put: {where!r} is a {platform} device; this host "
                                 f"has one CPU device and arrays live in host memory")
    return platform is not None or any(hasattr(where, a) for a in (
        "device_set", "mesh", "addressable_devices", "memory_kind"))


def _check_placement(where, x, path, bad):
    """Append to `bad` the paths where the placement tree `where` is not a prefix of x."""
    if _placement(where):
        return
    sub, td = flatten(where, lambda y: y is not where)
    pairs, xtd = flatten_with_path(x, lambda p, y: y is not x)
    what = structure_difference(td, xtd, len(sub), len(pairs))
    if what is not None:
        bad.append(f"pytree structure error: different {what} at key path x{keystr(path)}: "
                   f"the specification has a {type(where).__name__} where x has a "
                   f"{type(x).__name__}")
        return
    for w, (p, v) in zip(sub, pairs):
        _check_placement(w, v, path + p, bad)
