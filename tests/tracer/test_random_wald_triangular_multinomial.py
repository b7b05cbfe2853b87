"""tracer.random.triangular, wald and multinomial (JAX's samplers): moments against the
distributions' exact ones, the same bits eagerly, under jit on both backends and under vmap
over keys, and the reparameterised gradient of triangular."""
import numpy as np
import pytest

import tracer
import tracer.random as tr

KEY = tr.PRNGKey(3)
N = 40000
P = np.array([0.2, 0.5, 0.3], np.float32)
SAMPLERS = {
    "triangular": lambda k: tr.triangular(k, -1.0, 0.5, 2.0, (8,)),
    "wald": lambda k: tr.wald(k, np.array([0.5, 1.5], np.float32), (4, 2)),
    "multinomial": lambda k: tr.multinomial(k, 7.0, P, shape=(4, 3)),
}


def test_moments():
    x = np.asarray(tr.triangular(KEY, -1.0, 0.5, 2.0, (N,)), np.float64)
    l, m, r = -1.0, 0.5, 2.0
    assert x.min() >= l and x.max() <= r
    np.testing.assert_allclose(x.mean(), (l + m + r) / 3, atol=0.02)
    np.testing.assert_allclose(x.var(), (l * l + m * m + r * r - l * m - l * r - m * r) / 18,
                               rtol=0.03)
    w = np.asarray(tr.wald(KEY, 0.8, (N,)), np.float64)
    assert w.min() > 0
    np.testing.assert_allclose(w.mean(), 0.8, rtol=0.02)            # variance mean^3
    np.testing.assert_allclose(w.var(), 0.8 ** 3, rtol=0.08)
    c = np.asarray(tr.multinomial(KEY, 10.0, P, shape=(N // 4, 3)))
    assert c.dtype == np.float32 and (c.sum(1) == 10).all() and (c == np.round(c)).all()
    np.testing.assert_allclose(c.mean(0), 10 * P, rtol=0.03)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_bits_everywhere(name):
    sample = SAMPLERS[name]
    want = np.asarray(sample(KEY))
    for backend in ("numpy", "llvm"):
        np.testing.assert_array_equal(tracer.jit(sample, backend=backend)(KEY), want)
    keys = tr.split(KEY, 3)
    np.testing.assert_array_equal(tracer.vmap(sample)(keys)[1], sample(keys[1]))


def test_triangular_gradient_is_the_mean_gradient():
    grads = tracer.grad(lambda l, m, r: tr.triangular(KEY, l, m, r, (N,)).mean(),
                        argnums=(0, 1, 2))(np.float32(-1), np.float32(0.5), np.float32(2))
    np.testing.assert_allclose(grads, [1 / 3] * 3, atol=0.02)


def test_multinomial_default_shape_is_p_shape():
    p = np.array([[0.5, 0.5], [0.1, 0.9]], np.float32)
    out = tr.multinomial(KEY, np.array([3.0, 5.0], np.float32), p)
    assert out.shape == (2, 2)
    np.testing.assert_array_equal(np.asarray(out).sum(1), [3, 5])
