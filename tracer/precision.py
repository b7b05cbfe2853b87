"""jax.lax's precision of a product (Precision, DotAlgorithm, DotAlgorithmPreset), shared
by tracer.lax's dots and convolutions and tracer.numpy's products. On CPU every product
is computed at its operands' full precision, so a precision is checked, never acted on."""
import enum
from typing import Any, NamedTuple


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


def check_precision(precision):
    """Accept what jax.lax takes as `precision` (None, a Precision or its name, a pair of
    them, a DotAlgorithm or DotAlgorithmPreset or a preset's name); anything else is a
    ValueError naming the value."""
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)) or (
            isinstance(precision, str) and precision in DotAlgorithmPreset.__members__):
        return
    for p in precision if isinstance(precision, (tuple, list)) else [precision]:
        if p is not None and not isinstance(p, Precision):
            Precision(p)                            # raises ValueError naming a bad value
