"""String padding where JAX takes it: conv_general_dilated refuses a padding type with an
lhs dilation (a transposed convolution: its 'SAME' is undefined) with JAX's ValueError;
conv_transpose gives the transposed-convolution padding for exactly 'SAME' and 'VALID'
(jax 0.10.2's test) and passes any other padding type to conv_general_dilated, so 'same'
or 'SAME_LOWER' with unit strides is the ordinary padding type and with strides > 1 the
ValueError."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(11)
X = RNG.standard_normal((1, 5, 2)).astype(np.float32)      # NWC
W = RNG.standard_normal((4, 2, 3)).astype(np.float32)      # WIO, kernel 4


def runs(f):
    return [f] + [tracer.jit(f, backend=b) for b in ("numpy", "llvm")]


@pytest.mark.parametrize("padding", ["SAME", "VALID", "same", "SAME_LOWER"])
def test_padding_type_with_lhs_dilation_is_jaxs_value_error(padding):
    x, w = np.moveaxis(X, -1, 1), np.moveaxis(W, (0, 1, 2), (2, 1, 0))    # NCW, OIW
    for run in runs(lambda x, w: lax.conv_general_dilated(x, w, (1,), padding,
                                                          lhs_dilation=(2,))):
        with pytest.raises(ValueError, match="conv_general_dilated: string padding"):
            run(x, w)


@pytest.mark.parametrize("padding, pads", [("same", [(1, 2)]), ("SAME_LOWER", [(2, 1)]),
                                           ("valid", [(0, 0)]), ("SAME", [(2, 1)])])
def test_conv_transpose_unit_strides(padding, pads):
    """k = 4, stride 1: 'SAME' is the transpose's (ceil(3 / 2), 1); the other spellings are
    padtype_to_pads' (1, 2) / (2, 1) / none, as JAX's."""
    want = lax.conv_transpose(X, W, (1,), pads)
    for run in runs(lambda x, w: lax.conv_transpose(x, w, (1,), padding)):
        np.testing.assert_allclose(run(X, W), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("padding", ["same", "valid", "SAME_LOWER"])
def test_conv_transpose_other_spellings_with_strides_are_value_errors(padding):
    with pytest.raises(ValueError, match="string padding"):
        lax.conv_transpose(X, W, (2,), padding)


def test_a_0d_convolution_takes_string_padding():
    """No spatial axes, so no lhs dilation: 'SAME' and 'VALID' are fine (a dot, as jax's
    testConv0DIsDot and testConvTranspose0D*)."""
    x, w = np.ones((2, 3), np.float32), np.arange(12, dtype=np.float32).reshape(4, 3)
    for padding in ("SAME", "VALID"):
        np.testing.assert_allclose(lax.conv_general_dilated(x, w, (), padding), x @ w.T)
        np.testing.assert_allclose(lax.conv_transpose(x, w.T, (), padding,
                                                      dimension_numbers=("NC", "IO", "NC")),
                                   x @ w.T)
