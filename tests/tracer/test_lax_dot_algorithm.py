"""lax.DotAlgorithm and lax.DotAlgorithmPreset as dot precision, as jax.lax accepts them;
on CPU every product is computed at the operands' full precision."""
import numpy as np
import pytest

import tracer
from tracer import lax

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
B = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
ALGORITHMS = [lax.DotAlgorithmPreset.F32_F32_F32, "BF16_BF16_F32",
              lax.DotAlgorithm(np.float32, np.float32, np.float32)]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_dot_takes_an_algorithm(algorithm, backend):
    def f(a, b):
        return lax.dot(a, b, precision=algorithm)
    run = f if backend is None else tracer.jit(f, backend=backend)
    np.testing.assert_allclose(run(A, B), A @ B, rtol=1e-6)


def test_algorithm_under_grad_and_vmap():
    alg = lax.DotAlgorithmPreset.DEFAULT
    g = tracer.grad(lambda a: lax.dot(a, B, precision=alg).sum())(A)
    np.testing.assert_allclose(g, np.broadcast_to(B.sum(1), A.shape), rtol=1e-6)
    v = tracer.vmap(lambda a: lax.dot(a, B, precision=alg))(A)
    np.testing.assert_allclose(v, A @ B, rtol=1e-6)


def test_unknown_precision_name_is_a_value_error():
    with pytest.raises(ValueError, match="bogus"):
        lax.dot(A, B, precision="bogus")
