"""tracer.lax.conv, conv_with_general_padding, conv_transpose and conv_dimension_numbers:
against a direct NumPy convolution (dilate, pad, correlate), JAX's output-size rules of
conv_transpose, jit on both backends, gradients."""
import itertools

import numpy as np
import pytest

import tracer
from tracer import lax

R = np.random.default_rng(0)


def ref_conv_nhwc(x, w, pads, lhs_dil=(1, 1), rhs_dil=(1, 1)):
    """x (N, H, W, C) correlated with w (KH, KW, C, O): stride 1, after dilating x and w and
    padding x (negative pads crop)."""
    def dilate(a, d, axes):
        for ax, k in zip(axes, d):
            shape = list(a.shape)
            shape[ax] = (a.shape[ax] - 1) * k + 1
            out = np.zeros(shape)
            idx = [slice(None)] * a.ndim
            idx[ax] = slice(None, None, k)
            out[tuple(idx)] = a
            a = out
        return a
    x, w = dilate(x, lhs_dil, (1, 2)), dilate(w, rhs_dil, (0, 1))
    for ax, (lo, hi) in zip((1, 2), pads):
        x = np.pad(x, [(max(lo, 0), max(hi, 0)) if a == ax else (0, 0) for a in range(4)])
        n = x.shape[ax]
        x = x[(slice(None),) * ax + (slice(max(-lo, 0), n - max(-hi, 0)),)]
    kh, kw = w.shape[:2]
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i, j in itertools.product(range(oh), range(ow)):
        out[:, i, j] = np.einsum("nhwc,hwco->no", x[:, i:i + kh, j:j + kw], w)
    return out


def nchw(a):
    return np.transpose(a, (0, 3, 1, 2))


def test_conv_and_general_padding_against_direct_convolution():
    x, w = R.normal(size=(2, 3, 7, 6)), R.normal(size=(4, 3, 3, 2))      # NCHW, OIHW
    xh, wh = np.transpose(x, (0, 2, 3, 1)), np.transpose(w, (2, 3, 1, 0))
    np.testing.assert_allclose(lax.conv(x, w, (1, 1), "VALID"),
                               nchw(ref_conv_nhwc(xh, wh, [(0, 0), (0, 0)])), rtol=1e-12)
    got = lax.conv_with_general_padding(x, w, (1, 1), [(1, 2), (0, -1)], (2, 1), (1, 2))
    want = nchw(ref_conv_nhwc(xh, wh, [(1, 2), (0, -1)], (2, 1), (1, 2)))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))


@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (3, 1)])
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 0), (2, 1))])
def test_conv_transpose_is_a_dilated_convolution(padding, stride):
    x, w = R.normal(size=(2, 5, 4, 3)), R.normal(size=(3, 2, 3, 4))      # NHWC, HWIO
    got = lax.conv_transpose(x, w, stride, padding)
    if isinstance(padding, str):            # JAX's sizes: SAME scales by the stride
        extra = [0 if padding == "SAME" else max(k - s, 0) for k, s in zip((3, 2), stride)]
        assert got.shape[1:3] == tuple(n * s + e for n, s, e in zip((5, 4), stride, extra))
        pads = []
        for k, s in zip((3, 2), stride):
            total = k + s - 2 + (max(k - s, 0) if padding == "VALID" else 0)
            lo = k - 1 if padding == "VALID" or s > k - 1 else -(-total // 2)
            pads.append((lo, total - lo))
    else:
        pads = padding
    np.testing.assert_allclose(got, ref_conv_nhwc(x, w, pads, stride), rtol=1e-12)
    w = R.normal(size=(3, 2, 5, 3))         # a forward kernel's HWIO: I and O swap here
    flipped = lax.conv_transpose(x, w, stride, padding, transpose_kernel=True)
    np.testing.assert_allclose(flipped, ref_conv_nhwc(x, np.swapaxes(w[::-1, ::-1], 2, 3), pads,
                                                      stride), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_under_jit_and_grad(backend):
    x, w = R.normal(size=(1, 4, 4, 2)), R.normal(size=(2, 2, 3, 2))

    def f(x, w):
        return lax.conv_transpose(x, w, (2, 2), "SAME", transpose_kernel=True)
    np.testing.assert_allclose(tracer.jit(f, backend=backend)(x, w), f(x, w), rtol=1e-12)
    tracer.check_grads(f, (x, w), modes=("rev",))


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 0), (2, 1))])
def test_shape_helpers_give_the_shapes_the_ops_produce(padding):
    x, w = np.ones((2, 7, 6, 3)), np.ones((3, 2, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple(x.shape, w.shape, (2, 3), padding, dn) == \
        lax.conv_general_dilated(x, w, (2, 3), padding, dimension_numbers=dn).shape
    assert lax.conv_transpose_shape_tuple(x.shape, w.shape, (2, 3), padding, dn) == \
        lax.conv_transpose(x, w, (2, 3), padding).shape
    if isinstance(padding, str):
        pads = lax.padtype_to_pads((7, 6), (3, 2), (2, 3), padding)
        assert lax.reduce_window_shape_tuple((7, 6), (3, 2), (2, 3), pads) == \
            lax.reduce_window(x[0, ..., 0], 0.0, lax.add, (3, 2), (2, 3), padding).shape
    assert lax.conv_general_permutations(dn) == tuple(lax.conv_dimension_numbers(x.shape,
                                                                                 w.shape, dn))
    assert lax.platform_dependent(3, cpu=lambda v: v * 2, default=lambda v: v) == 6
