"""Every name of the NumPy coverage list (shared/numpy-coverage.md, copied here so the
suite runs without it) exists in tracer.numpy or tracer.numpy.linalg."""
import pytest

import tracer.numpy as tnp

COVERAGE = {
    "Elementwise": """
        add subtract multiply divide true_divide floor_divide mod remainder fmod
        divmod power float_power negative positive reciprocal abs absolute fabs sign
        exp exp2 expm1 log log2 log10 log1p logaddexp logaddexp2 sqrt cbrt square
        sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh
        arctanh hypot deg2rad rad2deg degrees radians floor ceil trunc rint round
        around fix clip maximum minimum fmax fmin sinc heaviside copysign isnan
        isinf isfinite isposinf isneginf signbit nan_to_num real imag conj conjugate
        logical_and logical_or logical_not logical_xor bitwise_and bitwise_or
        bitwise_xor bitwise_not invert left_shift right_shift greater greater_equal
        less less_equal equal not_equal where select isclose allclose array_equal""".split(),
    "Reductions and scans": """
        sum prod mean average var std max min amax amin ptp argmax argmin all any
        count_nonzero cumsum cumprod nansum nanprod nanmean nanvar nanstd nanmax
        nanmin nanargmax nanargmin median percentile quantile nanmedian trace diff
        ediff1d gradient""".split(),
    "Shapes, assembly, indexing": """
        reshape ravel transpose swapaxes moveaxis rollaxis expand_dims squeeze
        broadcast_to broadcast_arrays broadcast_shapes atleast_1d atleast_2d
        atleast_3d concatenate stack vstack hstack dstack column_stack row_stack
        block split array_split hsplit vsplit dsplit tile repeat flip fliplr flipud
        rot90 roll pad take take_along_axis diagonal diag diagflat tril triu tri
        tril_indices triu_indices diag_indices indices meshgrid ix_ r_ c_ append
        insert delete nonzero flatnonzero argwhere unique searchsorted sort argsort
        lexsort partition argpartition""".split(),
    "Creation and dtypes": """
        array asarray copy zeros ones full empty zeros_like ones_like full_like
        empty_like arange linspace logspace geomspace eye identity bool_ int8 int16
        int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64
        dtype result_type promote_types can_cast finfo iinfo issubdtype ndim shape
        size pi e inf nan newaxis""".split(),
    "Products": """
        dot vdot inner outer matmul tensordot einsum kron cross""".split(),
    "tracer.numpy.linalg": """
        norm solve inv det slogdet cholesky qr svd eigh eigvalsh pinv matrix_power
        lstsq multi_dot""".split(),
}


@pytest.mark.parametrize("section", sorted(COVERAGE))
def test_every_listed_name_exists(section):
    namespace = tnp.linalg if "linalg" in section else tnp
    assert sorted(n for n in COVERAGE[section] if not hasattr(namespace, n)) == []
