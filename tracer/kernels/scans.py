"""The kernels computed lane by lane along one `axis` ("along_axis"): cumsum, cumprod,
argsort. vmap batches them with the family's shared rule (the axis is renumbered)."""
from ir.types import ShapedArray
from registry import declare_kernel
from registry.shape_rules import INDEX, check_axes
from tracer import numpy as tnp
from tracer.core import run_kernel


def _rule(kernel):
    """cumsum/cumprod keep shape and dtype; argsort gives int64 indices of the same shape."""
    def rule(x, *, axis):
        check_axes(kernel, x.ndim, (axis,))
        return ShapedArray(x.shape, INDEX if kernel == "argsort" else x.dtype)
    return rule


def exclusive_cumprod(v, axis, inclusive=None):
    """prod_{k<i} v_k along `axis` (1 first), from `inclusive` = cumprod(v) if given."""
    n = v.shape[axis]
    lead = (slice(None),) * axis
    ones = tnp.ones(v.shape[:axis] + (min(n, 1),) + v.shape[axis + 1:], v.dtype)
    inc = tnp.cumprod(v, axis=axis) if inclusive is None else inclusive
    return tnp.concatenate([ones, inc[lead + (slice(0, n - 1),)]], axis=axis)


def _rcumsum(v, axis):
    """Reverse cumulative sum along `axis`: sum over j >= i."""
    rev = {"axes": (axis,)}
    return run_kernel("rev", [tnp.cumsum(run_kernel("rev", [v], rev), axis=axis)], rev)


def _shifted(v, axis, d, fill):
    """v[i + d] along `axis`, `fill` past the end."""
    n = v.shape[axis]
    lead = (slice(None),) * axis
    pad_shape = v.shape[:axis] + (min(d, n),) + v.shape[axis + 1:]
    return tnp.concatenate([v[lead + (slice(d, None),)], tnp.full(pad_shape, fill, v.dtype)],
                           axis=axis)


def _cumprod(dy, inputs, out, attrs):
    """dx_i = E_i * R_i with E_i = prod_{k<i} x_k (the shifted output) and
    R_i = sum_{j>=i} dy_j prod_{i<k<=j} x_k, the linear recurrence R_i = dy_i + x_{i+1}
    R_{i+1} solved by a log-depth scan of products: no division, so zeros are exact,
    and a polynomial in x, so every order of derivative is too."""
    (x,), ax = inputs, attrs["axis"]
    n = x.shape[ax]
    a, r, d = _shifted(x, ax, 1, 0), dy, 1
    while d < n:
        r, a = r + a * _shifted(r, ax, d, 0), a * _shifted(a, ax, d, 0)
        d *= 2
    return (exclusive_cumprod(x, ax, out) * r,)


for _name, _grad in (("cumsum", lambda dy, i, o, a: (_rcumsum(dy, a["axis"]),)),
                     ("cumprod", _cumprod), ("argsort", lambda dy, i, o, a: (None,))):
    declare_kernel(_name, shape=_rule(_name), family="along_axis", gradient=_grad)
