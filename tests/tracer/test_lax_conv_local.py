"""lax.conv_general_dilated_local (a kernel of its own at each output position) against a
direct loop, eagerly, under jit on both backends, in another layout, under grad and
vmap, and its errors."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(2)
X = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)           # NCHW
FILTER, STRIDES, PADS, DIL = (2, 3), (2, 1), ((1, 0), (0, 2)), (1, 2)
OUT = (3, 3)                                                         # output H, W
W = RNG.standard_normal((4, 3 * 6) + OUT).astype(np.float32)        # O, I = C*kh*kw, H, W


def direct(x, w):
    xp = np.pad(x, ((0, 0), (0, 0)) + PADS)
    (kh, kw), (sh, sw), (dh, dw) = FILTER, STRIDES, DIL
    out = np.zeros((x.shape[0], w.shape[0]) + OUT, np.float64)
    for y, z, c, a, b in np.ndindex(*OUT, x.shape[1], kh, kw):
        patch = xp[:, c, y * sh + a * dh, z * sw + b * dw]               # (N,)
        out[:, :, y, z] += patch[:, None] * w[:, c * kh * kw + a * kw + b, y, z][None]
    return out


def local(x, w):
    return lax.conv_general_dilated_local(x, w, STRIDES, PADS, FILTER, rhs_dilation=DIL)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_local_matches_the_direct_loop(backend):
    run = local if backend is None else tracer.jit(local, backend=backend)
    np.testing.assert_allclose(run(X, W), direct(X, W), rtol=1e-5, atol=1e-5)


def test_channels_last_layout():
    out = lax.conv_general_dilated_local(
        np.transpose(X, (0, 2, 3, 1)), np.transpose(W, (2, 3, 1, 0)), STRIDES, PADS, FILTER,
        rhs_dilation=DIL, dimension_numbers=("NHWC", "HWIO", "NHWC"),
        precision=(lax.Precision.DEFAULT, lax.Precision.HIGHEST))
    np.testing.assert_allclose(out, np.transpose(direct(X, W), (0, 2, 3, 1)), rtol=1e-5,
                               atol=1e-5)


def test_grad_and_vmap():
    x, w = X[:1, :2].astype(np.float64), W[:2, :12].astype(np.float64)
    tracer.check_grads(local, (x, w), order=1)
    out = tracer.vmap(local, in_axes=(None, 0))(X, np.stack([W, 2 * W]))
    np.testing.assert_allclose(out[1], 2 * direct(X, W), rtol=1e-5, atol=1e-5)


def test_errors_name_the_op():
    with pytest.raises(ValueError, match="conv_general_dilated_local.*input features"):
        local(X, W[:, :5])
    with pytest.raises(ValueError, match="unsupported precision"):
        lax.conv_general_dilated_local(X, W, STRIDES, PADS, FILTER, rhs_dilation=DIL,
                                       precision="F32_F32_F32")
