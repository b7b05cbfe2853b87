"""lowering.llvm.rewrites: a one-row or one-column matmul (v @ W, A @ v, batched too)
becomes a fused multiply-reduce on the llvm backend (in regions too), with the matmul's
values; wider and user-implemented matmuls keep the matmul kernel. Half floats reach the
matmul widened to float32 (tracer.numpy.matmul), so their thin products are float32 too."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from lowering.llvm import NumpyInProgram
from lowering.llvm.linalg import KERNELS

RNG = np.random.default_rng(0)


def kernels_of(program):
    return [n.kernel for n in program.graph.nodes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_a_vector_times_a_matrix_is_a_multiply_reduce_with_the_matmul_values(dtype):
    v = (RNG.standard_normal(37) * 4).astype(dtype)
    w = (RNG.standard_normal((37, 70)) * 4).astype(dtype)
    f = tracer.jit(lambda v, w: tnp.tanh(v @ w) if v.dtype.kind == "f" else v @ w)
    assert "matmul" not in str(f.lower(v, w).graph)
    want = v @ w
    scale = np.abs(v).astype(float) @ np.abs(w)    # float32 sums cancel: error ~ eps * scale
    np.testing.assert_allclose(f(v, w), np.tanh(want) if want.dtype.kind == "f" else want,
                               atol=1e-6 * scale.max() if dtype == np.float32 else 1e-12)


def test_inside_a_loop_body():
    v, w = RNG.standard_normal(16), RNG.standard_normal((16, 16)) * 0.2
    f = tracer.jit(lambda v, w: tracer.lax.fori_loop(0, 5, lambda i, u: tnp.tanh(u @ w), v))
    assert "matmul" not in str(f.lower(v, w).graph)
    want = v
    for _ in range(5):
        want = np.tanh(want @ w)
    np.testing.assert_allclose(f(v, w), want, rtol=1e-12)


@pytest.mark.parametrize("sa, sb", [((5,), (5, 3)), ((4, 5), (5,)), ((2, 4, 5), (5,)),
                                     ((3, 1, 5), (3, 5, 4)), ((3, 4, 5), (3, 5, 1)),
                                     ((7,), (7,))])
def test_rows_and_columns_batched_or_not(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    f = tracer.jit(lambda a, b: a @ b)
    assert "matmul" not in str(f.lower(a, b).graph)
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shapes, dtype", [(((2, 5), (5, 3)), np.float32),
                                           (((3, 2, 5), (3, 5, 4)), np.float32)])
def test_other_matmuls_keep_the_kernel(shapes, dtype):
    a, b = (RNG.standard_normal(s).astype(dtype) for s in shapes)
    assert "matmul" in str(tracer.jit(lambda a, b: a @ b).lower(a, b).graph)


def test_a_half_float_row_sums_its_products_in_float32():
    v = np.full(4096, 1.0, np.float16)
    w = np.full((4096, 3), 0.25, np.float16)      # 4096 * 0.25 = 1024; float16 sums stall
    f = tracer.jit(lambda v, w: v @ w)
    assert "matmul" not in str(f.lower(v, w).graph)
    got = f(v, w)
    assert got.dtype == np.float16 and (got == 1024).all()


def test_a_users_matmul_impl_is_left_alone():
    v, w = np.ones(4, np.float32), np.ones((4, 3), np.float32)
    try:
        registry.register_kernel("matmul", "llvm", NumpyInProgram("a user's matmul"))
        assert "matmul" in str(tracer.jit(lambda v, w: v @ w).lower(v, w).graph)
    finally:
        registry.register_kernel("matmul", "llvm", KERNELS["matmul"])
