"""The llvm convolution of an input with an empty spatial dimension dilated (lhs_dilation
> 1) and padded is all zeros, as the interpreter's: the dilated extent of 0 elements is
0, not (0 - 1) * d + 1 = -1, which as an unsigned bound let every padded position read
outside the input."""
import numpy as np
import pytest

import tracer
from tracer import lax


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_empty_dilated_input_gives_zeros(dtype):
    x, w = np.ones((1, 1, 4, 0), dtype), np.ones((1, 1, 2, 2), dtype)
    f = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (2, 2)), (1, 2))
    out = tracer.jit(f, backend="llvm")(x, w)
    np.testing.assert_array_equal(out, np.zeros((1, 1, 5, 3), dtype))
    np.testing.assert_array_equal(out, tracer.jit(f, backend="numpy")(x, w))
