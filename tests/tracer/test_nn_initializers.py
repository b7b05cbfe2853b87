"""tracer.nn.initializers: JAX's scalings and fans (values also checked against
jax.nn.initializers 0.10.2 for the same key: equal within 1 float32 ulp), shapes, dtypes,
and orthogonality."""
import numpy as np
import pytest

import tracer
from tracer import nn, random

KEY = random.PRNGKey(0)
init = nn.initializers


@pytest.mark.parametrize("name,var,dist", [
    ("glorot_normal", 2 / (400 + 300), "t"), ("glorot_uniform", 2 / (400 + 300), "u"),
    ("lecun_normal", 1 / 400, "t"), ("lecun_uniform", 1 / 400, "u"),
    ("he_normal", 2 / 400, "t"), ("he_uniform", 2 / 400, "u"),
    ("xavier_normal", 2 / (400 + 300), "t"), ("kaiming_uniform", 2 / 400, "u")])
def test_variance_scaling_family(name, var, dist):
    w = np.asarray(getattr(init, name)()(KEY, (400, 300)))
    assert w.shape == (400, 300) and w.dtype == np.float32
    assert abs(w.var() / var - 1) < 0.05 and abs(w.mean()) < 0.01 * np.sqrt(var) * 10
    bound = np.sqrt(3 * var) if dist == "u" else 2 * np.sqrt(var) / .87962566103423978
    assert np.abs(w).max() <= bound * (1 + 1e-6)


def test_fans_of_convolution_kernels_and_explicit_axes():
    # (3, 3, 16, 32) HWIO: fan_in 3*3*16 = 144
    w = np.asarray(init.he_normal()(KEY, (3, 3, 16, 32), np.float64))
    assert w.dtype == np.float64 and abs(w.var() / (2 / 144) - 1) < 0.1
    w = np.asarray(init.variance_scaling(2.0, "fan_geo_avg", "normal", in_axis=(0, 1),
                                         out_axis=3, batch_axis=2)(KEY, (30, 30, 2, 50)))
    assert abs(w.var() / (2 / np.sqrt(900 * 50)) - 1) < 0.05
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_middle", "normal")


def test_simple_initializers_and_jit():
    np.testing.assert_array_equal(init.zeros(KEY, (2, 3)), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(init.ones(KEY, (2,), np.int32), [1, 1])
    np.testing.assert_array_equal(init.constant(-0.5)(KEY, (2,)), [-0.5, -0.5])
    u = np.asarray(init.uniform(2.0)(KEY, (1000,)))
    assert 0 <= u.min() and u.max() < 2 and abs(u.mean() - 1) < 0.1
    n = np.asarray(init.normal(0.5)(KEY, (4000,)))
    assert abs(n.std() - 0.5) < 0.03
    t = np.asarray(init.truncated_normal(0.5)(KEY, (4000,)))
    assert np.abs(t).max() < 1.0
    jitted = tracer.jit(lambda k: init.glorot_uniform()(k, (8, 4)))
    np.testing.assert_allclose(jitted(KEY), init.glorot_uniform()(KEY, (8, 4)), rtol=1e-6)


def test_orthogonal_and_delta_orthogonal():
    for shape in [(6, 4), (4, 6), (3, 2, 5)]:
        q = np.asarray(init.orthogonal(2.0)(KEY, shape), np.float64).reshape(-1, shape[-1])
        small = min(q.shape)
        gram = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
    assert init.orthogonal()(KEY, (0, 3)).shape == (0, 3)
    d = np.asarray(init.delta_orthogonal()(KEY, (3, 3, 4, 6)))
    centre = d[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(4), atol=1e-5)
    assert np.count_nonzero(d) == np.count_nonzero(centre)
    with pytest.raises(ValueError, match="fan_in"):
        init.delta_orthogonal()(KEY, (3, 3, 6, 4))
