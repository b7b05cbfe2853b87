"""lax.conv_general_dilated of bool operands, as XLA's: each output is the or of the ands
of its window (no gradient: bool values are not differentiated), eagerly, jitted on
both backends and under vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(4)
X, W = RNG.random((2, 3, 6, 5)) > 0.6, RNG.random((4, 3, 3, 2)) > 0.6


def direct(x, w):
    out = np.zeros((x.shape[0], w.shape[0], 4, 4), bool)          # VALID, stride 1
    for n, o, i, j in np.ndindex(out.shape):
        out[n, o, i, j] = np.any(x[n, :, i:i + 3, j:j + 2] & w[o])
    return out


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_bool_conv_is_or_of_ands(backend):
    f = lambda x, w: lax.conv(x, w, (1, 1), "VALID")
    out = (f if backend is None else tracer.jit(f, backend=backend))(X, W)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, direct(X, W))


def test_vmap():
    out = tracer.vmap(lambda x: lax.conv(x, W, (1, 1), "VALID"))(X[:, None])
    np.testing.assert_array_equal(out[:, 0], direct(X, W))
