"""lax.conv_general_dilated's batch_group_count, precision and preferred_element_type, as
jax.lax: with G batch groups, output features of group g convolve the g-th consecutive
block of the lhs batch only (checked against plain convolutions of the blocks), eagerly,
under jit on both backends, under grad and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(4)
X = RNG.standard_normal((6, 2, 7, 5)).astype(np.float32)          # N=6: 3 groups of 2
W = RNG.standard_normal((6, 2, 3, 2)).astype(np.float32)          # O=6: 3 groups of 2
ARGS = ((1, 2), [(1, 0), (0, 1)], (1, 1), (2, 1))


def grouped(x, w):
    return lax.conv_general_dilated(x, w, *ARGS, batch_group_count=3,
                                    precision=lax.Precision.HIGHEST)


def blockwise(x, w):
    return np.concatenate([np.asarray(lax.conv_general_dilated(x[2 * g:2 * g + 2],
                                                               w[2 * g:2 * g + 2], *ARGS))
                           for g in range(3)], axis=1)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_batch_groups_are_blockwise_convolutions(backend):
    run = grouped if backend is None else tracer.jit(grouped, backend=backend)
    np.testing.assert_allclose(run(X, W), blockwise(X, W), rtol=1e-5, atol=1e-5)


def test_batch_groups_grad_and_vmap():
    cot = RNG.standard_normal(blockwise(X, W).shape).astype(np.float32)
    got = tracer.grad(lambda x, w: (grouped(x, w) * cot).sum(), argnums=(0, 1))(X, W)
    want = tracer.grad(lambda x, w: (tracer.numpy.concatenate(
        [lax.conv_general_dilated(x[2 * g:2 * g + 2], w[2 * g:2 * g + 2], *ARGS)
         for g in range(3)], axis=1) * cot).sum(), argnums=(0, 1))(X, W)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    out = tracer.vmap(grouped, in_axes=(None, 0))(X, np.stack([W, -W]))
    np.testing.assert_allclose(out[1], -blockwise(X, W), rtol=1e-5, atol=1e-5)


def test_preferred_element_type_and_bad_groups():
    out = lax.conv_general_dilated(X.astype(np.float16), W.astype(np.float16), *ARGS,
                                   batch_group_count=3, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    with pytest.raises(ValueError, match="batch_group_count=4 must divide"):
        lax.conv_general_dilated(X, W, *ARGS, batch_group_count=4)
    with pytest.raises(ValueError, match="unknown|bogus"):
        lax.conv_general_dilated(X, W, *ARGS, precision="bogus")
