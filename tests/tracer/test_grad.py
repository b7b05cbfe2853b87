"""The reverse-mode API (vjp, grad, value_and_grad), the graphs it builds, the kinks
(JAX conventions) and where()'s NaN guarantee."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import grad, jvp, make_graph, value_and_grad, vjp


def f_xy(x, y):
    return tnp.sum(tnp.sin(x) * tnp.exp(y))


X = np.array([0.1, 0.5, -1.2])
Y = np.array([0.3, -0.4, 0.8])


def test_grad_argnums_int_and_tuple():
    np.testing.assert_allclose(grad(f_xy)(X, Y), np.cos(X) * np.exp(Y), rtol=1e-14)
    np.testing.assert_allclose(grad(f_xy, argnums=1)(X, Y), np.sin(X) * np.exp(Y), rtol=1e-14)
    gx, gy = grad(f_xy, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, np.cos(X) * np.exp(Y), rtol=1e-14)
    np.testing.assert_allclose(gy, np.sin(X) * np.exp(Y), rtol=1e-14)
    (g,) = grad(f_xy, argnums=(-1,))(X, Y)
    np.testing.assert_allclose(g, gy, rtol=1e-14)


def test_value_and_grad_and_has_aux():
    v, g = value_and_grad(f_xy)(X, Y)
    np.testing.assert_allclose(v, np.sum(np.sin(X) * np.exp(Y)), rtol=1e-14)
    np.testing.assert_allclose(g, np.cos(X) * np.exp(Y), rtol=1e-14)

    def with_aux(x, y):
        return f_xy(x, y), {"double": 2 * x, "n": 3}
    (v2, aux), (gx, gy) = value_and_grad(with_aux, argnums=(0, 1), has_aux=True)(X, Y)
    assert v2 == v and aux["n"] == 3
    np.testing.assert_allclose(aux["double"], 2 * X)
    g2, aux2 = grad(with_aux, has_aux=True)(X, Y)
    np.testing.assert_allclose(g2, g, rtol=1e-14)
    np.testing.assert_allclose(aux2["double"], 2 * X)


def test_grad_of_pytree_arguments():
    params = {"w": np.array([1.0, 2.0]), "b": [np.array(0.5), None]}
    g = grad(lambda p, x: tnp.sum(p["w"] * x + p["b"][0]))(params, np.array([3.0, 4.0]))
    assert set(g) == {"w", "b"} and g["b"][1] is None
    np.testing.assert_allclose(g["w"], [3.0, 4.0])
    np.testing.assert_allclose(g["b"][0], 2.0)


def test_grad_of_python_scalars_and_unused_arguments():
    assert grad(lambda x: x * x)(3.0) == 6.0
    assert grad(lambda x: 3.0)(1.0) == 0.0
    np.testing.assert_array_equal(grad(lambda x, y: tnp.sum(y))(X, Y), np.zeros(3))
    np.testing.assert_allclose(grad(lambda x, n: tnp.sum(x ** n))(X, 3), 3 * X ** 2)


def test_vjp_tuple_per_primal_and_aux():
    out, vjp_fn = vjp(lambda x, y: (tnp.sin(x) * y, tnp.sum(x)), X, Y)
    np.testing.assert_allclose(out[0], np.sin(X) * Y)
    gx, gy = vjp_fn((np.ones(3), 2.0))
    np.testing.assert_allclose(gx, np.cos(X) * Y + 2.0)
    np.testing.assert_allclose(gy, np.sin(X))
    out, vjp_fn, aux = vjp(lambda x: (tnp.tanh(x), x * 3), X, has_aux=True)
    np.testing.assert_allclose(aux, 3 * X)
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0], 1 - np.tanh(X) ** 2)


def test_vjp_fn_checks_the_cotangent():
    _, vjp_fn = vjp(tnp.sin, X)
    with pytest.raises(tracer.GradientError, match="shape"):
        vjp_fn(np.ones(2))
    with pytest.raises(tracer.GradientError, match="structure"):
        vjp_fn((np.ones(3),))


def test_vjp_runs_forward_once_and_backward_only_in_vjp_fn():
    _, vjp_fn = vjp(lambda x: tnp.exp(x) * 2, X)
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0], 2 * np.exp(X))
    np.testing.assert_allclose(vjp_fn(2 * np.ones(3))[0], 4 * np.exp(X))


def test_make_graph_of_grad_prints_forward_and_backward_kernels():
    text = str(make_graph(grad(lambda x: tnp.sum(tnp.tanh(x) ** 2)))(X))
    lines = text.splitlines()
    assert any("= tanh a" in ln for ln in lines)                 # forward
    assert sum(" mul " in ln for ln in lines) >= 2              # square and chain rule
    assert any(" sub " in ln for ln in lines)                   # tanh' = 1 - tanh^2
    assert not any("reduce_sum" in ln for ln in lines)          # the value is not needed
    vg = str(make_graph(value_and_grad(lambda x: tnp.sum(tnp.tanh(x) ** 2)))(X))
    assert "reduce_sum" in vg


def test_only_differentiated_inputs_get_gradient_work():
    """grad wrt x of f(x, y) computes nothing for y: no cos(y) (y's derivative of sin)."""
    def f(x, y):
        return tnp.sum(tnp.exp(x) * tnp.sin(y))
    gx = make_graph(grad(f, argnums=0))(X, Y)
    kernels = [n.kernel for n in gx.nodes]
    assert "cos" not in kernels and "exp" in kernels and "sin" in kernels
    gy = make_graph(grad(f, argnums=1))(X, Y)
    assert "cos" in [n.kernel for n in gy.nodes]
    both = make_graph(grad(f, argnums=(0, 1)))(X, Y)
    assert len(both.nodes) > len(gx.nodes)
    # the second argument is an input of the graph, but nothing but the forward uses it
    y_var = gx.invars[1]
    assert [n.kernel for n in gx.nodes if y_var in n.inputs] == ["sin"]


# ---- kinks follow JAX ---------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_kinks_follow_jax():
    assert grad(tnp.abs)(0.0) == 1.0 and grad(tnp.abs)(-0.0) == 1.0
    assert grad(tnp.abs)(-2.0) == -1.0
    assert grad(tnp.sqrt)(0.0) == np.inf
    assert grad(tracer.nn.relu)(0.0) == 0.0 and grad(tracer.nn.relu)(1e-300) == 1.0
    assert grad(lambda x, y: tnp.maximum(x, y), argnums=(0, 1))(1.0, 1.0) == (0.5, 0.5)
    assert grad(lambda x, y: tnp.minimum(x, y), argnums=(0, 1))(2.0, 2.0) == (0.5, 0.5)
    np.testing.assert_allclose(grad(lambda x: tnp.max(x))(np.array([1.0, 3.0, 3.0])),
                               [0, 0.5, 0.5])
    np.testing.assert_allclose(grad(lambda x: tnp.clip(x, -1, 1))(1.0), 0.5)
    # forward mode agrees (it is the transposed reverse mode)
    assert jvp(tnp.abs, (0.0,), (1.0,))[1] == 1.0
    assert jvp(tracer.nn.relu, (0.0,), (1.0,))[1] == 0.0


def test_relu_keeps_nan():
    assert np.isnan(tracer.nn.relu(np.array(np.nan)))


def test_pow_at_zero():
    assert grad(lambda x: x ** 0.0)(0.0) == 0.0
    g = grad(lambda x, y: x ** y, argnums=(0, 1))(0.0, 2.5)
    assert g == (0.0, 0.0)


def test_prod_with_zeros():
    x = np.array([2.0, 0.0, 3.0])
    np.testing.assert_allclose(grad(tnp.prod)(x), [0.0, 6.0, 0.0])
    np.testing.assert_allclose(grad(tnp.prod)(np.array([0.0, 0.0, 3.0])), [0.0, 0.0, 0.0])


# ---- where never leaks NaN from the branch not taken ---------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_where_gradient_ignores_the_branch_not_taken():
    # the untaken branch has an infinite derivative
    assert grad(lambda x: tnp.where(x > 0, x, np.inf * x))(1.0) == 1.0
    assert grad(lambda x: tnp.where(x > 0, x, np.inf * x))(-1.0) == np.inf
    # the untaken branch is NaN itself (JAX gives nan here; we give 0)
    safe_sqrt = (lambda x: tnp.where(x > 0, tnp.sqrt(x), 0.0))
    assert grad(safe_sqrt)(-1.0) == 0.0
    assert grad(safe_sqrt)(4.0) == 0.25
    assert grad(grad(safe_sqrt))(-1.0) == 0.0
    assert jvp(safe_sqrt, (-1.0,), (1.0,))[1] == 0.0
    assert jvp(grad(safe_sqrt), (-1.0,), (1.0,))[1] == 0.0
    # elementwise chains and nested wheres inside the untaken branch, on arrays
    x = np.array([-2.0, 0.0, 3.0])

    def f(x):
        return tnp.sum(tnp.where(x > 0, tnp.log(tnp.sqrt(x)) * 2, tnp.where(x < -1, 1 / x, x)))
    np.testing.assert_allclose(grad(f)(x), [-0.25, 1.0, 1 / 3])
    tracer.check_grads(f, (np.array([-2.0, -0.5, 3.0]),), order=2)
    # the same value used in both branches accumulates both masked contributions
    np.testing.assert_allclose(grad(lambda x: tnp.sum(tnp.where(x > 0, x * x, -x)))(x),
                               [-1.0, -1.0, 6.0])

