"""custom_jvp as JAX's: the rule's tangent is used by jvp and, transposed, by grad and vjp,
to any order, under jit on both backends and vmap; defjvps, nondiff_argnums, a rule that
calls the function itself, and the function run as it is when nothing differentiates."""
import functools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import custom_jvp


@custom_jvp
def log1pexp(x):
    """JAX's docs example: the naive gradient is nan at large x; the rule's is not."""
    return tnp.log(1.0 + tnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + tnp.exp(x)))


@custom_jvp
def scaled_sin(x, y):
    return tnp.sin(x) * y


@scaled_sin.defjvp
def _scaled_sin_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return scaled_sin(x, y), tnp.cos(x) * dx * y + tnp.sin(x) * dy


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
def test_the_rule_gives_the_gradient_where_the_function_would_not():
    assert np.isnan(tracer.grad(lambda x: tnp.log(1.0 + tnp.exp(x)))(1000.0))
    assert tracer.grad(log1pexp)(1000.0) == 1.0
    assert log1pexp(3.0) == pytest.approx(np.log1p(np.exp(3.0)))


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_jvp_grad_and_second_order_use_the_rule(backend):
    x, y = 0.7, 1.3
    wrap = (lambda f: f) if backend is None else functools.partial(tracer.jit, backend=backend)
    gx, gy = wrap(tracer.grad(scaled_sin, argnums=(0, 1)))(x, y)
    np.testing.assert_allclose([gx, gy], [np.cos(x) * y, np.sin(x)], rtol=1e-12)
    _, t = wrap(lambda x, y: tracer.jvp(scaled_sin, (x, y), (1.0, 2.0)))(x, y)
    np.testing.assert_allclose(t, np.cos(x) * y + 2 * np.sin(x), rtol=1e-12)
    h = wrap(tracer.grad(tracer.grad(scaled_sin)))(x, y)
    np.testing.assert_allclose(h, -np.sin(x) * y, rtol=1e-12)


def test_vmap_of_grad():
    xs, ys = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(tracer.vmap(tracer.grad(scaled_sin))(xs, ys),
                               np.cos(xs) * ys, rtol=1e-12)


def test_defjvps_and_nondiff_argnums():
    @custom_jvp
    def product(x, y):
        return x * y
    product.defjvps(lambda g, ans, x, y: g * y * 10.0, None)     # a marked rule
    assert tracer.grad(product, argnums=(0, 1))(2.0, 3.0) == (30.0, 0.0)

    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _apply_jvp(fn, primals, tangents):
        return apply(fn, primals[0]), 2.0 * tangents[0]
    assert tracer.grad(lambda x: apply(tnp.sin, x))(1.0) == 2.0
    assert apply(tnp.sin, 1.0) == pytest.approx(np.sin(1.0))


def test_a_function_without_a_rule_says_what_to_do():
    f = custom_jvp(lambda x: x * 2.0)
    with pytest.raises(tracer.GradientError, match="defjvp"):
        tracer.grad(f)(1.0)
