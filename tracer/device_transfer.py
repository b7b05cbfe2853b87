"""jax.device_put and jax.device_get for a host that is one CPU device: arrays are NumPy
arrays already, so putting one copies it (the result never shares memory with what was
passed, unless may_alias=True) and getting one is np.asarray; traced values pass through."""
import numpy as np

from ir.errors import ArgumentError
from tracer.core import Tracer
from tracer.pytree import flatten, unflatten


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """x (a pytree) with each leaf a NumPy array on the host. `device` and `src` may be
    None or this process's CPU; donate=True lets the result reuse the argument."""
    for name, where in (("device", device), ("src", src)):
        if where is not None and not _is_cpu(where):
            raise ArgumentError(f"device_put: {name}={where!r}: this host has one CPU device "
                                f"and arrays live in host memory; pass None")
    leaves, tree = flatten(x)
    alias = donate or may_alias

    def put(v):
        if isinstance(v, Tracer):
            return v
        a = np.asarray(v)
        return a if alias and a is v else np.array(a, copy=True)
    return unflatten(tree, [put(v) for v in leaves])


def device_get(x):
    """x (a pytree) with each leaf as a NumPy array (as it already is)."""
    leaves, tree = flatten(x)
    return unflatten(tree, [np.asarray(v) for v in leaves])


def _is_cpu(where):
    text = str(where).lower()
    return text == "cpu" or getattr(where, "platform", None) == "cpu" or "cpu" in text
