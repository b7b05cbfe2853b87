"""jax.lax.dot_general, dot and batch_matmul, as one batched matmul: each operand is
transposed to (batch, free, contracting) order and flattened to three dimensions.
Operands of different dtypes promote (as jax.lax's dot_general does); the result has
preferred_element_type when given (the operands are converted to it first, so an int8
product summed as int32 does not wrap). `precision` is accepted and, on CPU, has no
effect: every product is computed at the operands' full precision; so has a
DotAlgorithm or DotAlgorithmPreset (or a preset's name) given as `precision`.
"""
import dataclasses

import numpy as np

from ir.errors import ShapeError, ShapeMismatchError
from tracer import numpy as tnp
from tracer.precision import (DotAlgorithm, DotAlgorithmPreset, Precision,  # noqa: F401
                              check_precision as _check_precision)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """jax.lax.dot_general: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)); the
    result's dimensions are batch, then lhs free, then rhs free."""
    _check_precision(precision)
    a, b = tnp.asarray(lhs), tnp.asarray(rhs)
    (lc, rc), (lb, rb) = [[tuple(int(d) for d in dims) for dims in pair]
                          for pair in dimension_numbers]
    for x, dims in ((a, lc + lb), (b, rc + rb)):
        if any(not 0 <= d < x.ndim for d in dims) or len(set(dims)) != len(dims):
            raise ShapeError(f"lax.dot_general: dimension numbers {dimension_numbers} name "
                             f"repeated or missing dimensions of {a.shape} x {b.shape}")
    for kind, ld, rd in (("lhs batch dimensions and rhs batch dimensions", lb, rb),
                         ("contracting dimensions", lc, rc)):
        ls, rs = tuple(a.shape[d] for d in ld), tuple(b.shape[d] for d in rd)
        if len(ld) == len(rd) and ls != rs:     # JAX's words (a TypeError), then ours
            raise ShapeMismatchError(
                f"dot_general requires {kind} to have the same shape, got {ls} and {rs}. "
                f"lax.dot_general: contracting and batch dimensions must pair up with "
                f"equal sizes, got {a.shape} x {b.shape} with {dimension_numbers}")
    if (len(lc) != len(rc) or len(lb) != len(rb)
            or [a.shape[d] for d in lc + lb] != [b.shape[d] for d in rc + rb]):
        raise ShapeError(f"lax.dot_general: contracting and batch dimensions must pair up with "
                         f"equal sizes, got {a.shape} x {b.shape} with {dimension_numbers}")
    dtype = (np.dtype(preferred_element_type) if preferred_element_type is not None
             else tnp.result_type(a.dtype, b.dtype))
    a, b = tnp.astype(a, dtype), tnp.astype(b, dtype)
    lf = [d for d in range(a.ndim) if d not in lc + lb]
    rf = [d for d in range(b.ndim) if d not in rc + rb]
    batch = tuple(a.shape[d] for d in lb)
    size, k, m, n = (int(np.prod(s)) for s in (batch, [a.shape[d] for d in lc],
                                               [a.shape[d] for d in lf], [b.shape[d] for d in rf]))
    a3 = tnp.reshape(tnp.transpose(a, lb + tuple(lf) + lc), (size, m, k))
    b3 = tnp.reshape(tnp.transpose(b, rb + rc + tuple(rf)), (size, k, n))
    out = tnp.matmul(a3, b3)
    return tnp.reshape(out, batch + tuple(a.shape[d] for d in lf) + tuple(b.shape[d] for d in rf))


def dot(lhs, rhs, precision=None, preferred_element_type=None, out_sharding=None):
    """jax.lax.dot: vector . vector, matrix . vector or matrix . matrix."""
    a, b = tnp.asarray(lhs), tnp.asarray(rhs)
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        raise ShapeError(f"lax.dot: takes vectors and matrices, got {a.shape} . {b.shape}; use "
                         f"lax.dot_general for other ranks")
    return dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """jax.lax.batch_matmul: matmul over equal leading batch dimensions."""
    a, b = tnp.asarray(lhs), tnp.asarray(rhs)
    if a.ndim != b.ndim or a.ndim < 2 or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"lax.batch_matmul: needs operands of one rank >= 2 with equal batch "
                         f"dimensions, got {a.shape} and {b.shape}")
    n = a.ndim
    return dot_general(a, b, (((n - 1,), (n - 2,)), (tuple(range(n - 2)),) * 2), precision)


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """jax.lax.RaggedDotDimensionNumbers: dot dimension numbers, the lhs ragged dimension
    and the rhs group dimensions of a ragged_dot_general."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        set_ = super().__setattr__
        set_("dot_dimension_numbers",
             tuple(tuple(tuple(int(d) for d in dims) for dims in t) for t in dot_dimension_numbers))
        set_("lhs_ragged_dimensions", tuple(int(d) for d in lhs_ragged_dimensions))
        set_("rhs_group_dimensions", tuple(int(d) for d in rhs_group_dimensions))


_BASIC_RAGGED = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """jax.lax.ragged_dot: (m, k) x (g, k, n) -> (m, n), consecutive rows of lhs in groups
    of group_sizes, each multiplied by its group's matrix (rows past the groups give 0)."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_RAGGED, precision,
                              preferred_element_type, group_offset)


def _ragged_error(message):
    return ShapeMismatchError(f"ragged_dot_general {message}")


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """jax.lax.ragged_dot_general with a ragged non-contracting lhs dimension (rhs has one
    group dimension) or a ragged contracting one (the result gains a leading group
    dimension). Each group's slice is selected by a mask, so one batched dot_general over
    the groups computes all of them, and gradients and batching are dot_general's."""
    _check_precision(precision)
    if group_offset is not None:
        raise NotImplementedError("lax.ragged_dot_general: group_offset is not supported "
                                  "(as in jax.lax); slice group_sizes instead")
    a, b, sizes = tnp.asarray(lhs), tnp.asarray(rhs), tnp.asarray(group_sizes)
    dn = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    if len(dn.lhs_ragged_dimensions) != 1:
        raise _ragged_error(f"expects exactly one lhs ragged dimension, got "
                            f"{list(dn.lhs_ragged_dimensions)}")
    (r,) = dn.lhs_ragged_dimensions
    if not 0 <= r < a.ndim:
        raise _ragged_error(f"requires lhs ragged dimension numbers to be nonnegative and "
                            f"less than the number of axes of the lhs, got {r} for {a.shape}")
    groups = dn.rhs_group_dimensions
    if set(groups) & set(rc + rb):
        raise _ragged_error("requires rhs group dimension numbers to be distinct from "
                            "contracting and batch dimensions")
    contracting = r in lc
    if (contracting or r in lb) and groups:
        raise _ragged_error("requires zero group dimensions in the rhs when lhs ragged "
                            "dimension is contracting or batch")
    if not contracting and r not in lb and len(groups) != 1:
        raise _ragged_error("requires exactly one rhs group dimension when lhs ragged "
                            "dimension is noncontracting")
    g = sizes.shape[-1] if sizes.ndim else None
    if r in lb:                                  # [x..., g]: the batch dimensions before r
        outer = tuple(d for d in lb if d < r)
    else:                                        # [b..., x..., g]: x of r's kind, before r
        kind = lc if contracting else [d for d in range(a.ndim) if d not in lc + lb]
        outer = lb + tuple(d for d in kind if d < r)
    if sizes.shape not in {tuple(a.shape[d] for d in outer) + (g,), (g,)}:
        raise _ragged_error(f"expected group_sizes to have shape "
                            f"{tuple(a.shape[d] for d in outer) + (g,)}, got {sizes.shape}")
    if r in lb:
        raise NotImplementedError("lax.ragged_dot_general: a ragged batch dimension is not "
                                  "supported; ragged non-contracting and contracting are")
    if not contracting and b.shape[groups[0]] != g:
        raise _ragged_error(f"expected rhs group dimension size to be {g}, got "
                            f"{b.shape[groups[0]]}")
    dims = (outer if sizes.ndim > 1 else ()) + (r,)      # the lhs dimensions the mask spans
    ends = tnp.cumsum(sizes, axis=-1)[..., None]
    pos = tnp.arange(a.shape[r], dtype=sizes.dtype)
    mask = tnp.moveaxis((ends - sizes[..., None] <= pos) & (pos < ends), -2, 0)
    order = sorted(range(len(dims)), key=dims.__getitem__)
    mask = tnp.reshape(tnp.transpose(mask, (0,) + tuple(i + 1 for i in order)),
                       (g,) + tuple(a.shape[d] if d in dims else 1 for d in range(a.ndim)))
    masked = tnp.where(mask, a[None], tnp.zeros((), a.dtype))
    shift = tuple(d + 1 for d in lc), tuple(d + 1 for d in lb)
    if contracting:                                # groups are a free dimension of lhs
        out = dot_general(masked, b, ((shift[0], rc), (shift[1], rb)), precision,
                          preferred_element_type)
        return tnp.moveaxis(out, len(lb), 0)
    out = dot_general(masked, b, ((shift[0], rc), ((0,) + shift[1], groups + rb)),
                      precision, preferred_element_type)
    return tnp.sum(out, axis=0)


__all__ = ["Precision", "DotAlgorithm", "DotAlgorithmPreset", "dot_general", "dot", "batch_matmul",
           "RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]
