"""logaddexp and logaddexp2 compute one power of their base per element, in their value
and in their gradient, while staying NumPy's values bit for bit (ties, signed zeros,
infinities, NaN) on both backends; their derivatives at ties are tests/tracer/
test_grad_ties.py's."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.4, 88.0, 100.0, -100.0, 1e30, -1e30, 710.0,
                    np.inf, -np.inf, np.nan])
X, Y = np.repeat(SPECIAL, SPECIAL.size), np.tile(SPECIAL, SPECIAL.size)


def _kernels(f, *args):
    return [n.kernel for n in tracer.make_graph(f)(*args).nodes]


@pytest.mark.parametrize("name, power", [("logaddexp", "exp"), ("logaddexp2", "pow")])
def test_one_power_per_element_in_value_and_gradient(name, power):
    f = getattr(tnp, name)
    x = np.linspace(-3, 3, 7)
    assert _kernels(f, x, x[::-1]).count(power) == 1
    grad = tracer.grad(lambda x, y: tnp.sum(f(x, y)), argnums=(0, 1))
    assert _kernels(grad, x, x[::-1]).count(power) == 1


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_values_are_numpys_at_special_points(backend, name):
    got = tracer.jit(getattr(tnp, name), backend=backend)(X, Y)
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(X, Y)
    np.testing.assert_array_equal(got, want)


def test_gradient_is_the_logistic_weight_and_nan_stays_nan():
    x = np.array([0.3, 0.3, -np.inf, np.inf, np.inf, np.nan, np.nan])
    y = np.array([0.3, -2.0, 0.5, 1.0, np.inf, 1.0, np.inf])
    gx, gy = tracer.grad(lambda x, y: tnp.sum(tnp.logaddexp(x, y)), argnums=(0, 1))(x, y)
    with np.errstate(over="ignore", invalid="ignore"):
        w = 1 / (1 + np.exp(y[:2] - x[:2]))
    np.testing.assert_allclose(gx[:2], w, rtol=1e-15)
    np.testing.assert_allclose(gy[:2], 1 - w, rtol=1e-15)
    np.testing.assert_array_equal(gx[2:5], [0.0, 1.0, 0.5])     # maximum's split at inf
    np.testing.assert_array_equal(gy[2:5], [1.0, 0.0, 0.5])
    assert np.isnan(gx[5:]).all() and np.isnan(gy[5:]).all()
