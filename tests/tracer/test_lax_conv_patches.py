"""lax.conv_general_dilated_patches against an explicit im2col loop (JAX's layout: feature
index = channel * filter size + the filter position), eagerly, under jit on both
backends, under grad and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(1)
X = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)          # NCHW
FILTER, STRIDES, PADS, DIL = (2, 3), (2, 1), ((1, 0), (0, 2)), (1, 2)


def im2col(x):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0)) + PADS)
    kh, kw = FILTER
    oh = (xp.shape[2] - (kh - 1) * DIL[0] - 1) // STRIDES[0] + 1
    ow = (xp.shape[3] - (kw - 1) * DIL[1] - 1) // STRIDES[1] + 1
    out = np.zeros((n, c * kh * kw, oh, ow), x.dtype)
    for ch in range(c):
        for a in range(kh):
            for b in range(kw):
                out[:, ch * kh * kw + a * kw + b] = xp[:, ch, a * DIL[0]::STRIDES[0],
                                                       b * DIL[1]::STRIDES[1]][:, :oh, :ow]
    return out


def patches(x):
    return lax.conv_general_dilated_patches(x, FILTER, STRIDES, PADS, rhs_dilation=DIL)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_patches_match_im2col(backend):
    run = patches if backend is None else tracer.jit(patches, backend=backend)
    np.testing.assert_array_equal(run(X), im2col(X))


def test_patches_in_channels_last_layout():
    out = lax.conv_general_dilated_patches(np.transpose(X, (0, 2, 3, 1)), FILTER, STRIDES,
                                           PADS, rhs_dilation=DIL,
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_array_equal(out, np.transpose(im2col(X), (0, 2, 3, 1)))


def test_patches_grad_and_vmap():
    cot = RNG.standard_normal(im2col(X).shape).astype(np.float32)
    g = tracer.grad(lambda x: (patches(x) * cot).sum())(X)
    # the transpose of im2col: each input position sums the cotangents of its copies
    eps, want = np.zeros_like(X), np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        eps[idx] = 1
        want[idx] = (im2col(eps) * cot).sum()
        eps[idx] = 0
    np.testing.assert_allclose(g, want, rtol=1e-6)
    out = tracer.vmap(patches)(X[:, None])
    np.testing.assert_array_equal(out[:, 0], im2col(X))


def test_filter_rank_must_match():
    with pytest.raises(ValueError, match="one size per spatial dimension"):
        lax.conv_general_dilated_patches(X, (2,), (1, 1), "VALID")
