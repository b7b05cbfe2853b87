"""A stack of matrices times one matrix (x @ w with x of shape (..., m, k), w (k, n), every
dense layer of a sequence model) is one product of the stack's rows: w is not copied per
batch element (a broadcast_to) and its gradient is one matmul, not a batched matmul summed
over the batch."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

RNG = np.random.default_rng(3)


def kernels(f, *args):
    """The kernels of f's graph, and the shapes of their outputs."""
    nodes = tracer.make_graph(f)(*args).nodes
    return [n.kernel for n in nodes], {o.aval.shape for n in nodes for o in n.outputs}


def test_the_product_and_its_gradients_are_plain_matmuls():
    x, w = RNG.standard_normal((4, 6, 5)), RNG.standard_normal((5, 3))
    assert kernels(lambda x, w: x @ w, x, w)[0].count("matmul") == 1
    grads = tracer.grad(lambda x, w: tnp.sum(tnp.tanh(x @ w)), argnums=(0, 1))
    ks, shapes = kernels(grads, x, w)
    assert (4, 5, 3) not in shapes and ks.count("matmul") == 3   # no copy of w per batch
    assert "reduce_sum" not in ks[ks.index("tanh"):]              # its gradient is not summed
    want_w = np.einsum("bmk,bmn->kn", x, 1 - np.tanh(x @ w) ** 2)
    np.testing.assert_allclose(grads(x, w)[1], want_w, rtol=1e-12)
    np.testing.assert_allclose(grads(x, w)[0], (1 - np.tanh(x @ w) ** 2) @ w.T, rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("sa, sb", [((2, 3, 4, 5), (5, 6)), ((3, 4, 5), (5,)), ((7, 1, 5), (5, 2)),
                                    ((0, 3, 5), (5, 4)), ((2, 3, 0), (0, 4)), ((2, 3, 4), (4, 0))])
def test_values_shapes_and_vmap_match_numpy(backend, sa, sb):
    a, b = RNG.standard_normal(sa).astype(np.float32), RNG.standard_normal(sb).astype(np.float32)
    got = tracer.jit(lambda a, b: a @ b, backend=backend)(a, b)
    assert got.shape == np.matmul(a, b).shape and got.dtype == np.float32
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5, atol=1e-5)
    batched = tracer.jit(tracer.vmap(lambda a, b: a @ b, in_axes=(0, None)), backend=backend)
    np.testing.assert_allclose(batched(a, b), np.matmul(a, b), rtol=1e-5, atol=1e-5)
