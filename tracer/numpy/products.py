"""Products: matmul dot outer vdot inner tensordot einsum kron cross. matmul and dot are
built on one batched `matmul` kernel ((..., m, k) @ (..., k, n), equal batch dims: vectors
are reshaped, batch dims broadcast; a stack of matrices times one matrix is one product of
the stack's rows, so neither the matrix is copied per batch nor its gradient summed over
copies); vdot, inner and tensordot are einsums.

einsum plans its contraction (no loop over elements): repeated letters in one operand
take a diagonal (a strided slice of the flattened axis pair), letters no longer needed
are summed as early as possible, and operands are contracted pairwise, left to right, as
one batched matmul each: (batch, free_a, summed) @ (batch, summed, free_b) -- or, when
one side has no free letters (dot, matrix-vector, elementwise), as a broadcast multiply
and reduce_sum, which fuse into one loop (a 1e6-element dot: 0.09 ms; through the matmul
kernel, 21 ms). Gradients come from those kernels. NumPy's result dtype is kept (integer sums do not widen; bool
products are an OR of ANDs).
"""
import math
import operator
import string

import numpy as np

from ir.errors import ArgumentError, ShapeError, ShapeMismatchError
from ir.types import dtype_kind
from tracer.core import innermost_trace, run_kernel
from tracer.numpy._base import (broadcast, broadcast_shapes, convert, dtype_of, no_out,
                                result_dtype, shape, value)
from tracer.numpy.elementwise import multiply, not_equal, subtract
from tracer.numpy.reductions import computation, sum
from tracer.numpy.shape_ops import ravel, reshape, stack, transpose
from tracer.precision import check_precision


def _operands(op, a, b):
    a, b = value(a, op), value(b, op)
    dt = result_dtype(op, a, b)
    if len(shape(a)) == 0 or len(shape(b)) == 0:
        raise ShapeError(f"{op}: operands must not be 0-d (shapes {shape(a)}, {shape(b)}); "
                         f"use multiply for scalars")
    return convert(a, dt, op), convert(b, dt, op)


def _jax_keywords(op, operands, precision, preferred_element_type):
    """JAX's keywords of a product: `precision` is checked (every CPU product is at the
    operands' full precision); `preferred_element_type` converts the operands first, so
    the product is computed and returned in it (int8 summed as int32 does not wrap)."""
    if precision is not None:        # matmul is traced for every `@`: nothing to check
        check_precision(precision)
    if preferred_element_type is None:
        return operands
    dt = np.dtype(preferred_element_type)
    return [convert(value(x, op), dt, op) for x in operands]


def matmul(a, b, *, precision=None, preferred_element_type=None):
    a, b = _jax_keywords("matmul", (a, b), precision, preferred_element_type)
    a, b = _operands("matmul", a, b)
    if dtype_kind(dtype_of(a)) == "b":     # NumPy: the OR of ANDs, i.e. a nonzero integer product
        return not_equal(matmul(convert(a, np.int64), convert(b, np.int64)), 0)
    if computation(dtype_of(a)) != dtype_of(a):      # half floats: one rounding, at the end
        wide = computation(dtype_of(a))
        return convert(matmul(convert(a, wide), convert(b, wide)), dtype_of(a))
    sa, sb = shape(a), shape(b)
    a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
    if shape(a2)[-1] != shape(b2)[-2]:
        raise ShapeMismatchError(f"dot_general requires contracting dimensions to have the "
                                 f"same shape, got {(shape(a2)[-1],)} and {(shape(b2)[-2],)}. "
                                 f"matmul: shapes {sa} and {sb} are not aligned: {shape(a2)[-1]} "
                         f"(dim -1 of a) != {shape(b2)[-2]} (dim -2 of b)")
    if len(shape(a2)) > 2 and len(shape(b2)) == 2:     # (..., m, k) @ (k, n): one matrix
        rows = math.prod(shape(a2)[:-1])
        out = run_kernel("matmul", [reshape(a2, (rows, shape(a2)[-1])), b2])
        return reshape(out, shape(a2)[:-1] + shape(b2)[-1:] if len(sb) > 1 else shape(a2)[:-1])
    batch = broadcast_shapes("matmul", shape(a2)[:-2], shape(b2)[:-2])
    trace = innermost_trace([a2, b2])
    a2 = broadcast(a2, batch + shape(a2)[-2:], trace)
    b2 = broadcast(b2, batch + shape(b2)[-2:], trace)
    out = run_kernel("matmul", [a2, b2])
    final = batch + (sa[-2:-1] if len(sa) > 1 else ()) + (sb[-1:] if len(sb) > 1 else ())
    return reshape(out, final)


def dot(a, b, out=None, *, precision=None, preferred_element_type=None):
    """numpy.dot: inner product of vectors, matmul of matrices, for N-D a sum over the
    last axis of a and the second-to-last of b, and a product when one is 0-d (where,
    unlike in ufuncs, a Python scalar counts as a strong array)."""
    no_out("dot", out)
    a, b = _jax_keywords("dot", (a, b), precision, preferred_element_type)
    if len(shape(value(a, "dot"))) == 0 or len(shape(value(b, "dot"))) == 0:
        from tracer.numpy.creation import asarray
        return multiply(asarray(a), asarray(b))
    a, b = _operands("dot", a, b)
    sa, sb = shape(a), shape(b)
    if len(sb) <= 2:
        return matmul(a, b)
    k = sb[-2]
    if sa[-1] != k:
        raise ShapeMismatchError(f"dot_general requires contracting dimensions to have the "
                                 f"same shape, got {(sa[-1],)} and {(k,)}. dot: shapes {sa} "
                                 f"and {sb} not aligned: {sa[-1]} != {k}")
    bm = transpose(b, (len(sb) - 2,) + tuple(range(len(sb) - 2)) + (len(sb) - 1,))
    out = matmul(reshape(a, (-1, k)), reshape(bm, (k, -1)))
    return reshape(out, sa[:-1] + sb[:-2] + sb[-1:])


def outer(a, b, out=None):
    no_out("outer", out)
    return matmul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def _common(op, xs):
    xs = [value(x, op) for x in xs]
    dt = result_dtype(op, *xs)
    return [convert(x, dt, op) for x in xs], dt


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays."""
    a, b = _jax_keywords("vdot", (a, b), precision, preferred_element_type)
    (a, b), _ = _common("vdot", [a, b])
    if math.prod(shape(a)) != math.prod(shape(b)):
        raise ShapeError(f"vdot: operands have {math.prod(shape(a))} and "
                         f"{math.prod(shape(b))} elements; they must have the same size")
    return einsum("i,i", ravel(a), ravel(b))


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sum over the last axes (a product when either is 0-d)."""
    a, b = _jax_keywords("inner", (a, b), precision, preferred_element_type)
    (a, b), _ = _common("inner", [a, b])
    if not shape(a) or not shape(b):
        return multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def _axes_pair(axes, na, nb):
    if isinstance(axes, (int, np.integer)):
        if not 0 <= axes <= min(na, nb):
            raise ShapeError(f"tensordot: axes={axes} out of range for ranks {na}, {nb}")
        return list(range(na - axes, na)), list(range(axes))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise ArgumentError(f"tensordot: axes must be an int or a pair of axis sequences, "
                            f"got {axes!r}") from None
    xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
    xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
    if len(xa) != len(xb):
        raise ShapeError(f"tensordot: axes {axes!r} pair {len(xa)} axes with {len(xb)}")
    for ax, n in ((xa, na), (xb, nb)):
        if any(not -n <= i < n for i in ax):
            raise ShapeError(f"tensordot: axes {axes!r} out of range for ranks {na}, {nb}")
    return [i % na for i in xa], [i % nb for i in xb]


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum over axes[0] of a against axes[1] of b, as the einsum that says so."""
    a, b = _jax_keywords("tensordot", (a, b), precision, preferred_element_type)
    (a, b), _ = _common("tensordot", [a, b])
    sa, sb = shape(a), shape(b)
    xa, xb = _axes_pair(axes, len(sa), len(sb))
    if [sa[i] for i in xa] != [sb[i] for i in xb]:
        raise ShapeError(f"tensordot: shape-mismatch for sum: {sa} axes {xa} vs {sb} axes {xb}")
    if len(sa) + len(sb) > len(string.ascii_letters):
        raise ShapeError(f"tensordot: ranks {len(sa)} + {len(sb)} exceed the 52 axes einsum "
                         f"can name")
    la = string.ascii_letters[:len(sa)]
    spare = iter(string.ascii_letters[len(sa):])
    lb = "".join(la[xa[xb.index(i)]] if i in xb else next(spare) for i in range(len(sb)))
    out = "".join(c for i, c in enumerate(la) if i not in xa) + \
        "".join(c for i, c in enumerate(lb) if i not in xb)
    return einsum(f"{la},{lb}->{out}", a, b)


def kron(a, b):
    """Kronecker product: a's blocks scaled copies of b."""
    (a, b), _ = _common("kron", [a, b])
    nd = max(len(shape(a)), len(shape(b)))
    sa, sb = (1,) * (nd - len(shape(a))) + shape(a), (1,) * (nd - len(shape(b))) + shape(b)
    out = multiply(reshape(a, tuple(d for s in sa for d in (s, 1))),
                   reshape(b, tuple(d for s in sb for d in (1, s))))
    return reshape(out, tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (2-vectors have z = 0; two 2-vectors give the z only)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    (a, b), dt = _common("cross", [a, b])
    comps = []
    for x, ax in ((a, axisa), (b, axisb)):
        n = len(shape(x))
        if n == 0 or not -n <= ax < n or shape(x)[ax] not in (2, 3):
            raise ShapeError(f"cross: incompatible vector dimension for shape {shape(x)} "
                             f"and axis {ax} (must be 2 or 3)")
        perm = [i for i in range(n) if i != ax % n] + [ax % n]
        x = transpose(x, perm)
        comps.append([x[..., i] for i in range(shape(x)[-1])])
    (a0, a1, *a2), (b0, b1, *b2) = comps
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if not a2 and not b2:
        return z
    a2, b2 = (a2 or [np.zeros((), dt)])[0], (b2 or [np.zeros((), dt)])[0]
    x = subtract(multiply(a1, b2), multiply(a2, b1))
    y = subtract(multiply(a2, b0), multiply(a0, b2))
    x, y, z = _broadcast_all([x, y, z])
    out = stack([x, y, z], axis=-1)
    n = len(shape(out))
    if not -n <= axisc < n:
        raise ShapeError(f"cross: axisc {axisc} out of range for result rank {n}")
    perm = list(range(n - 1))
    perm.insert(axisc % n, n - 1)
    return transpose(out, perm)


def _broadcast_all(xs):
    shp = broadcast_shapes("cross", *[shape(x) for x in xs])
    return [broadcast(x, shp) for x in xs]


# ---- einsum ------------------------------------------------------------------------------
def _parse(subscripts, operands):
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, out = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ArgumentError(f"einsum: {subscripts!r} names {len(terms)} operands but "
                            f"{len(operands)} were given")
    used = set(subscripts) & set(string.ascii_letters)
    spare = [c for c in string.ascii_letters if c not in used]
    ell_rank = max((len(shape(x)) - len(t.replace("...", "")) for t, x in zip(terms, operands)
                    if "..." in t), default=0)
    ell = "".join(spare[:ell_rank])
    letters = []
    for t, x in zip(terms, operands):
        n = len(shape(x)) - len(t.replace("...", ""))
        t = t.replace("...", ell[ell_rank - n:] if n else "")
        if len(t) != len(shape(x)) or not all(c in string.ascii_letters for c in t):
            raise ShapeError(f"einsum: subscripts {t!r} do not match operand shape {shape(x)}")
        letters.append(t)
    if arrow:
        out = out.replace("...", ell)
    else:
        counts = {c: "".join(letters).count(c) for c in "".join(letters)}
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    if len(set(out)) != len(out) or any(c not in "".join(letters) for c in out):
        raise ShapeError(f"einsum: output subscripts {out!r} repeat a letter or name one "
                         f"that no operand has")
    return letters, out


def _diagonal(x, t):
    """Take the diagonal over every letter repeated within one operand's subscripts."""
    while len(set(t)) < len(t):
        c = next(c for c in t if t.count(c) > 1)
        i, j = t.index(c), t.index(c, t.index(c) + 1)
        n = shape(x)[i]
        if shape(x)[j] != n:
            raise ShapeError(f"einsum: letter {c!r} has sizes {n} and {shape(x)[j]}")
        rest = [k for k in range(len(t)) if k not in (i, j)]
        x = reshape(transpose(x, rest + [i, j]), tuple(shape(x)[k] for k in rest) + (n * n,))
        x = x[..., ::n + 1]
        t = "".join(t[k] for k in rest) + c
    return x, t


def _sum_unneeded(x, t, keep, dt):
    axes = tuple(i for i, c in enumerate(t) if c not in keep)
    if not axes:
        return x, t
    return sum(x, axis=axes, dtype=dt), "".join(c for c in t if c in keep)


def _aligned(x, t, order, sizes):
    """x (letters t) transposed to `order` with size-1 axes for the letters it lacks."""
    x = transpose(x, [t.index(c) for c in order if c in t])
    return reshape(x, tuple(sizes[c] if c in t else 1 for c in order))


def _contract(a, ta, b, tb, keep, sizes, dt):
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]
    if not fa or not fb:
        # a dot, matrix-vector or elementwise product: multiply and sum (they fuse into
        # one loop), where the matmul kernel would run a degenerate 1-row/column product
        order = batch + fa + fb + summed
        out = multiply(_aligned(a, ta, order, sizes), _aligned(b, tb, order, sizes))
        if summed:
            out = sum(out, axis=tuple(range(len(order) - len(summed), len(order))), dtype=dt)
        return out, "".join(batch + fa + fb)
    dims = lambda cs: tuple(sizes[c] for c in cs)        # noqa: E731
    prod = lambda cs: math.prod(dims(cs))                # noqa: E731
    a2 = reshape(transpose(a, [ta.index(c) for c in batch + fa + summed]),
                 (prod(batch), prod(fa), prod(summed)))
    b2 = reshape(transpose(b, [tb.index(c) for c in batch + summed + fb]),
                 (prod(batch), prod(summed), prod(fb)))
    return reshape(matmul(a2, b2), dims(batch + fa + fb)), "".join(batch + fa + fb)


_LABELS = string.ascii_uppercase + string.ascii_lowercase     # ordered as the ints, as NumPy


def _from_sublists(args):
    """(subscripts, operands) of NumPy's sublist form einsum(a, [0, 1], b, [1, 2], [0, 2]):
    axis labels are ints in [0, 52) or Ellipsis; an odd last argument is the output."""
    def letters(sub):
        try:
            return "".join("..." if k is Ellipsis else _LABELS[operator.index(k)]
                           for k in sub)
        except (TypeError, IndexError):
            raise ArgumentError(f"einsum: a sublist holds ints in [0, 52) or Ellipsis, got "
                                f"{sub!r}") from None
    ops, subs = args[0:len(args) - len(args) % 2:2], args[1::2]
    out = "->" + letters(args[-1]) if len(args) % 2 else ""
    return ",".join(letters(t) for t in subs) + out, ops


def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
           optimize=False, precision=None, preferred_element_type=None):
    """Einstein summation with NumPy's subscripts (explicit '->', implicit output and
    '...'); the contraction is planned onto transpose/reshape/matmul/reduce_sum."""
    if out is not None:
        raise ArgumentError("einsum: out= is not supported; use the returned value")
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + operands)
    operands = _jax_keywords("einsum", operands, precision, preferred_element_type)
    xs, dt = _common("einsum", operands)
    if dtype is not None:
        dt = np.dtype(dtype)
        xs = [convert(x, dt, "einsum") for x in xs]
    letters, final = _parse(subscripts, xs)
    as_bool, result = dtype_kind(dt) == "b", dt
    if as_bool or computation(dt) != dt:      # half floats: summed in float32, rounded once
        dt = np.dtype(np.int64) if as_bool else computation(dt)
        xs = [convert(x, dt, "einsum") for x in xs]
    sizes = {}
    for x, t in zip(xs, letters):
        for c, d in zip(t, shape(x)):
            if sizes.setdefault(c, d) != d:
                raise ShapeError(f"einsum: letter {c!r} has sizes {sizes[c]} and {d} "
                                 f"(operands {[shape(x) for x in xs]})")
    ops = [_diagonal(x, t) for x, t in zip(xs, letters)]
    for k in range(len(ops)):
        others = set(final).union(*[set(t) for j, (_, t) in enumerate(ops) if j != k])
        ops[k] = _sum_unneeded(*ops[k], others, dt)
    acc, ta = ops[0]
    for k in range(1, len(ops)):
        b, tb = ops[k]
        keep = set(final).union(*[set(t) for _, t in ops[k + 1:]])
        acc, ta = _sum_unneeded(acc, ta, keep | set(tb), dt)
        acc, ta = _contract(acc, ta, b, tb, keep, sizes, dt)
    acc, ta = _sum_unneeded(acc, ta, set(final), dt)
    acc = transpose(acc, [ta.index(c) for c in final]) if ta != final else acc
    return not_equal(acc, 0) if as_bool else convert(acc, result, "einsum")
