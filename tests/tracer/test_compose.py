"""Every pair of grad, jit, vjp, jvp nests, with no special cases: each transform turns
an elementwise function into its derivative (or itself, for jit), so a nest of k
derivative transforms around sin must give the k-th derivative of sin."""
import itertools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import grad, jit, jvp, make_graph, vjp


def f(x):
    """sin(x), written through a reshape, a broadcast and a reduction so the graphs are
    not trivial."""
    wide = tnp.broadcast_to(tnp.reshape(x, (1, -1)), (2, x.shape[0]))
    return tnp.sum(tnp.sin(wide), axis=0) / 2


def by_grad(g):
    return lambda x: grad(lambda z: tnp.sum(g(z)))(x)


def by_vjp(g):
    def h(x):
        out, vjp_fn = vjp(g, x)
        return vjp_fn(tnp.ones_like(out))[0]
    return h


def by_jvp(g):
    return lambda x: jvp(g, (x,), (tnp.ones_like(x),))[1]


def by_jit(g):
    return jit(g, backend="numpy")


TRANSFORMS = {"grad": by_grad, "vjp": by_vjp, "jvp": by_jvp, "jit": by_jit}
SIN_DERIVATIVES = [np.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)]
X = np.array([0.3, -1.1, 2.0])


@pytest.mark.parametrize("outer,inner", list(itertools.product(TRANSFORMS, repeat=2)))
def test_every_pair_nests(outer, inner):
    fun = TRANSFORMS[outer](TRANSFORMS[inner](f))
    order = (outer != "jit") + (inner != "jit")
    np.testing.assert_allclose(fun(X), SIN_DERIVATIVES[order](X), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("names", [("jit", "grad", "grad"), ("grad", "jit", "jvp"),
                                   ("jvp", "vjp", "grad"), ("jit", "jvp", "jvp")])
def test_triple_nests(names):
    fun = f
    for name in reversed(names):
        fun = TRANSFORMS[name](fun)
    order = sum(n != "jit" for n in names)
    np.testing.assert_allclose(fun(X), SIN_DERIVATIVES[order % 4](X), rtol=1e-12, atol=1e-14)


def loss(w):
    return tnp.sum(tnp.tanh(w @ np.array([[1.0, -2.0], [0.5, 3.0]])) ** 2) + tnp.sum(w ** 4)


def test_hessian_vector_product_by_jvp_of_grad():
    w, v = np.array([[0.2, -0.5], [1.0, 0.3]]), np.array([[1.0, 0.5], [-0.3, 2.0]])
    _, hvp = jvp(grad(loss), (w,), (v,))
    eps = 1e-6
    fd = (grad(loss)(w + eps * v) - grad(loss)(w - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(lambda w, v: jvp(grad(loss), (w,), (v,))[1],
                                   backend="numpy")(w, v), hvp, rtol=1e-13)
    tracer.check_grads(grad(loss), (w,), order=2)


def test_vjp_inside_jit_and_closures_over_outer_traces():
    def inner_uses_outer(w, x):
        return grad(lambda z: tnp.sum(tnp.tanh(z * w)))(x)   # closes over jit's w
    w, x = np.array([2.0, -1.0]), np.array([0.5, 0.25])
    want = w * (1 - np.tanh(x * w) ** 2)
    np.testing.assert_allclose(jit(inner_uses_outer, backend="numpy")(w, x), want, rtol=1e-14)
    # and the outer function can differentiate through the closed-over value
    g = grad(lambda w: tnp.sum(inner_uses_outer(w, x)))(w)
    tracer.check_grads(lambda w: inner_uses_outer(w, x), (w,), order=2)
    assert g.shape == (2,)


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1  (JAX's classic test)
    assert grad(lambda x: x * grad(lambda y: x + y)(1.0))(2.0) == 1.0
    assert grad(lambda x: grad(lambda y: x * y)(1.0))(2.0) == 1.0


def test_jit_of_grad_inlines_one_backward_graph_without_the_unused_forward():
    g = make_graph(jit(grad(lambda x: tnp.sum(tnp.sin(x))), backend="numpy"))(X)
    kernels = [n.kernel for n in g.nodes]
    assert "cos" in kernels and "sin" not in kernels
