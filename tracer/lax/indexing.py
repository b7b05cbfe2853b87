"""`stop_gradient`, and reading / writing one slot of an array at a traced index.

`dynamic_index(x, i)` is `x[i]` and `dynamic_update_index(x, i, v)` is `x.at[i].set(v)`
along axis 0, with `i` a traced integer scalar; as in jax.lax, a negative `i` counts
from the end and the result is then clamped into range (the kernels only clamp): a loop
reads and writes a buffer of checkpoints with them.
"""
import numpy as np

import registry
from ir import ShapedArray
from ir.errors import DTypeError, ShapeError
from ir.types import dtype_kind
from tracer import numpy as tnp
from tracer.core import Tracer, run_kernel
from tracer.pytree import flatten, unflatten


def stop_gradient(x):
    """x (a pytree), with a zero gradient: differentiation treats it as a constant."""
    leaves, tree = flatten(x)
    return unflatten(tree, [run_kernel("stop_gradient", [v]) for v in leaves])


def dynamic_index(x, i):
    return run_kernel("dynamic_index", [x, _from_end(x, i)])


def dynamic_update_index(x, i, v):
    return run_kernel("dynamic_update_index", [x, _from_end(x, i), v])


def _from_end(x, i):
    """i, or i + len(x) when negative (jax's start-index rule); anything but a signed
    integer scalar is left to the kernel's shape rule to reject."""
    n = np.shape(x)[0] if np.ndim(x) else 0
    if not isinstance(i, Tracer):
        a = np.asarray(i)
        if a.ndim or dtype_kind(a.dtype) != "i" or a >= 0:
            return i
        return np.int64(int(a) + n)
    if i.shape or dtype_kind(i.dtype) != "i":
        return i
    if n > np.iinfo(i.dtype).max:           # i + n must not wrap
        i = tnp.astype(i, np.int64)
    return tnp.where(i < 0, i + n, i)


def _check_index(kernel, x, i):
    if not x.shape:
        raise ShapeError(f"{kernel}: needs an array with a leading axis, got {x}")
    if i.shape != () or dtype_kind(i.dtype) not in "iu":
        raise DTypeError(f"{kernel}: the index must be an integer scalar, got {i}")


def _index_rule(x, i):
    _check_index("dynamic_index", x, i)
    return ShapedArray(x.shape[1:], x.dtype)


def _update_rule(x, i, v):
    _check_index("dynamic_update_index", x, i)
    if v.shape != x.shape[1:] or v.dtype != x.dtype:
        raise ShapeError(f"dynamic_update_index: the update must be one slot of {x}, i.e. "
                         f"{ShapedArray(x.shape[1:], x.dtype)}, got {v}")
    return x.strip_weak()


def slot(x, i):
    return min(max(int(i), 0), x.shape[0] - 1)


def _update(x, i, v):
    out = np.array(x)
    out[slot(x, i)] = v
    return out


registry.register_shape_rule("stop_gradient", lambda x: x.strip_weak())
registry.declare_family("stop_gradient", "elementwise", differentiable=False)
registry.register_kernel("stop_gradient", "numpy", lambda x: np.array(x))
registry.register_shape_rule("dynamic_index", _index_rule)
registry.declare_family("dynamic_index", "gather")
registry.register_kernel("dynamic_index", "numpy", lambda x, i: np.array(x[slot(x, i)]))
registry.register_gradient("dynamic_index", lambda dy, i, o, a: (
    run_kernel("dynamic_update_index", [tnp.zeros(i[0].shape, i[0].dtype), i[1], dy]), None))
registry.register_shape_rule("dynamic_update_index", _update_rule)
registry.declare_family("dynamic_update_index", "scatter")
registry.register_kernel("dynamic_update_index", "numpy", _update)
registry.register_gradient("dynamic_update_index", lambda dy, i, o, a: (
    run_kernel("dynamic_update_index", [dy, i[1], tnp.zeros(i[2].shape, i[2].dtype)]), None,
    run_kernel("dynamic_index", [dy, i[1]])))
