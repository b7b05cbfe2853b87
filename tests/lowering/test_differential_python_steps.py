"""A control-flow node whose region holds a kernel that runs in Python (LAPACK's, a
NumpyInProgram) runs whole as a Python step, its regions interpreted by the NumPy kernels;
those regions have been through the llvm rewrites, so a matmul there may read an operand
transposed in place (`transpose_a`/`transpose_b`, lowering/llvm/rewrites.py), which the
NumPy matmul must honour. Found by the differential tests: jit of such a loop raised
"matmul() got an unexpected keyword argument 'transpose_b'"."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

RNG = np.random.default_rng(0)
A = RNG.standard_normal((6, 4))
B = RNG.standard_normal((6, 3))

BODIES = {      # (6, 4), (6, 3) -> (6, 4); each reads a transposed operand next to LAPACK
    "x.T @ y": lambda c, b: c @ tnp.linalg.inv(c.T @ c + 6 * tnp.eye(4)) + b @ (b.T @ c) / 9,
    "x @ y.T": lambda c, b: tnp.linalg.inv(c @ c.T + 6 * tnp.eye(6)) @ c,
    "solve": lambda c, b: tnp.linalg.solve(c.T @ c + 6 * tnp.eye(4), (b @ b.T @ c).T).T,
}


@pytest.mark.parametrize("loop", ["fori_loop", "while_loop"])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_interpreted_regions_read_transposed_operands(loop, body):
    step = BODIES[body]
    if loop == "fori_loop":
        f = lambda a, b: lax.fori_loop(0, 2, lambda i, c: step(c, b) * 0.5 + a, a)
    else:
        f = lambda a, b: lax.while_loop(lambda c: c[1] < 2,
                                        lambda c: (step(c[0], b) * 0.5 + a, c[1] + 1), (a, 0))[0]
    want = tracer.jit(f, backend="numpy")(A, B)
    np.testing.assert_allclose(tracer.jit(f)(A, B), want, rtol=1e-10, atol=1e-12)


def test_gradient_of_a_loop_over_an_inverse():
    """The backward loop holds the inverse's gradient and the transposed products."""
    loss = tracer.grad(lambda a: tnp.sum(lax.fori_loop(
        0, 2, lambda i, c: tnp.tanh(BODIES["x.T @ y"](c, B)), a) ** 2))
    want = tracer.jit(loss, backend="numpy")(A)
    np.testing.assert_allclose(tracer.jit(loss)(A), want, rtol=1e-9, atol=1e-12)
