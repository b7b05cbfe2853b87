"""jax.lax.dot_general, dot and batch_matmul, as one batched matmul: each operand is
transposed to (batch, free, contracting) order and flattened to three dimensions.
Operands of different dtypes promote (as jax.lax's dot_general does); the result has
preferred_element_type when given (the operands are converted to it first, so an int8
product summed as int32 does not wrap). `precision` is accepted and, on CPU, has no
effect: every product is computed at the operands' full precision; so has a
DotAlgorithm or DotAlgorithmPreset (or a preset's name) given as `precision`.
"""
import enum
from typing import NamedTuple, Any

import numpy as np

from ir.errors import ShapeError
from tracer import numpy as tnp


class Precision(enum.Enum):
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "bfloat16": cls.DEFAULT, "high": cls.HIGH,
                 "tensorfloat32": cls.HIGH, "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        return names.get(str(value).lower())


class DotAlgorithm(NamedTuple):
    """jax.lax.DotAlgorithm: the operand and accumulation types a dot may use."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


DotAlgorithmPreset = enum.Enum("DotAlgorithmPreset", [
    "DEFAULT", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"])
DotAlgorithmPreset.__doc__ = "jax.lax.DotAlgorithmPreset: named dot algorithms."


def _check_precision(precision):
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)) or (
            isinstance(precision, str) and precision in DotAlgorithmPreset.__members__):
        return
    for p in precision if isinstance(precision, (tuple, list)) else [precision]:
        if p is not None and not isinstance(p, Precision):
            Precision(p)                            # raises ValueError naming a bad value


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


__all__ = ["Precision", "DotAlgorithm", "DotAlgorithmPreset", "dot_general", "dot", "batch_matmul"]
