"""The llvm backend's native convolution (im2col gathered into the packed matmul tiles),
reduce_window (an unrolled window per output element) and tile_scatter (the pooling
gradient) against the NumPy kernels, on layouts, strides, padding, dilations, groups,
empty batches and sizes that leave partial register tiles, panels and K blocks; both ISAs
(the tile geometry follows TRACER_CPU)."""
import re
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax, nn
from tracer.tree_util import tree_leaves

RNG = np.random.default_rng(0)


def check(f, *args, native=True):
    """f under jit on llvm equals f on the numpy backend (its kernels are checked against
    loop references in tests/tracer/test_conv.py); with native, no Python step runs."""
    fast, ref = tracer.jit(f), tracer.jit(f, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # native or declared: never a fallback warning
        got = fast(*args)
    want = ref(*args)
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        t = 1e-4 if w.dtype == np.float32 else 1e-11
        scale = np.abs(w[np.isfinite(w)]).max(initial=1.0)
        np.testing.assert_allclose(g, w, rtol=t, atol=t * scale)
    assert ("python" not in fast.lower(*args).steps) == native, fast.lower(*args).steps


def conv(dn=("NHWC", "HWIO", "NHWC"), strides=(1, 1), padding="SAME", ldil=None, rdil=None,
         groups=1):
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ldil, rdil, dn, groups)


def data(*shapes, dtype=np.float32):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


# (lhs, rhs, conv options); NHWC/HWIO unless dn says otherwise
CASES = {
    "nhwc-same": ((2, 7, 5, 3), (3, 3, 3, 37), {}),                # panel edge: O = 32 + 5
    "nhwc-stride-explicit": ((3, 9, 8, 4), (2, 3, 4, 6), dict(strides=(2, 3),
                                                             padding=((1, 2), (-1, 1)))),
    "dilations": ((2, 6, 7, 3), (2, 3, 3, 5), dict(ldil=(2, 1), rdil=(1, 2),
                                                   padding=((1, 1), (2, 0)))),
    "groups-3": ((1, 5, 6, 6), (3, 2, 2, 9), dict(groups=3, padding="VALID")),
    "nchw-oihw": ((2, 3, 6, 5), (4, 3, 3, 2), dict(dn=None, padding="VALID")),
    "mixed-layout": ((2, 5, 4, 3), (6, 3, 2, 2), dict(dn=("NHWC", "OIHW", "NCHW"))),
    "1d": ((3, 11, 2), (4, 2, 5), dict(dn=("NWC", "WIO", "NWC"), strides=(2,),
                                       padding="SAME", rdil=(2,))),
    "3d": ((1, 4, 3, 5, 2), (2, 1, 2, 2, 3), dict(dn=("NDHWC", "DHWIO", "NDHWC"),
                                                  strides=(1, 2, 1), padding="SAME")),
    "batch-1-odd-rows": ((1, 13, 11, 1), (3, 3, 1, 16), {}),        # 143 rows: 14/4/1 tiles
    "k-blocks": ((2, 4, 4, 300), (3, 3, 300, 8), {}),              # 2700 deep: several K blocks
    "channel-chunks": ((1, 3, 3, 1100), (1, 2, 1100, 3), {}),      # C > one K block
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES), ids=str)
def test_native_conv_matches_numpy_kernel(case, dtype):
    ls, rs, kw = CASES[case]
    check(conv(**kw), *data(ls, rs, dtype=dtype))


def test_integer_conv_is_exact_and_empty_batches_run_numpy_kernel_on_purpose():
    x, w = RNG.integers(-9, 9, (2, 6, 5, 3), np.int32), RNG.integers(-9, 9, (3, 3, 3, 4),
                                                                      np.int32)
    check(conv(), x, w)
    x0, w0 = data((0, 6, 5, 3), (3, 3, 3, 4))
    check(conv(), x0, w0, native=False)


@pytest.mark.parametrize("case", ["dilations", "groups-3"])
def test_conv_gradients_under_jit_match_numpy_backend(case):
    ls, rs, kw = CASES[case]
    f = conv(**kw)
    vg = tracer.value_and_grad(lambda x, w: tnp.sum(tnp.sin(f(x, w))), argnums=(0, 1))
    x, w = data(ls, rs, dtype=np.float64)
    fast, want = tracer.jit(vg)(x, w), tracer.jit(vg, backend="numpy")(x, w)
    np.testing.assert_allclose(fast[0], want[0], rtol=1e-11)
    for g, h in zip(fast[1], want[1]):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.int8, np.uint16])
def test_narrow_dtypes_run_the_library_tiles(dtype):
    """float16/bfloat16 widen to float in the gather and the pack, and round when the tile
    stores C; small integers wrap as NumPy's."""
    dt = np.dtype(dtype)
    x, w = ((RNG.integers(0, 5, s).astype(dt) if dt.kind in "iu" else
             RNG.standard_normal(s).astype(dt)) for s in ((2, 6, 5, 3), (3, 3, 3, 20)))
    check(conv(), x, w)


def test_conv_nodes_call_one_library_and_the_matmul_librarys_tiles():
    """Two convolutions of different geometries define no code of their own: the module
    declares the float32 2-d conv library (compiled once per process, CPU, dtype and rank,
    lowering.llvm.conv_shared), which both call with their geometry, and the matmul
    library's register tiles, whose addresses they pass it."""
    from lowering.llvm import conv_shared, matmul_shared
    f = conv(padding="SAME")
    g = conv(strides=(2, 1), padding="VALID")
    x, w, v = data((2, 9, 7, 3), (3, 3, 3, 37), (2, 2, 37, 5))
    h = lambda x, w, v: g(f(x, w), v)      # noqa: E731
    text = tracer.jit(h).lower(x, w, v).as_text()
    lib = conv_shared.symbol(np.float32, 2)
    assert conv_shared.libraries(text) == [lib]
    assert text.count(f'call void @"{lib}.rows"(') == 2
    assert text.count(f'call void @"{lib}.pack"(') == 2
    assert not re.search(r"^define[^\n]*(conv|gather)", text, re.M)
    tiles = set(re.findall(r'@"tracer\.mm\.\w+\.float32\.\d+xe\d"', text))
    assert len(tiles) == len(matmul_shared.tiles(np.float32))
    assert matmul_shared.libraries(text) == [matmul_shared.symbol(np.float32).rsplit(".", 1)[0]]
    check(h, x, w, v)


def test_conv_library_is_compiled_once_per_rank():
    """A 1-d, a 2-d and a 3-d convolution call three libraries; another 2-d geometry in a
    later module calls the 2-d one again, compiling nothing new but its own module."""
    from lowering.llvm import conv_shared, target
    for case in ("1d", "nhwc-same", "3d"):
        xs, ws, kw = CASES[case]
        check(conv(**kw), *data(xs, ws))
    linked = {name for name in target._linked if name.startswith("tracer.conv.")}
    assert {conv_shared.symbol(np.float32, r) for r in (1, 2, 3)} <= linked
    before = dict(target._linked)
    check(conv(strides=(2, 2), padding="VALID"), *data((1, 8, 8, 2), (2, 2, 2, 3)))
    assert target._linked == before


# ---- reduce_window and the pooling gradient -------------------------------------------------
@pytest.mark.parametrize("comp,init", [(lax.max, -np.inf), (lax.min, np.inf), (lax.add, 0.0)])
def test_native_reduce_window_with_padding_strides_and_base_dilation(comp, init):
    x, = data((2, 7, 6, 3))
    check(lambda v: lax.reduce_window(v, init, comp, (1, 3, 2, 1), (1, 2, 1, 1), "SAME"), x)
    check(lambda v: lax.reduce_window(v, init, comp, (1, 2, 3, 1), (1, 1, 2, 1),
                                      ((0, 0), (1, 2), (0, 1), (0, 0)), (1, 2, 1, 1)), x)


def test_pool_gradients_native_on_tiles_with_a_rim_ties_and_nan():
    x, = data((3, 7, 9, 4))                     # 2x2 tiles leave a rim of one row/column
    x[0, 0, 0, 0] = x[0, 0, 1, 0] = x[0, 1, 0, 0] = 5.0     # a tie: the first one wins
    x[1, 2, 2, 1] = np.nan
    for pool in (nn.max_pool, nn.avg_pool):
        check(tracer.grad(lambda v: tnp.sum(tnp.cos(pool(v, (2, 2), (2, 2))))), x)
    check(tracer.grad(lambda v: tnp.sum(lax.reduce_window(v, np.inf, lax.min, (1, 3, 2, 1),
                                                          (1, 3, 2, 1), "VALID") ** 2)), x)
    g = tracer.jit(tracer.grad(lambda v: tnp.sum(nn.max_pool(v, (2, 2), (2, 2)))))(x)
    assert g[0, 0, 0, 0] == 1 and g[0, 0, 1, 0] == g[0, 1, 0, 0] == 0
    assert g[1, 2, 2, 1] == 1 and not g[:, 6].any() and not g[:, :, 8].any()


def test_tiled_pool_gradient_differentiates_again_and_vmaps():
    x = RNG.standard_normal((2, 4, 6, 3))

    def f(v):
        return tnp.sum(nn.max_pool(v, (2, 3), (2, 3)) ** 3) + \
            tnp.sum(nn.avg_pool(v, (2, 2), (2, 2)) ** 3)
    tracer.check_grads(f, (x,), order=2)
    got = tracer.jit(tracer.vmap(tracer.grad(f)))(x)
    np.testing.assert_allclose(got, np.stack([tracer.grad(f)(x[i:i + 1])[0] for i in range(2)]),
                               rtol=1e-12)


def test_windows_too_big_to_unroll_run_the_numpy_kernel_on_purpose():
    x, = data((2, 9, 9, 3))
    check(lambda v: nn.avg_pool(v, (9, 9)), x, native=False)


def test_cnn_step_is_one_native_program():
    """The benchmark's CNN: jit(value_and_grad) runs no Python step."""
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(p, x):
        h = nn.relu(lax.conv_general_dilated(x, p[0], (1, 1), "SAME", dimension_numbers=dn))
        h = nn.max_pool(h, (2, 2), (2, 2))
        h = nn.relu(lax.conv_general_dilated(h, p[1], (1, 1), "SAME", dimension_numbers=dn))
        return tnp.sum(nn.log_softmax(tnp.reshape(nn.max_pool(h, (2, 2), (2, 2)), (4, -1))))
    p, x = data((3, 3, 1, 4), (3, 3, 4, 6)), data((4, 8, 8, 1))[0]
    check(tracer.value_and_grad(loss), p, x)
