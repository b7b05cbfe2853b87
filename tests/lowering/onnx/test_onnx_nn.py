"""ONNX export of conv, reduce_window (pooling) and tile_scatter (the pooling gradient):
layouts, strides, padding (negative too), dilations, groups, every reduce_window op and
dtype, ties and NaN in the pooling gradient, the CNN example with a dynamic batch; each
run in ONNX Runtime against the numpy backend."""
import os
import sys

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax
from tracer.export import to_onnx

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from test_onnx_kernels import run_onnx  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
import cnn  # noqa: E402

NHWC = ("NHWC", "HWIO", "NHWC")
RNG = np.random.default_rng(0)


def close(fun, *args, tol=1e-5):
    """Same shapes and dtypes; values to `tol` relative to the largest (float32 sums of
    products in another order round differently), exact for integers."""
    with np.errstate(all="ignore"):
        want = tracer.jit(fun, backend="numpy")(*args)
    got = run_onnx(to_onnx(fun, *args), *args)
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape and g.dtype == w.dtype
        finite = np.abs(w[np.isfinite(w)]) if w.dtype.kind == "f" else np.zeros(0)
        scale = float(np.max(finite, initial=1))
        np.testing.assert_allclose(g, w, rtol=0, atol=tol * scale)


X = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
W = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("options", [
    dict(window_strides=(1, 1), padding="SAME"),
    dict(window_strides=(2, 1), padding=((1, -1), (2, 0)), lhs_dilation=(2, 1),
         rhs_dilation=(1, 2)),
    dict(window_strides=(1, 2), padding="VALID", rhs_dilation=(2, 1))], ids=str)
def test_conv_in_both_layouts_and_its_gradient(options):
    close(lambda x, w: lax.conv_general_dilated(x, w, dimension_numbers=NHWC, **options), X, W)
    close(lambda x, w: lax.conv_general_dilated(x, w, **options),
          X.transpose(0, 3, 1, 2).copy(), W.transpose(3, 2, 0, 1).copy())
    close(tracer.grad(lambda x, w: tnp.sum(lax.conv_general_dilated(
        x, w, dimension_numbers=NHWC, **options) ** 2), argnums=(0, 1)), X, W)


def test_conv_groups_1d_and_empty():
    close(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC,
                                                feature_group_count=3),
          X, RNG.normal(size=(3, 3, 1, 6)).astype(np.float32))
    close(lambda x, w: lax.conv_general_dilated(x, w, (2,), ((1, 2),)),
          X[:, :, 0].transpose(0, 2, 1).copy(), W[:, 0].transpose(2, 1, 0).copy())
    close(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=NHWC),
          X[:, :2], W)          # no output rows


@pytest.mark.parametrize("dtype", (np.float64, np.int64, np.int8, np.uint8))
def test_conv_of_dtypes_without_an_onnx_runtime_conv(dtype):
    """float64 and integers go through im2col and MatMul (int8 wraps, as NumPy's)."""
    x, w = (X * 6).astype(dtype), (W * 6).astype(dtype)
    options = [dict(window_strides=(1, 1), padding="SAME"),
               dict(window_strides=(2, 1), padding=((1, -1), (2, 0)), lhs_dilation=(2, 1),
                    rhs_dilation=(1, 2))]
    wg = (RNG.normal(size=(3, 3, 1, 6)) * 6).astype(dtype)
    close(lambda x, w, wg: tuple(
        lax.conv_general_dilated(x, w, dimension_numbers=NHWC, **o) for o in options) + (
        lax.conv_general_dilated(x, wg, (1, 1), "SAME", dimension_numbers=NHWC,
                                 feature_group_count=3),
        lax.conv_general_dilated(x[:, 0, 0], w[0, 0].T, (), ())), x, w, wg, tol=1e-12)

    def f(x):
        return lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=NHWC)
    model = to_onnx(f, x, dynamic_batch=True)
    np.testing.assert_allclose(run_onnx(model, x[:1])[0], tracer.jit(f)(x[:1]), rtol=1e-12)


WINDOWS = [((1, 2, 2, 1), (1, 2, 2, 1), "VALID", None),
           ((1, 3, 2, 1), (1, 2, 1, 1), "SAME", None),
           ((1, 3, 3, 1), (1, 1, 2, 1), ((0, 0), (2, -1), (1, 3), (0, 0)), (1, 2, 1, 1)),
           ((2, 1, 1, 1), (1, 1, 1, 1), ((0, 0), (0, 0), (5, 0), (0, 0)), None)]


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int8, np.int64, np.float16))
def test_reduce_window_ops_dtypes_padding_and_base_dilation(dtype):
    x = (RNG.normal(size=(2, 7, 6, 3)) * 5).astype(dtype)
    fns = [(lambda x, op=op, init=init, w=w: lax.reduce_window(x, init, op, *w))
           for op, init in ((lax.max, -np.inf), (lax.min, np.inf), (lax.add, 0.0),
                            (lax.max, 1.0)) for w in WINDOWS]
    # float16 sums: the kernel rounds each step to float16, the export once
    close(lambda x: tuple(f(x) for f in fns), x, tol=2e-3 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_pooling_gradient_picks_the_first_extreme_and_nan(dtype):
    x = (RNG.normal(size=(2, 7, 6, 3))).astype(dtype)
    x[0, 0, 0, 0], x[0, 2, 2, 0], x[1, 4, 1, 2] = np.nan, x[0, 2, 3, 0], x[1, 4, 0, 2]
    weights = np.arange(18, dtype=dtype).reshape(1, 3, 3, 2)[..., :1] - 5

    def loss(op, init):
        return tracer.grad(lambda x: tnp.sum(
            lax.reduce_window(x, init, op, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") * weights))
    grads = [loss(lax.max, -np.inf), loss(lax.min, np.inf), loss(lax.add, 0.0)]
    assert "tile_scatter" in tracer.make_graph(grads[0])(x).kernels()
    close(lambda x: tuple(g(x) for g in grads), x, tol=0)


def test_cnn_example_exports_with_a_dynamic_batch():
    rng = np.random.default_rng(1)
    params = cnn.init_params(8, rng)
    x, _ = cnn.images(4, 8, rng)

    def predict(x):
        return cnn.logits(params, x)
    model = to_onnx(predict, x, dynamic_batch=True)
    for n in (1, 6):
        xb, _ = cnn.images(n, 8, rng)
        np.testing.assert_allclose(run_onnx(model, xb)[0], tracer.jit(predict)(xb),
                                   rtol=1e-4, atol=1e-5)


def test_a_window_over_the_batch_axis_needs_a_fixed_batch():
    def f(x):
        return lax.reduce_window(x, -np.inf, lax.max, (2, 1), (1, 1), "VALID")
    to_onnx(f, X[:, :, 0, 0])
    with pytest.raises(tracer.ShapeError, match="reduce_window has a window over the batch"):
        to_onnx(f, X[:, :, 0, 0], dynamic_batch=True)
