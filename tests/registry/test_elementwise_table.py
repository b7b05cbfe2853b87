"""The built-in elementwise kernels' backend-independent facts come from one table of
rows (tracer.kernels.elementwise.ELEMENTWISE): shape rule, family, gradient and
differentiability."""

import numpy as np
import pytest

import registry
from ir import DTypeError, ShapedArray
from ir.types import SUPPORTED_DTYPES, dtype_kind
from registry import families
from tracer.kernels import BUILTIN_KERNELS
from tracer.kernels.elementwise import ELEMENTWISE as ROWS


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_each_row_declares_shape_rule_family_gradient_and_differentiability(row):
    assert registry.family(row.name) == "elementwise"
    assert families.differentiable(row.name) == (row.gradient is not None)
    assert registry.gradients().count(row.name) == (row.gradient is not None)
    if row.gradient is not None:
        assert registry.get_gradient(row.name) is row.gradient
    rule = registry.get_shape_rule(row.name)
    for dtype in SUPPORTED_DTYPES:
        operands = [ShapedArray((2, 3), dtype)] * row.arity
        if not row.kinds or dtype_kind(dtype) in row.kinds:
            assert rule(*operands) == ShapedArray((2, 3), row.out or dtype)
        else:
            with pytest.raises(DTypeError, match=f"{row.name}: needs .*{np.dtype(dtype)}"):
                rule(*operands)


def test_rows_name_distinct_kernels_that_every_backend_has():
    names = [r.name for r in ROWS]
    assert len(set(names)) == len(names)
    assert set(names) <= set(BUILTIN_KERNELS)
    for backend in ("numpy", "llvm"):
        assert [k for k in names if not registry.has_kernel(k, backend)] == []
