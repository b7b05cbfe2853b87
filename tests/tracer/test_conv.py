"""Convolution and pooling (issue 12): conv_general_dilated against a direct loop reference
(and jax where installed) over the options; gradients against finite differences (order 1,
and order 2 on a small case) and jax; vmap; reduce_window, max_pool/avg_pool, one_hot;
eager and jit on both backends."""
import itertools

import numpy as np
import pytest

import tracer
from tracer import lax, nn
from tracer import numpy as tnp

RNG = np.random.default_rng(0)


def ref_conv(x, w, strides, pads, ldil, rdil, groups):
    """Direct loops in JAX's default layout: x (N, C, *sp), w (O, C/groups, *k)."""
    nsp = x.ndim - 2
    xd = np.zeros(x.shape[:2] + tuple((n - 1) * d + 1 for n, d in zip(x.shape[2:], ldil)),
                  x.dtype)
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in ldil)] = x
    n, o = x.shape[0], w.shape[0]
    og, cg = o // groups, w.shape[1]
    osp = [max((xd.shape[2 + i] + lo + hi - ((w.shape[2 + i] - 1) * rdil[i] + 1)) // strides[i]
               + 1, 0) for i, (lo, hi) in enumerate(pads)]
    out = np.zeros((n, o) + tuple(osp), x.dtype)
    for b, oc in itertools.product(range(n), range(o)):
        g = oc // og
        for pos in itertools.product(*map(range, osp)):
            acc = 0.0
            for c, ks in itertools.product(range(cg), itertools.product(*map(range,
                                                                             w.shape[2:]))):
                at = [pos[i] * strides[i] + ks[i] * rdil[i] - pads[i][0] for i in range(nsp)]
                if all(0 <= a < xd.shape[2 + i] for i, a in enumerate(at)):
                    acc += xd[(b, g * cg + c) + tuple(at)] * w[(oc, c) + ks]
            out[(b, oc) + pos] = acc
    return out


# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, groups), NCHW/OIHW
CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1),
    ((1, 4, 7, 6), (6, 2, 3, 2), (2, 1), ((1, 1), (0, 1)), (1, 1), (1, 1), 2),
    ((2, 2, 5, 6), (2, 2, 2, 3), (2, 3), ((1, 2), (-1, 2)), (2, 1), (1, 2), 1),
    ((2, 2, 9), (4, 1, 3), (2,), ((2, 1),), (3,), (2,), 2),
    ((1, 2, 4, 3, 3), (2, 2, 2, 1, 2), (1, 2, 1), ((0, 1), (1, 0), (1, 1)), (1, 1, 2),
     (1, 1, 1), 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0]) - 2}d-g{c[-1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_matches_loop_reference(case, dtype):
    ls, rs, s, p, ld, rd, g = case
    x, w = RNG.standard_normal(ls).astype(dtype), RNG.standard_normal(rs).astype(dtype)
    want = ref_conv(x, w, s, p, ld, rd, g)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    def f(x, w):
        return lax.conv_general_dilated(x, w, s, p, ld, rd, feature_group_count=g)
    for run in (f, tracer.jit(f, backend="numpy"), tracer.jit(f)):
        got = run(x, w)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_dimension_numbers_and_same_padding_match_transposed_canonical():
    x = RNG.standard_normal((2, 7, 6, 4))                  # NHWC
    w = RNG.standard_normal((3, 2, 2, 6))                  # HWIO, 2 groups
    got = lax.conv_general_dilated(x, w, (2, 1), "SAME", rhs_dilation=(1, 2),
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                   feature_group_count=2)
    # SAME: out = ceil(in / stride) with the dilated window (3, 3): pads (1, 1) and (1, 1)
    want = ref_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 1),
                    ((1, 1), (1, 1)), (1, 1), (1, 2), 2).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: f"{len(c[0]) - 2}d-g{c[-1]}")
def test_conv_matches_jax_values_and_gradients(case):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):    # scoped: a global switch would change later tests' JAX
        ls, rs, s, p, ld, rd, g = case
        x, w = RNG.standard_normal(ls), RNG.standard_normal(rs)
        kw = dict(window_strides=s, padding=p, lhs_dilation=ld, rhs_dilation=rd,
                  feature_group_count=g)
        np.testing.assert_allclose(lax.conv_general_dilated(x, w, **kw),
                                   jax.lax.conv_general_dilated(x, w, **kw), atol=1e-12)
        got = tracer.grad(lambda x, w: tnp.sum(tnp.sin(lax.conv_general_dilated(x, w, **kw))),
                          argnums=(0, 1))(x, w)
        want = jax.grad(lambda x, w: jax.numpy.sum(jax.numpy.sin(
            jax.lax.conv_general_dilated(x, w, **kw))), argnums=(0, 1))(x, w)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, np.asarray(b), atol=1e-11)


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: f"{len(c[0]) - 2}d-g{c[-1]}")
def test_conv_gradients_match_finite_differences(case):
    ls, rs, s, p, ld, rd, g = case
    x, w = RNG.standard_normal(ls), RNG.standard_normal(rs)
    tracer.check_grads(lambda x, w: lax.conv_general_dilated(x, w, s, p, ld, rd,
                                                             feature_group_count=g),
                       (x, w), order=1)


def test_conv_second_order_gradients():
    x, w = RNG.standard_normal((1, 2, 5, 4)), RNG.standard_normal((2, 1, 2, 2))
    tracer.check_grads(lambda x, w: lax.conv_general_dilated(
        x, w, (2, 1), ((1, 0), (0, 1)), rhs_dilation=(1, 2), feature_group_count=2),
        (x, w), order=2)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (1, 2)])
def test_conv_vmap_matches_a_loop(axes):
    x, w = RNG.standard_normal((3, 2, 4, 6, 5)), RNG.standard_normal((3, 4, 2, 3, 2))
    xs = x if axes[0] is not None else x[0]
    ws = np.moveaxis(w, 0, axes[1]) if axes[1] is not None else w[0]
    xs = np.moveaxis(xs, 0, axes[0]) if axes[0] is not None else xs

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 2), "SAME", feature_group_count=2)
    got = tracer.vmap(f, in_axes=axes)(xs, ws)
    want = np.stack([f(x[i] if axes[0] is not None else x[0],
                       w[i] if axes[1] is not None else w[0]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_rejects_bad_arguments():
    x, w = np.ones((1, 4, 5, 5)), np.ones((6, 2, 3, 3))
    with pytest.raises(tracer.ShapeError, match="conv.*groups"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=3)
    with pytest.raises(tracer.TracerError, match="padding"):
        lax.conv_general_dilated(x, w, (1, 1), "FULL")
    with pytest.raises(tracer.TracerError, match="dimension_numbers"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "OIHW"))
    with pytest.raises(tracer.DTypeError, match="conv"):
        lax.conv_general_dilated(x, w.astype(np.float32), (1, 1), "VALID")


# ---- reduce_window, pools, one_hot ------------------------------------------------------
def ref_window(x, init, fn, window, strides, pads):
    xp = np.pad(x, pads, constant_values=init)
    out = np.lib.stride_tricks.sliding_window_view(xp, window)
    out = out[tuple(slice(None, None, s) for s in strides)]
    return fn(out, axis=tuple(range(x.ndim, 2 * x.ndim)), initial=init)


@pytest.mark.parametrize("comp,init,fn", [(lax.add, 0.0, np.sum), (lax.max, -np.inf, np.max),
                                          (lax.min, np.inf, np.min)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_window_values_and_gradients(comp, init, fn, dtype):
    x = RNG.standard_normal((2, 5, 6)).astype(dtype)
    args = ((1, 2, 3), (1, 2, 2), ((0, 0), (1, 0), (1, 1)))
    want = ref_window(x, init, fn, *args)
    def f(x):
        return lax.reduce_window(x, init, comp, *args)
    # a window sum's order differs from NumPy's: a few float32 ulps of its terms' size
    atol = 4 * np.finfo(dtype).eps * np.abs(x).max() * 6
    for run in (f, tracer.jit(f, backend="numpy"), tracer.jit(f)):
        np.testing.assert_allclose(run(x), want, rtol=1e-6, atol=atol)
    tracer.check_grads(lambda x: lax.reduce_window(x, init, comp, *args), (x.astype(float),),
                       order=2 if comp is lax.add else 1)


def test_pools_match_flax_semantics_and_vmap():
    x = RNG.standard_normal((2, 6, 5, 3))                         # NHWC
    mp = nn.max_pool(x, (2, 2), strides=(2, 2), padding="SAME")
    want = ref_window(x, -np.inf, np.max, (1, 2, 2, 1), (1, 2, 2, 1),
                      ((0, 0), (0, 0), (0, 1), (0, 0)))
    np.testing.assert_allclose(mp, want)
    ap = nn.avg_pool(x, (3, 2))
    np.testing.assert_allclose(ap, ref_window(x, 0.0, np.sum, (1, 3, 2, 1), (1,) * 4,
                                              ((0, 0),) * 4) / 6)
    np.testing.assert_allclose(nn.max_pool(x[0], (2, 2)), nn.max_pool(x, (2, 2))[0])
    np.testing.assert_allclose(tracer.vmap(lambda v: nn.max_pool(v, (2, 2)))(x),
                               nn.max_pool(x, (2, 2)))
    g = tracer.grad(lambda v: tnp.sum(nn.max_pool(v, (2, 2), (2, 2))))(x)
    assert set(np.unique(g)) <= {0.0, 1.0} and g.sum() == 2 * 3 * 2 * 3


def test_max_pool_gradient_goes_to_the_first_maximum_as_jax():
    x = np.array([[[1.0], [3.0], [3.0], [0.0]]])                 # (1, 4, 1), a tie
    g = tracer.grad(lambda v: tnp.sum(nn.max_pool(v, (3,), (1,))))(x)
    np.testing.assert_array_equal(g.ravel(), [0.0, 2.0, 0.0, 0.0])


def test_one_hot():
    got = nn.one_hot(np.array([0, 2, 5, -1]), 3)
    np.testing.assert_array_equal(got, np.eye(3, dtype=np.float32)[[0, 2]].tolist()
                                  + [[0, 0, 0]] * 2)
    assert got.dtype == np.float32
    got = tracer.jit(lambda i: nn.one_hot(i, 4, dtype=np.float64))(np.array([[1], [3]]))
    assert got.shape == (2, 1, 4) and got.dtype == np.float64


def test_integer_max_pool_uses_the_dtype_extreme_for_padding():
    x = np.arange(-12, 12, dtype=np.int32).reshape(1, 4, 6, 1)
    got = nn.max_pool(x, (2, 2), (2, 2), padding="SAME")
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.ravel(), [-5, -3, -1, 7, 9, 11])


def test_reduce_window_folds_any_computation_and_vmaps_with_grad():
    out = lax.reduce_window(np.arange(4.0), 0.0, lambda a, b: a + b, (2,), (1,), "VALID")
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0])
    x = RNG.standard_normal((3, 5, 4))

    def f(v):
        return tnp.sum(lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 2), "SAME") ** 2)
    got = tracer.vmap(tracer.grad(f), in_axes=1)(x)
    want = np.stack([tracer.grad(f)(x[:, i]) for i in range(5)])
    np.testing.assert_allclose(got, want)


def cnn_loss(p, x, y):
    w1, w2, w3 = p
    dn = ("NHWC", "HWIO", "NHWC")
    h = nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn))
    h = nn.max_pool(h, (2, 2), (2, 2))
    h = nn.relu(lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=dn))
    h = nn.avg_pool(h, (2, 2), (2, 2))
    logits = tnp.reshape(h, (h.shape[0], -1)) @ w3
    return -tnp.mean(tnp.sum(nn.log_softmax(logits) * nn.one_hot(y, 3), axis=-1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiny_cnn_value_and_grad_agree_eagerly_and_under_jit_on_both_backends(dtype):
    p = [(RNG.standard_normal(s) * 0.3).astype(dtype)
         for s in [(3, 3, 1, 4), (3, 3, 4, 6), (2 * 2 * 6, 3)]]
    x, y = RNG.standard_normal((5, 8, 8, 1)).astype(dtype), np.array([0, 1, 2, 1, 0])
    vg = tracer.value_and_grad(cnn_loss)
    want_v, want_g = vg(p, x, y)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for run in (tracer.jit(vg, backend="numpy"), tracer.jit(vg)):
        v, g = run(p, x, y)
        np.testing.assert_allclose(v, want_v, rtol=tol)
        for a, b in zip(g, want_g):
            assert a.dtype == dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    if dtype == np.float64:
        tracer.check_grads(lambda *p: cnn_loss(p, x, y), tuple(p), order=1)
