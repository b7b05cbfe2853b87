"""Eager transforms see concrete values: Python control flow on traced values works inside
grad, value_and_grad, vjp, jvp, jacfwd, jacrev, hessian and linearize of a function that
is not jitted, as in JAX and autograd; under jit (and make_graph, vmap) it stays an error."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir import errors

POS = np.array([0.3, 1.2, -0.4])      # sum > 0: the first branch
NEG = np.array([-0.3, 0.2, -1.4])     # sum < 0: the second


def branchy(x):
    if tnp.sum(x) > 0:
        return tnp.sin(x) * x
    return tnp.exp(x)


def d_branchy(x):
    """Elementwise derivative of the branch taken at x, and its second derivative."""
    if x.sum() > 0:
        return np.cos(x) * x + np.sin(x), 2 * np.cos(x) - np.sin(x) * x
    return np.exp(x), np.exp(x)


def total(x):
    return tnp.sum(branchy(x))


TRANSFORMS = {
    "grad": (lambda x: tracer.grad(total)(x), lambda d, d2: d),
    "value_and_grad": (lambda x: tracer.value_and_grad(total)(x)[1], lambda d, d2: d),
    "vjp": (lambda x: tracer.vjp(branchy, x)[1](np.arange(3.0))[0],
            lambda d, d2: np.arange(3.0) * d),
    "jvp": (lambda x: tracer.jvp(branchy, (x,), (np.arange(3.0),))[1],
            lambda d, d2: np.arange(3.0) * d),
    "jacfwd": (lambda x: tracer.jacfwd(branchy)(x), lambda d, d2: np.diag(d)),
    "jacrev": (lambda x: tracer.jacrev(branchy)(x), lambda d, d2: np.diag(d)),
    "hessian": (lambda x: tracer.hessian(total)(x), lambda d, d2: np.diag(d2)),
    "linearize": (lambda x: tracer.linearize(branchy, x)[1](np.arange(3.0)),
                  lambda d, d2: np.arange(3.0) * d),
}


@pytest.mark.parametrize("x", [POS, NEG], ids=["first_branch", "second_branch"])
@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_if_on_a_traced_value_under_each_transform(name, x):
    run, want = TRANSFORMS[name]
    np.testing.assert_allclose(run(x), want(*d_branchy(x)), rtol=1e-12)


@pytest.mark.parametrize("x", [POS, NEG], ids=["first_branch", "second_branch"])
def test_values_follow_the_branch_and_check_grads_agrees(x):
    value, _ = tracer.value_and_grad(total)(x)
    want = np.sum(np.sin(x) * x) if x.sum() > 0 else np.sum(np.exp(x))
    np.testing.assert_allclose(value, want, rtol=1e-12)
    out, _ = tracer.jvp(branchy, (x,), (np.ones(3),))
    np.testing.assert_allclose(out, np.sin(x) * x if x.sum() > 0 else np.exp(x), rtol=1e-12)
    tracer.check_grads(branchy, (x,), order=2)


def test_the_recorded_branch_is_what_later_calls_of_the_pullback_use():
    out, pull = tracer.vjp(branchy, POS)
    d, _ = d_branchy(POS)
    for ct in (np.ones(3), np.array([2.0, -1.0, 0.5])):
        np.testing.assert_allclose(pull(ct)[0], ct * d, rtol=1e-12)


def poly(x, n):
    """sum_{k<n} x**k by Horner, with the trip count taken from a traced integer."""
    y = tnp.zeros_like(x)
    for _ in range(int(n)):
        y = y * x + 1.0
    return y


def test_for_range_int_of_a_traced_argument():
    for n in (2, 5):
        g = tracer.grad(poly)(1.5, np.int64(n))
        np.testing.assert_allclose(g, sum(k * 1.5 ** (k - 1) for k in range(1, n)), rtol=1e-12)
    # range() of the traced int itself goes through __index__
    np.testing.assert_allclose(tracer.grad(lambda x, n: sum(x * i for i in range(n)))(
        2.0, np.int64(4)), 6.0)


def test_arguments_outside_argnums_reach_the_function_as_they_are():
    x = np.arange(6.0)

    def f(x, n, axis):
        assert type(n) is int and type(axis) is int       # not traced, as in JAX
        rows = tnp.sum(x.reshape(n, -1), axis=axis)
        return tnp.sum(rows * tnp.arange(n if axis else 6 // n))
    np.testing.assert_allclose(tracer.grad(f)(x, 3, 0), np.tile([0.0, 1.0], 3))
    np.testing.assert_allclose(tracer.value_and_grad(f)(x, 2, 1)[1],
                               np.repeat([0.0, 1.0], 3))
    g = tracer.grad(lambda a, n, b: a * tnp.ones(n) @ b, argnums=(2, 0))(2.0, 3, np.ones(3))
    np.testing.assert_allclose(g[0], np.full(3, 2.0))
    np.testing.assert_allclose(g[1], 3.0)
    # an undifferentiated array stays a graph input, and its values still steer Python
    h = tracer.grad(lambda x, data: tnp.sum(x * data) if data[0] > 0 else tnp.sum(-x))
    np.testing.assert_allclose(h(x, x + 1), x + 1)
    np.testing.assert_allclose(h(x, x - 1), -np.ones(6))
    # a class (np.ndarray has an `ndim` descriptor) is passed as it is, as JAX passes it
    k = tracer.grad(lambda x, cls: tnp.sum(x) * float(isinstance(x, cls) or 2))
    np.testing.assert_allclose(k(x, np.ndarray), np.full(6, 2.0))


def newton_sqrt(a):
    y = a
    while tnp.abs(y * y - a) > 1e-10:
        y = 0.5 * (y + a / y)
    return y


@pytest.mark.parametrize("a", [4.0, 0.3])
def test_while_on_a_traced_value(a):
    value, g = tracer.value_and_grad(newton_sqrt)(np.float64(a))
    np.testing.assert_allclose(value, np.sqrt(a), rtol=1e-12)
    np.testing.assert_allclose(g, 0.5 / np.sqrt(a), rtol=1e-6)
    np.testing.assert_allclose(tracer.jvp(newton_sqrt, (a,), (1.0,))[1], 0.5 / np.sqrt(a),
                               rtol=1e-6)


def test_a_loop_testing_its_value_each_iteration_evaluates_each_node_once(monkeypatch):
    import tracer.concrete
    evaluated, run = [], tracer.concrete.run
    monkeypatch.setattr(tracer.concrete, "run", lambda g, *a: evaluated.append(len(g.nodes))
                        or run(g, *a))

    def decay(x):
        y, steps = x, 0
        while y > 1e-3:                      # one multiply and one comparison per step
            y, steps = y * 0.97, steps + 1
        return y, steps
    (y, steps), g = tracer.value_and_grad(decay, has_aux=True)(1.0)
    assert steps == 227 and len(evaluated) == steps + 1
    assert sum(evaluated) == 2 * steps + 1
    np.testing.assert_allclose(g, 0.97 ** steps, rtol=1e-12)


def test_float_item_and_tolist_of_traced_values():
    def f(x):
        if float(tracer.lax.stop_gradient(tnp.max(x))) > 1.0:   # a constant: no gradient
            x = x * 3.0
        scale = x[0].item()                  # a Python constant: the gradient skips it
        signs = tnp.sign(x).tolist()
        return scale * sum(xi * s for xi, s in zip(x, signs))
    for x in (POS, NEG):
        big = 3.0 if x.max() > 1.0 else 1.0
        np.testing.assert_allclose(tracer.grad(f)(x), big * x[0] * big * np.sign(x),
                                   rtol=1e-12)
    assert isinstance(tracer.vjp(lambda x: x * x.item(), 2.0)[0], (float, np.ndarray,
                                                                   np.floating))


def piecewise(x):
    return x * x if x < 2 else x ** 3


def test_nested_transforms_see_the_outer_values():
    for x, d2 in ((1.0, 2.0), (3.0, 18.0)):
        np.testing.assert_allclose(tracer.grad(tracer.grad(piecewise))(x), d2)
        np.testing.assert_allclose(tracer.jvp(tracer.grad(piecewise), (x,), (1.0,))[1], d2)
        np.testing.assert_allclose(tracer.hessian(piecewise)(x), d2)

    def inner_branch(x):               # the inner function branches on a value computed
        y = tracer.grad(piecewise)(x)  # from the outer trace's input
        return y * y if y > 5 else -y
    for x in (1.0, 3.0):
        tracer.check_grads(inner_branch, (np.float64(x),), order=1)


def test_vmap_inside_grad():
    def f(x):
        norms = tracer.vmap(lambda r: tnp.sum(r * r))(x)
        if tnp.max(norms) > 4.0:
            return tnp.sum(tnp.sqrt(norms))
        return tnp.sum(norms)
    small, big = np.full((2, 3), 0.5), np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(tracer.grad(f)(small), 2 * small, rtol=1e-12)
    np.testing.assert_allclose(tracer.grad(f)(big),
                               big / np.linalg.norm(big, axis=1, keepdims=True), rtol=1e-12)


def test_branching_on_the_results_of_jit_and_lax_control_flow_inside_grad():
    inner = tracer.jit(lambda x: tnp.sin(x) * 2, backend="numpy")

    def f(x):
        y = tracer.lax.cond(x > 0, lambda v: v * 2, lambda v: v * 3, inner(x))
        z = tracer.lax.fori_loop(0, 3, lambda i, v: v * 1.5, y)
        return z * z if z > 4 else z
    for x in (1.0, 0.3, -0.5):
        y = 2 * np.sin(x) * (2 if x > 0 else 3)
        dz = 2 * np.cos(x) * (2 if x > 0 else 3) * 1.5 ** 3
        z = y * 1.5 ** 3
        np.testing.assert_allclose(tracer.grad(f)(x), 2 * z * dz if z > 4 else dz, rtol=1e-12)


def test_the_llvm_eager_backend_evaluates_the_branch_condition():
    tracer.set_backend("llvm")
    try:
        np.testing.assert_allclose(tracer.grad(total)(NEG), d_branchy(NEG)[0], rtol=1e-12)
    finally:
        tracer.set_backend("numpy")


@pytest.mark.parametrize("wrap,arg", [
    (lambda f: tracer.jit(tracer.grad(f), backend="numpy"), 1.0),
    (lambda f: tracer.jit(lambda x: tracer.grad(f)(x) * 2, backend="numpy"), 1.0),
    (lambda f: tracer.make_graph(tracer.grad(f)), 1.0),
    (lambda f: tracer.vmap(tracer.grad(f)), np.array([1.0, 3.0])),
], ids=["jit_grad", "grad_in_jit", "make_graph", "vmap_grad"])
def test_abstract_traces_keep_the_error_and_its_hint(wrap, arg):
    with pytest.raises(errors.TracerBoolConversionError) as info:
        wrap(piecewise)(arg)
    assert isinstance(info.value, TypeError)
    msg = str(info.value)
    assert "lax.cond" in msg and "static_argnums" in msg and "piecewise" in msg


def test_numpy_conversion_stays_an_error_under_grad():
    with pytest.raises(errors.ConcretizationError, match="carries no gradient"):
        tracer.grad(lambda x: tnp.sum(np.asarray(x) * x))(POS)
