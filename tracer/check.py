"""check_grads: reverse and forward mode against central finite differences in random
directions, recursively to the requested order (as in HIPS autograd and JAX)."""
import numpy as np

from ir.errors import GradientError
from tracer.pytree import flatten, unflatten

# (finite-difference step, default atol, default rtol) per float dtype.
_TOLERANCES = {np.dtype(np.float64): (1e-6, 1e-5, 1e-5),
               np.dtype(np.float32): (1e-3, 5e-2, 5e-2)}


def _float_dtype(leaves):
    dts = [np.asarray(x).dtype for x in leaves]
    return np.dtype(np.float32) if dts and all(d == np.float32 for d in dts) else np.dtype(np.float64)


def _vdot(a, b):
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(a, b))


def check_grads(fun, args, order=1, atol=None, rtol=None, modes=("fwd", "rev"), eps=None,
                seed=0):
    """Raise GradientError if jvp/vjp of fun at args disagree with finite differences.

    `args` is a tuple of arguments (float arrays or pytrees of them). order=2 also checks
    the derivatives of the jvp and vjp functions themselves."""
    from tracer.transforms import jvp, vjp
    args = tuple(args)
    leaves, tree = flatten(list(args))
    leaves = [np.asarray(x) for x in leaves]
    h, a_tol, r_tol = _TOLERANCES[_float_dtype(leaves)]
    eps, atol, rtol = eps or h, atol if atol is not None else a_tol, rtol if rtol is not None else r_tol
    rng = np.random.default_rng(seed)
    v = [rng.standard_normal(x.shape).astype(x.dtype) for x in leaves]

    def at(delta):
        moved = [x + delta * d for x, d in zip(leaves, v)]
        return flatten(fun(*unflatten(tree, moved)))[0]
    fd = [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
          for p, m in zip(at(eps), at(-eps))]
    tangents = tuple(unflatten(tree, v))

    def close(what, got, want):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        if not np.allclose(got, want, atol=atol, rtol=rtol, equal_nan=True):
            raise GradientError(f"check_grads({getattr(fun, '__name__', fun)}): {what} "
                                f"derivative {got} differs from finite differences {want} "
                                f"(atol={atol}, rtol={rtol})")
    if "fwd" in modes:
        _, t_out = jvp(fun, args, tangents)
        for got, want in zip(flatten(t_out)[0], fd):
            close("forward-mode", got, want)
    if "rev" in modes:
        out, vjp_fn = vjp(fun, *args)
        out_leaves, out_tree = flatten(out)
        u = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) for o in out_leaves]
        g = flatten(list(vjp_fn(unflatten(out_tree, u))))[0]
        close("reverse-mode", _vdot(g, v), _vdot(u, fd))
    if order > 1:
        if "fwd" in modes:
            check_grads(lambda *a: jvp(fun, a, tangents)[1], args, order - 1, atol, rtol,
                        modes, eps, seed + 1)
        if "rev" in modes:
            out, _ = vjp(fun, *args)
            out_leaves, out_tree = flatten(out)
            u = unflatten(out_tree, [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype)
                                     for o in out_leaves])
            check_grads(lambda *a: vjp(fun, *a)[1](u), args, order - 1, atol, rtol, modes,
                        eps, seed + 1)
