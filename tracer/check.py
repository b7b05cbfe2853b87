"""check_grads: reverse and forward mode against central finite differences in random
directions, recursively to the requested order (as in HIPS autograd and JAX).

Forward mode: jvp(f, x, v) vs (f(x + eps v) - f(x - eps v)) / 2 eps. Reverse mode:
<vjp(u), v> vs <u, finite difference> for a random output cotangent u. Order n checks the
jvp and vjp functions themselves to order n - 1.
"""
import numpy as np
from ml_dtypes import bfloat16

from ir.errors import DTypeError, GradientError
from ir.types import dtype_kind
from tracer.pytree import flatten, unflatten

# (finite-difference step, default atol, default rtol) per float dtype, most precise
# first. The step balances truncation error (~eps^2) against rounding error (~machine eps
# / eps); the least precise float anywhere (inputs or outputs) sets the whole check's.
_TOLERANCES = {np.dtype(np.float64): (1e-6, 1e-5, 1e-5),
               np.dtype(np.float32): (1e-3, 1e-2, 1e-2),
               np.dtype(np.float16): (3e-2, 5e-2, 5e-2),
               np.dtype(bfloat16): (1e-1, 2e-1, 2e-1)}


def _settings(leaves, out_leaves):
    present = {np.asarray(x).dtype for x in leaves + out_leaves}
    return _TOLERANCES[max((d for d in _TOLERANCES if d in present),
                           key=list(_TOLERANCES).index, default=np.dtype(np.float64))]


def _vdot(a, b):
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(a, b))


def _randn_like(rng, leaves):
    return [rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype) for x in leaves]


def _difference(p, m):
    """p - m in float64 with inf - inf = 0, as JAX's check_grads: an output that stays
    infinite on both sides (a max over padding only) has derivative 0, not NaN."""
    p, m = np.asarray(p, np.float64), np.asarray(m, np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(p == m, 0.0, p - m)


def check_grads(fun, args, order=1, atol=None, rtol=None, modes=("fwd", "rev"), eps=None,
                seed=0):
    """Raise GradientError if jvp/vjp of fun at args disagree with finite differences.

    `args` is a tuple of arguments (float arrays, or pytrees of them); `modes` selects
    forward ("fwd") and/or reverse ("rev") mode. order=2 also checks the derivatives of
    the jvp and vjp functions themselves (Hessian-vector products), and so on."""
    from tracer.transforms import jvp, vjp
    args = tuple(args)
    leaves, tree = flatten(list(args))
    leaves = [np.asarray(x) for x in leaves]
    bad = [str(x.dtype) for x in leaves if dtype_kind(x.dtype) != "f"]
    if bad:
        raise DTypeError(f"check_grads: every argument leaf must be a float array, got "
                         f"{bad}; close over the others (lambda x: f(x, n))")
    name = getattr(fun, "__name__", str(fun))
    out_leaves, out_tree = flatten(fun(*args))
    h, a_tol, r_tol = _settings(leaves, [np.asarray(o) for o in out_leaves])
    eps = eps or h
    atol = a_tol if atol is None else atol
    rtol = r_tol if rtol is None else rtol
    rng = np.random.default_rng(seed)
    v = _randn_like(rng, leaves)

    def at(delta):
        # each leaf keeps its dtype (bfloat16 times a Python float is float32)
        moved = [(x + delta * d).astype(x.dtype) for x, d in zip(leaves, v)]
        return flatten(fun(*unflatten(tree, moved)))[0]
    fd = [_difference(p, m) / (2 * eps) for p, m in zip(at(eps), at(-eps))]
    tangents = tuple(unflatten(tree, v))

    def close(what, got, want):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        if got.shape != want.shape or not np.allclose(got, want, atol=atol, rtol=rtol,
                                                      equal_nan=True):
            raise GradientError(f"check_grads({name}): {what} derivative {got} differs from "
                                f"finite differences {want} (atol={atol}, rtol={rtol}, "
                                f"eps={eps})")
    if "fwd" in modes:
        out, t_out = jvp(fun, args, tangents)
        for got, want in zip(flatten(t_out)[0], fd):
            close("forward-mode", got, want)
    u = unflatten(out_tree, _randn_like(rng, out_leaves))
    if "rev" in modes:
        _, vjp_fn = vjp(fun, *args)
        close("reverse-mode", _vdot(flatten(list(vjp_fn(u)))[0], v),
              _vdot(flatten(u)[0], fd))
    if order > 1:
        sub = dict(order=order - 1, atol=atol, rtol=rtol, modes=modes, eps=eps, seed=seed + 1)
        if "fwd" in modes:
            check_grads(lambda *a: jvp(fun, a, tangents)[1], args, **sub)
        if "rev" in modes:
            check_grads(lambda *a: vjp(fun, *a)[1](u), args, **sub)
