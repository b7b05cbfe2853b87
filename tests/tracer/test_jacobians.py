"""jacfwd / jacrev / hessian / linearize against analytic results, with pytrees, under
jit, and nested in vmap."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import GradientError
from tracer.jacobians import hessian, jacfwd, jacrev, linearize
from tracer.vmap import vmap

RNG = np.random.default_rng(1)
X = RNG.standard_normal(3)
W = RNG.standard_normal((3, 2))


def f(x):
    return tnp.tanh(x @ W)


def jac_f(x):      # d tanh(x W)_j / d x_i = (1 - tanh^2)_j W_ij
    return ((1 - np.tanh(x @ W) ** 2)[:, None] * W.T)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_matches_analytic_eagerly_and_under_jit(jac):
    np.testing.assert_allclose(jac(f)(X), jac_f(X), rtol=1e-12)
    np.testing.assert_allclose(tracer.jit(jac(f))(X), jac_f(X), rtol=1e-12)
    np.testing.assert_allclose(vmap(jac(f))(np.stack([X, 2 * X])),
                               [jac_f(X), jac_f(2 * X)], rtol=1e-12)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_pytrees_and_argnums_as_jax(jac):
    def g(a, b, scale):
        return {"p": a * b[0, 0] * scale, "q": tnp.sum(a)}
    out = jac(g, argnums=(0, 1))(X, W, 2.0)
    assert [v.shape for v in out["p"]] == [(3, 3), (3, 3, 2)]
    assert [v.shape for v in out["q"]] == [(3,), (3, 2)]
    np.testing.assert_allclose(out["p"][0], np.eye(3) * W[0, 0] * 2)
    want = np.zeros((3, 3, 2))
    want[:, 0, 0] = X * 2
    np.testing.assert_allclose(out["p"][1], want)
    np.testing.assert_allclose(out["q"][0], np.ones(3))
    single = jac(lambda d: d["u"] * 3.0)({"u": X})
    np.testing.assert_allclose(single["u"], 3 * np.eye(3))


def test_hessian_of_a_100_input_function():
    x = RNG.standard_normal(100)

    def h(v):
        return tnp.sum(tnp.sin(v) * v[0]) + tnp.sum(v ** 3)
    want = np.diag(-np.sin(x) * x[0] + 6 * x)
    want[0, :] += np.cos(x)
    want[:, 0] += np.cos(x)
    np.testing.assert_allclose(hessian(h)(x), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tracer.jit(hessian(h))(x), want, rtol=1e-10, atol=1e-12)


def test_linearize_matches_jvp_and_runs_only_the_tangent_part():
    out, f_jvp = linearize(f, X)
    np.testing.assert_allclose(out, np.tanh(X @ W))
    for t in (np.ones(3), RNG.standard_normal(3)):
        np.testing.assert_allclose(f_jvp(t), tracer.jvp(f, (X,), (t,))[1], rtol=1e-12)
    with pytest.raises(GradientError, match="tangent shape"):
        f_jvp(np.ones(4))


def test_linearize_pytree():
    out, f_jvp = linearize(lambda d: {"s": d["a"] * d["b"]}, {"a": X, "b": 2 * X})
    t = f_jvp({"a": np.ones(3), "b": np.zeros(3)})
    np.testing.assert_allclose(t["s"], 2 * X)


def test_vmap_of_hessian_under_jit_and_scalar_inputs():
    xs = RNG.standard_normal((4, 5))

    def h(v):
        return tnp.sum(tnp.sin(v) ** 2)
    want = np.stack([np.diag(2 * np.cos(2 * x)) for x in xs])
    np.testing.assert_allclose(tracer.jit(vmap(hessian(h)))(xs), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jacfwd(lambda s: s * s)(3.0), 6.0)
    np.testing.assert_allclose(jacrev(lambda s: tnp.sin(s))(np.float64(0.5)), np.cos(0.5))
