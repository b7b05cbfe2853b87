"""lax.conv_transpose(use_consistent_padding=True), as jax.lax (PyTorch's rule): explicit
padding is the forward convolution's, so with transpose_kernel=True the transposed
convolution is the forward one's input gradient; eagerly, under jit on both backends, under
grad (whose adjoint is the forward convolution again) and vmap."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(6)
DN = ("NHWC", "HWIO", "NHWC")
X = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
W = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
STRIDES, PADS = (2, 1), ((1, 2), (0, 1))      # (6 + 3 - 3) % 2 == 0: no output padding


def forward(x):
    return lax.conv_general_dilated(x, W, STRIDES, PADS, dimension_numbers=DN)


def transposed(y):
    return lax.conv_transpose(y, W, STRIDES, PADS, dimension_numbers=DN,
                              transpose_kernel=True, use_consistent_padding=True)


Y = RNG.standard_normal(forward(X).shape).astype(np.float32)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_consistent_padding_is_the_input_gradient(backend):
    _, pullback = tracer.vjp(forward, X)
    run = transposed if backend is None else tracer.jit(transposed, backend=backend)
    np.testing.assert_allclose(run(Y), pullback(Y)[0], rtol=1e-5, atol=1e-5)


def test_grad_and_vmap():
    cot = RNG.standard_normal(X.shape).astype(np.float32)
    g = tracer.grad(lambda y: (transposed(y) * cot).sum())(Y)
    np.testing.assert_allclose(g, forward(cot), rtol=1e-5, atol=1e-5)
    out = tracer.vmap(transposed)(np.stack([Y, 2 * Y]))
    np.testing.assert_allclose(out[1], 2 * transposed(Y), rtol=1e-5, atol=1e-5)
