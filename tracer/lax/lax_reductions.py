"""jax.lax's reductions, cumulative ops and associative_scan.

Reductions keep the operand's dtype (an int8 sum wraps, as in jax.lax). `reduce` with one
of the known monoids (lax/tracer.numpy add, mul, max, min, and, or, xor) is one reduction
kernel; any other computation (assumed associative and commutative, as XLA assumes) and
any tuple of operands is reduced pairwise in a balanced tree, the computation being
applied to whole arrays of pairs, so its depth is log2 of the reduced size.
"""
import numpy as np

from ir.errors import ArgumentValueError, ShapeError
from ir.types import BFLOAT16, dtype_kind
from tracer import config
from tracer import numpy as tnp
from tracer.numpy import ufunc_keywords
from tracer.lax import lax_elementwise as ew
from tracer.lax.lax_shapes import axis_of, rev
from tracer.pytree import flatten, unflatten


def _axes(name, x, axes):
    axes = tuple(int(a) for a in axes)
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"lax.{name}: axes {axes} must be distinct dimensions in "
                         f"[0, {x.ndim}) of {x.shape}")
    return axes


def _tree(xs, inits, combine, axes):
    """Reduce the arrays xs over axes by combining halves until one element is left."""
    keep = [a for a in range(xs[0].ndim) if a not in axes]
    xs = [tnp.reshape(tnp.transpose(x, keep + list(axes)),
                      tuple(x.shape[a] for a in keep) + (-1,)) for x in xs]
    n = xs[0].shape[-1]
    if n == 0:
        return [tnp.broadcast_to(i, xs[0].shape[:-1]) for i in inits]
    while n > 1:
        if n % 2:                                    # the odd element pairs with the init
            xs = [tnp.concatenate([x, tnp.broadcast_to(i, x.shape[:-1] + (1,))], axis=-1)
                  for x, i in zip(xs, inits)]
            n += 1
        xs = combine([x[..., 0::2] for x in xs], [x[..., 1::2] for x in xs])
        n //= 2
    return combine([x[..., 0] for x in xs], [tnp.broadcast_to(i, x.shape[:-1])
                                             for x, i in zip(xs, inits)])


_MONOIDS = {"add": lambda x, a: tnp.sum(x, axis=a, dtype=x.dtype),
            "mul": lambda x, a: tnp.prod(x, axis=a, dtype=x.dtype),
            "max": lambda x, a: tnp.max(x, axis=a), "min": lambda x, a: tnp.min(x, axis=a)}


def _reducer(name, op, kinds):
    def fn(operand, axes):
        (x,) = ew.same_dtype(name, [operand], kinds)
        axes = _axes(name, x, axes)
        if op == "add" and x.dtype in _HALF and not config.allow_f16_reductions.value and \
                any(x.shape[a] != 1 for a in axes):
            raise ArgumentValueError(
                f"reduce_sum on operand {x.dtype}{list(x.shape)} is not allowed when "
                f"jax_allow_f16_reductions=False: cast it to float32 first, or allow it "
                f"(tracer.allow_f16_reductions(True))")
        if op in ("and", "or") and x.dtype == bool:
            return (tnp.all if op == "and" else tnp.any)(x, axis=axes)
        if op in _MONOIDS:
            return _MONOIDS[op](x, axes)
        return _tree([x], [_IDENTITY[op](x.dtype)], lambda a, b: [_BITWISE[op](a[0], b[0])],
                     axes)[0]
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: the {op}-reduction over `axes`, in the operand's dtype."
    return fn


_HALF = (np.dtype(np.float16), BFLOAT16)
_BITWISE = {"and": ew.bitwise_and, "or": ew.bitwise_or, "xor": ew.bitwise_xor}
_IDENTITY = {"and": lambda dt: np.array(-1).astype(dt) if dt != bool else True,
             "or": lambda dt: np.zeros((), dt), "xor": lambda dt: np.zeros((), dt)}
reduce_sum = _reducer("reduce_sum", "add", ew.NUM)
reduce_prod = _reducer("reduce_prod", "mul", ew.NUM)
reduce_max = _reducer("reduce_max", "max", ew.ANY)
reduce_min = _reducer("reduce_min", "min", ew.ANY)
reduce_and = _reducer("reduce_and", "and", ew.INTB)
reduce_or = _reducer("reduce_or", "or", ew.INTB)
reduce_xor = _reducer("reduce_xor", "xor", ew.INTB)

_KNOWN = {ew.add: reduce_sum, tnp.add: reduce_sum, ew.mul: reduce_prod,
          tnp.multiply: reduce_prod, ew.max: reduce_max, tnp.maximum: reduce_max,
          ew.min: reduce_min, tnp.minimum: reduce_min, ew.bitwise_and: reduce_and,
          ew.bitwise_or: reduce_or, ew.bitwise_xor: reduce_xor}


def reduce(operands, init_values, computation, dimensions):
    """jax.lax.reduce: operands (an array or a pytree of arrays) reduced over `dimensions`
    by computation(x, y) starting from init_values (of the same structure)."""
    xs, tree = flatten(operands)
    inits, init_tree = flatten(init_values)
    if init_tree != tree:
        raise ValueError(f"lax.reduce: init_values must have the structure of operands, got "
                         f"{init_tree} and {tree}")
    xs, inits = [tnp.asarray(x) for x in xs], [tnp.asarray(i) for i in inits]
    for x, i in zip(xs, inits):
        if x.dtype != i.dtype or i.ndim or x.shape != xs[0].shape:
            raise TypeError(f"lax.reduce: each operand needs a scalar init value of its "
                            f"dtype, and all operands one shape; got operands "
                            f"{[(o.dtype, o.shape) for o in xs]} and inits "
                            f"{[(v.dtype, v.shape) for v in inits]}")
    axes = _axes("reduce", xs[0], dimensions)
    if len(xs) == 1 and computation in _KNOWN:
        return unflatten(tree, [computation(_KNOWN[computation](xs[0], axes), inits[0])])

    def combine(a, b):
        return flatten(computation(unflatten(tree, a), unflatten(tree, b)))[0]
    return unflatten(tree, _tree(xs, inits, combine, axes))


def _arg(name, pick):
    def fn(operand, axis, index_dtype):
        x = tnp.asarray(operand)
        (axis,) = _axes(name, x, [axis])
        if dtype_kind(np.dtype(index_dtype)) not in "iu":
            raise TypeError(f"lax.{name}: index_dtype must be an integer type, got "
                            f"{index_dtype}")
        return tnp.astype(pick(x, axis=axis), np.dtype(index_dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: index of the first extreme along axis (NaN counts first)."
    return fn


argmax = _arg("argmax", tnp.argmax)
argmin = _arg("argmin", tnp.argmin)


def associative_scan(fn, elems, reverse=False, axis=0):
    """jax.lax.associative_scan: the inclusive scan of an associative fn over a pytree of
    arrays, by the same odd/even recursion as JAX (log depth)."""
    xs, tree = flatten(elems)
    xs = [tnp.asarray(x) for x in xs]
    n = xs[0].shape[axis] if xs and xs[0].ndim else None
    if n is None or any(x.shape[axis] != n for x in xs):
        raise ShapeError(f"lax.associative_scan: every element needs axis {axis} of one "
                         f"length, got shapes {[x.shape for x in xs]}")
    axis = axis_of("associative_scan", axis, xs[0].ndim)

    def combine(a, b):
        return flatten(fn(unflatten(tree, a), unflatten(tree, b)))[0]

    def take(x, start, stop=None, step=1):
        return x[(slice(None),) * axis + (slice(start, stop, step),)]

    def scan(es):
        m = es[0].shape[axis]
        if m < 2:
            return es
        odd = scan(combine([take(e, 0, -1, 2) for e in es], [take(e, 1, None, 2) for e in es]))
        evens = [take(e, 2, None, 2) for e in es]
        even = combine([take(o, 0, -1) for o in odd] if m % 2 == 0 else odd, evens)
        even = [tnp.concatenate([take(e, 0, 1), r], axis=axis) for e, r in zip(es, even)]
        return [_interleave(a, b, axis) for a, b in zip(even, odd)]

    if reverse:
        xs = [rev(x, (axis,)) for x in xs]
    out = scan(xs) if n > 1 else [tnp.copy(x) for x in xs]    # never elems themselves
    return unflatten(tree, [rev(x, (axis,)) for x in out] if reverse else out)


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along axis (a may be one longer than b)."""
    n = a.shape[axis] + b.shape[axis]
    if b.shape[axis] < a.shape[axis]:
        b = tnp.concatenate([b, a[(slice(None),) * axis + (slice(0, 1),)]], axis=axis)
    both = tnp.stack([a, b], axis=axis + 1)
    both = tnp.reshape(both, a.shape[:axis] + (-1,) + a.shape[axis + 1:])
    return both[(slice(None),) * axis + (slice(0, n),)]


def _cumulative(name, combine, kinds, direct=None):
    def fn(operand, axis=0, reverse=False):
        (x,) = ew.same_dtype(name, [operand], kinds)
        if not x.ndim:
            raise ShapeError(f"lax.{name}: needs an array, got a scalar")
        axis = axis_of(name, axis, x.ndim)
        if direct is None:
            return associative_scan(combine, x, reverse=reverse, axis=axis)
        x = rev(x, (axis,)) if reverse else x
        out = direct(x, axis=axis, dtype=x.dtype)
        return rev(out, (axis,)) if reverse else out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: the running {name[3:]} along axis, in the operand's dtype."
    return fn


cumsum = _cumulative("cumsum", None, ew.NUM, tnp.cumsum)
cumprod = _cumulative("cumprod", None, ew.NUM, tnp.cumprod)
cummax = _cumulative("cummax", tnp.maximum, ew.ANY)
cummin = _cumulative("cummin", tnp.minimum, ew.ANY)
cumlogsumexp = _cumulative("cumlogsumexp", tnp.logaddexp, ew.FLOAT)
ufunc_keywords.SCANS.update(cummax=cummax, cummin=cummin)   # maximum.accumulate, ...

__all__ = ["reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
           "reduce_or", "reduce_xor", "argmax", "argmin", "associative_scan", "cumsum",
           "cumprod", "cummax", "cummin", "cumlogsumexp"]
