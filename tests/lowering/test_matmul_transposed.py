"""A matmul operand that is a transpose of the last two axes is read in place by the llvm
matmul (lowering.llvm.rewrites): values as NumPy's for every dtype, batches, odd, 0 and
1 sizes, on 1 and 2 threads; the transpose node goes unless something else reads it.
Run with TRACER_CPU=avx2 too (tile geometry differs)."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir import Graph, Node, ShapedArray, Var
from lowering.llvm import compile_graph
from lowering.settings import settings

RNG = np.random.default_rng(0)
FLOATS = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FORMS = {"At": lambda a, b: tnp.swapaxes(a, -1, -2) @ b,
         "Bt": lambda a, b: a @ tnp.swapaxes(b, -1, -2),
         "AtBt": lambda a, b: tnp.swapaxes(a, -1, -2) @ tnp.swapaxes(b, -1, -2)}


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request, monkeypatch):
    """Compile for 1 or 2 threads; with 2, every group that can be split is."""
    monkeypatch.setenv("TRACER_NUM_THREADS", str(request.param))
    monkeypatch.setattr(settings, "parallel_ns", 0)
    return request.param


def operands(form, batch, m, k, n, dtype):
    """(a, b) as stored: A (.., m, k) or, transposed, (.., k, m); B likewise."""
    shape_a = batch + ((k, m) if "At" in form else (m, k))
    shape_b = batch + ((n, k) if "Bt" in form else (k, n))
    if np.dtype(dtype).kind in "iu":   # full range: products and sums wrap like NumPy's
        big = np.iinfo(dtype)
        return [RNG.integers(big.min, big.max, s, dtype=dtype, endpoint=True)
                for s in (shape_a, shape_b)]
    return [RNG.standard_normal(s).astype(dtype) for s in (shape_a, shape_b)]


def check(form, a, b):
    f = tracer.jit(FORMS[form])
    got = f(a, b)
    ta = np.swapaxes(a, -1, -2) if "At" in form else a
    tb = np.swapaxes(b, -1, -2) if "Bt" in form else b
    if min(got.shape[-2:]) > 1:    # (thinner ones become a multiply-reduce)
        graph = str(f.lower(a, b).graph)
        assert "transpose[" not in graph and "matmul[transpose_" in graph
    if a.dtype.kind in "iu":
        np.testing.assert_array_equal(got, np.matmul(ta, tb))
        return
    want = np.matmul(ta.astype(np.float64), tb.astype(np.float64))
    bound = np.matmul(np.abs(ta).astype(np.float64), np.abs(tb).astype(np.float64))
    eps = ml_dtypes.finfo(a.dtype).eps
    assert got.dtype == a.dtype and got.shape == want.shape
    assert np.all(np.abs(got.astype(np.float64) - want) <= 4 * eps * (bound + np.abs(want)))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shape", [((), 37, 29, 41), ((), 2, 3, 2), ((), 1, 1, 2),
                                   ((), 0, 5, 3), ((), 3, 0, 3), ((2, 3), 13, 17, 35),
                                   ((), 50, 300, 16), ((), 7, 1030, 33)],
                         ids=lambda s: "x".join(map(str, s[0] + s[1:])))
def test_float32_shapes(threads, form, shape):
    check(form, *operands(form, *shape, np.float32))


@pytest.mark.parametrize("dtype", FLOATS[1:] + INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("form", FORMS)
def test_every_dtype(form, dtype):
    check(form, *operands(form, (2,), 19, 11, 37, dtype))


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=lambda d: np.dtype(d).name)
def test_b_stored_transposed_packs_in_blocks_with_tails(threads, dtype):
    """k = 70 runs VL x VL transposed blocks (lowering.llvm.matmul_pack) of every vector
    width (4, 8 and 16 lanes on AVX2 code, 16 and 32 with AVX-512) and their tail of k,
    or, past 16 lanes, the element-by-element path; n = 40 has full panels and a narrower
    last one."""
    check("Bt", *operands("Bt", (2,), 6, 70, 40, dtype))


def test_a_transpose_read_elsewhere_too_stays_and_the_matmul_still_folds():
    a, b = operands("At", (), 20, 30, 40, np.float32)
    f = tracer.jit(lambda a, b: (tnp.swapaxes(a, 0, 1) @ b, tnp.swapaxes(a, 0, 1) * 2))
    graph = str(f.lower(a, b).graph)
    assert "transpose[perm=(1, 0)]" in graph and "matmul[transpose_a=True]" in graph
    c, d = f(a, b)
    np.testing.assert_allclose(c, a.T @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(d, a.T * 2)


def test_other_transposes_are_not_folded():
    a, b = RNG.standard_normal((3, 4, 5)), RNG.standard_normal((4, 5, 6))
    f = tracer.jit(lambda a, b: tnp.transpose(a, (1, 0, 2)) @ b)   # moves a batch axis
    assert "transpose_a" not in str(f.lower(a, b).graph)
    np.testing.assert_allclose(f(a, b), np.transpose(a, (1, 0, 2)) @ b, rtol=1e-12)


def test_mlp_gradient_matches_eager(threads):
    x, w1, w2 = (RNG.standard_normal(s) * 0.3 for s in ((64, 30), (30, 20), (20, 7)))

    def loss(w1, w2):
        return tnp.sum(tnp.tanh(tnp.tanh(x @ w1) @ w2) ** 2)
    grad = tracer.grad(loss, argnums=(0, 1))
    graph = str(tracer.jit(grad).lower(w1, w2).graph)
    assert "transpose[" not in graph and "transpose_a=True" in graph and "transpose_b=True" in graph
    for got, want in zip(tracer.jit(grad)(w1, w2), grad(w1, w2)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_bool_matmul_of_transposes(batch):
    """Bool matmuls (the or of ands, a plain loop) read transposed operands too."""
    a, b = (RNG.random(batch + s) < 0.3 for s in ((5, 7), (3, 5)))
    ins = [Var(ShapedArray(x.shape, x.dtype)) for x in (a, b)]
    perm = tuple(range(len(batch))) + (len(batch) + 1, len(batch))
    at, bt = (Var(ShapedArray(x.shape[:-2] + x.shape[-2:][::-1], x.dtype)) for x in (a, b))
    out = Var(ShapedArray(batch + (7, 3), np.dtype(bool)))
    graph = Graph(ins, [out], [Node("transpose", [ins[0]], [at], {"perm": perm}),
                               Node("transpose", [ins[1]], [bt], {"perm": perm}),
                               Node("matmul", [at, bt], [out])])
    program = compile_graph(graph)
    assert "transpose[" not in str(program.graph) and "transpose_b=True" in str(program.graph)
    np.testing.assert_array_equal(program.run([a, b])[0],
                                  np.matmul(a.swapaxes(-1, -2), b.swapaxes(-1, -2)))
