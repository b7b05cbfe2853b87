"""Every built-in kernel's gradient, in one table, written with traceable ops.

`grad_fn(dy, inputs, outputs, attrs)` returns one gradient (or None) per input. Because
broadcasting is explicit in the graph, elementwise gradients never un-broadcast: only
`broadcast_to` sums back. Kinks follow JAX: abs'(0)=1, max/min split ties evenly,
sqrt'(0)=inf, relu'(0)=0 (tracer.nn.relu is a where), and where() routes the cotangent
to the branch taken (see `_select` for how NaN from the other branch is kept out).
"""
import math

import numpy as np

from ir.types import dtype_kind
from registry import register_gradient
from tracer import numpy as tnp
from tracer.core import run_kernel


def _sum_to(g, shape):
    """Sum `g` (of a broadcast shape) back down to `shape` (the broadcast_to gradient)."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return tnp.reshape(tnp.sum(g, axis=axes), shape) if axes else tnp.reshape(g, shape)


def _expand(g, in_shape, axes):
    """Broadcast a reduction's cotangent back over the reduced `axes` (leading axes
    need no reshape: broadcasting aligns shapes on the right)."""
    if axes != tuple(range(len(axes))):
        g = tnp.reshape(g, tuple(1 if i in axes else d for i, d in enumerate(in_shape)))
    return tnp.broadcast_to(g, in_shape)


def _share(a, b):
    """a's share of max(a, b)'s cotangent, balanced as in JAX: 1 where a > b, 1/2 on
    ties, else 0 (min(a, b) gives b the same share)."""
    one, half, zero = (np.array(v, a.dtype) for v in (1.0, 0.5, 0.0))
    return tnp.where(a > b, one, tnp.where(a == b, half, zero))


def _select(dy, inputs, out, attrs):
    """Route the cotangent to the branch that was taken; the other branch gets exact
    zeros. Zeros alone cannot stop a NaN: the chain rule multiplies them by the untaken
    branch's local derivatives (sqrt'(x < 0) is nan, (inf * x)' is inf, and 0 * inf is
    nan). autodiff.backward therefore also gives each branch's cotangent a zero mask
    (~cond for on_true, cond for on_false) and re-zeroes gradients under it through the
    elementwise kernels that follow, so where(x > 0, sqrt(x), 0) has gradient 0 at x < 0 (JAX: nan) and
    where(x > 0, x, inf * x) has gradient 1 at x > 0. See autodiff's docstring for the
    exact guarantee."""
    c, _, _ = inputs
    return None, tnp.where(c, dy, 0), tnp.where(c, 0, dy)


def _pow_grads(dy, x, y, out):
    """y x^(y-1) and log(x) x^y, each 0 where it would be 0 * inf at x == 0; only x == 0
    is guarded, so at y == 0 elsewhere d/dy of y x^(y-1) is x^-1 (jax's), not 0."""
    zero_x = x == 0
    both = tnp.logical_and(zero_x, y == 0)
    dx = tnp.where(both, 0, y * tnp.where(both, 1, x) ** (y - 1))
    return dy * dx, dy * tnp.log(tnp.where(zero_x, 1, x)) * out


def _reduce_extreme(dy, inputs, out, attrs):
    x, = inputs
    axes = attrs["axes"]
    mask = (x == _expand(out, x.shape, axes)).astype(x.dtype)
    count = _expand(tnp.sum(mask, axis=axes), x.shape, axes)
    return (_expand(dy, x.shape, axes) * mask / count,)


def _exclusive_cumprod(v, axis, inclusive=None):
    """prod_{k<i} v_k along `axis` (1 first), from `inclusive` = cumprod(v) if given."""
    n = v.shape[axis]
    lead = (slice(None),) * axis
    ones = tnp.ones(v.shape[:axis] + (min(n, 1),) + v.shape[axis + 1:], v.dtype)
    inc = tnp.cumprod(v, axis=axis) if inclusive is None else inclusive
    return tnp.concatenate([ones, inc[lead + (slice(0, n - 1),)]], axis=axis)


def _reduce_prod(dy, inputs, out, attrs):
    """d prod / dx_i is the product of the other items: an exclusive prefix product
    times an exclusive suffix product (cumprod, whose gradient is a polynomial). No
    division, so any number of zeros is exact, to every order."""
    x, = inputs
    axes = attrs["axes"]
    keep = [i for i in range(x.ndim) if i not in axes]
    perm = keep + list(axes)
    rows = tnp.reshape(tnp.transpose(x, perm), tuple(x.shape[i] for i in keep) +
                       (math.prod(x.shape[i] for i in axes),))
    ax = rows.ndim - 1
    rev = {"axes": (ax,)}
    others = _exclusive_cumprod(rows, ax) * run_kernel(
        "rev", [_exclusive_cumprod(run_kernel("rev", [rows], rev), ax)], rev)
    others = tnp.transpose(tnp.reshape(others, tuple(x.shape[i] for i in perm)),
                           tuple(np.argsort(perm)))
    return (_expand(dy, x.shape, axes) * others,)


def _slice(dy, inputs, out, attrs):
    x, = inputs
    lo, hi = [], []
    for d, s, n, k in zip(x.shape, attrs["start"], dy.shape, attrs["step"]):
        lo.append(s if n else 0)
        hi.append(d - s - (n - 1) * k - 1 if n else d)
    return (run_kernel("pad", [dy], {"lo": tuple(lo), "hi": tuple(hi),
                                     "interior": tuple(k - 1 for k in attrs["step"])}),)


def _pad(dy, inputs, out, attrs):
    x, = inputs
    start = tuple(attrs["lo"])
    step = tuple(i + 1 for i in attrs["interior"])
    limit = tuple(l + (d - 1) * k + 1 if d else l for l, d, k in zip(start, x.shape, step))
    return (run_kernel("slice", [dy], {"start": start, "limit": limit, "step": step}),)


def _concatenate(dy, inputs, out, attrs):
    ax, grads, off = attrs["axis"], [], 0
    for x in inputs:
        n = x.shape[ax]
        idx = [slice(None)] * dy.ndim
        idx[ax] = slice(off, off + n)
        grads.append(dy[tuple(idx)])
        off += n
    return grads


def _matmul(dy, inputs, out, attrs):
    a, b = inputs
    return dy @ tnp.swapaxes(b, -1, -2), tnp.swapaxes(a, -1, -2) @ dy


# kernel -> grad_fn(dy, i, o, a): i the inputs, o the output, a the attrs.
GRADIENTS = {
    "neg": lambda dy, i, o, a: (-dy,),
    "exp": lambda dy, i, o, a: (dy * o,),
    "log": lambda dy, i, o, a: (dy / i[0],),
    "log1p": lambda dy, i, o, a: (dy / (1 + i[0]),),
    "expm1": lambda dy, i, o, a: (dy * (o + 1),),
    "sqrt": lambda dy, i, o, a: (dy / (2 * o),),
    "sin": lambda dy, i, o, a: (dy * tnp.cos(i[0]),),
    "cos": lambda dy, i, o, a: (-dy * tnp.sin(i[0]),),
    "tanh": lambda dy, i, o, a: (dy * (1 - o * o),),
    "erf": lambda dy, i, o, a: (dy * (2 / math.sqrt(math.pi)) * tnp.exp(-i[0] * i[0]),),
    "abs": lambda dy, i, o, a: (tnp.where(i[0] >= 0, dy, -dy),),
    "add": lambda dy, i, o, a: (dy, dy),
    "sub": lambda dy, i, o, a: (dy, -dy),
    "mul": lambda dy, i, o, a: (dy * i[1], dy * i[0]),
    "div": lambda dy, i, o, a: (dy / i[1], -dy * o / i[1]),
    "pow": lambda dy, i, o, a: _pow_grads(dy, i[0], i[1], o),
    "max": lambda dy, i, o, a: (dy * _share(i[0], i[1]), dy * _share(i[1], i[0])),
    "min": lambda dy, i, o, a: (dy * _share(i[1], i[0]), dy * _share(i[0], i[1])),
    "select": _select,
    "convert": lambda dy, i, o, a: (tnp.astype(dy, i[0].dtype)
                                    if dtype_kind(i[0].dtype) == "f" else None,),
    "reduce_sum": lambda dy, i, o, a: (_expand(dy, i[0].shape, a["axes"]),),
    "reduce_max": _reduce_extreme,
    "reduce_min": _reduce_extreme,
    "reduce_prod": _reduce_prod,
    "broadcast_to": lambda dy, i, o, a: (_sum_to(dy, i[0].shape),),
    "reshape": lambda dy, i, o, a: (tnp.reshape(dy, i[0].shape),),
    "transpose": lambda dy, i, o, a: (tnp.transpose(dy, tuple(np.argsort(a["perm"]))),),
    "slice": _slice,
    "rev": lambda dy, i, o, a: (run_kernel("rev", [dy], a),),
    "pad": _pad,
    "concatenate": _concatenate,
    "take": lambda dy, i, o, a: (run_kernel("scatter_add", [dy, i[1]], {
        "axis": a["axis"], "size": i[0].shape[a["axis"]]}), None),
    "scatter_add": lambda dy, i, o, a: (run_kernel("take", [dy, i[1]], {"axis": a["axis"]}),
                                        None),
    "matmul": _matmul,
    # bitwise kernels and signbit have integer or bool outputs, never differentiated
    **{k: lambda dy, i, o, a: (None,) for k in ("signbit", "not")},
    **{k: lambda dy, i, o, a: (None, None) for k in ("and", "or", "xor", "shl", "shr")},
    "atan": lambda dy, i, o, a: (dy / (1 + i[0] * i[0]),),
    # fmod(x, y) = x - trunc(x / y) * y, where (x - fmod) / y is that integer (rint: exact)
    "fmod": lambda dy, i, o, a: (dy, -dy * run_kernel("rint", [(i[0] - o) / i[1]])),
}

for _name, _fn in GRADIENTS.items():
    register_gradient(_name, _fn)


# ---- G2 (issue 11): scans and sorting ---------------------------------------------------
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
    return (_exclusive_cumprod(x, ax, out) * r,)


for _name, _fn in {"cumsum": lambda dy, i, o, a: (_rcumsum(dy, a["axis"]),),
                   "cumprod": _cumprod, "argsort": lambda dy, i, o, a: (None,)}.items():
    register_gradient(_name, _fn)
