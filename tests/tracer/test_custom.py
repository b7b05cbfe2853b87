"""custom_vjp (JAX semantics) and custom_grad (TensorFlow.js semantics): several inputs
and outputs, pytrees, jit, grad of grad, jvp, vmap with nondiff arguments, and their
errors."""
import functools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import custom_grad, custom_vjp, grad, jit, jvp, make_graph, vjp

X = np.array([1.0, 2.0, -0.5])
Y = np.array([3.0, 4.0, 0.25])


# A two-input, two-output function with a correct custom rule, in both styles, and the
# same function without one: all three must agree on every derivative.
def plain(x, y):
    return x * y, tnp.sin(x + y)


@custom_vjp
def pair_vjp(x, y):
    return plain(x, y)


def _fwd(x, y):
    return plain(x, y), (x, y, tnp.cos(x + y))


def _bwd(res, g):
    x, y, c = res
    g_prod, g_sin = g
    return g_prod * y + g_sin * c, g_prod * x + g_sin * c


pair_vjp.defvjp(_fwd, _bwd)


@custom_grad
def pair_grad(x, y):
    c = tnp.cos(x + y)

    def grad_fn(dy):
        return dy[0] * y + dy[1] * c, dy[0] * x + dy[1] * c
    return plain(x, y), grad_fn


def loss(fun):
    def f(x, y):
        prod, s = fun(x, y)
        return tnp.sum(prod ** 2 + tnp.exp(s))
    return f


PAIRS = {"custom_vjp": pair_vjp, "custom_grad": pair_grad}


@pytest.mark.parametrize("name", PAIRS)
def test_values_and_gradients_match_autodiff(name):
    fun = PAIRS[name]
    for got, want in zip(fun(X, Y), plain(X, Y)):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    want = grad(loss(plain), argnums=(0, 1))(X, Y)
    for mode in (lambda f: f, lambda f: jit(f, backend="numpy")):
        got = mode(grad(loss(fun), argnums=(0, 1)))(X, Y)
        np.testing.assert_allclose(got, want, rtol=1e-14)
    got = grad(jit(loss(fun), backend="numpy"), argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(jit(fun, backend="numpy")(X, Y)[1], np.sin(X + Y))


@pytest.mark.parametrize("name", PAIRS)
def test_second_order_and_forward_mode_through_the_rule(name):
    fun = PAIRS[name]
    tracer.check_grads(fun, (X, Y), order=2)
    tracer.check_grads(loss(fun), (X, Y), order=2)
    tangents = (np.ones(3), np.array([0.5, -1.0, 2.0]))
    got = jvp(loss(fun), (X, Y), tangents)
    want = jvp(loss(plain), (X, Y), tangents)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    hvp = jvp(grad(loss(fun)), (X, Y), tangents)[1]
    np.testing.assert_allclose(hvp, jvp(grad(loss(plain)), (X, Y), tangents)[1], rtol=1e-13)


@custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (tnp.clip(g, -1.0, 1.0),))


@custom_grad
def scaled_gradient(x):
    return x * 1.0, lambda dy: dy * 10.0      # a bare gradient is fine for one input


def test_the_rule_replaces_autodiff():
    g = grad(lambda x: tnp.sum(3.0 * clip_gradient(x)))(X)
    np.testing.assert_allclose(g, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(grad(lambda x: tnp.sum(scaled_gradient(x) ** 2))(X), 20 * X)
    np.testing.assert_allclose(jvp(scaled_gradient, (X,), (np.ones(3),))[1], 10.0)
    np.testing.assert_allclose(jit(grad(lambda x: tnp.sum(scaled_gradient(x))),
                                   backend="numpy")(X), 10.0)


def test_softplus_with_a_stable_backward_to_second_order():
    @custom_vjp
    def softplus(x):
        return tnp.log1p(tnp.exp(-tnp.abs(x))) + tnp.maximum(x, 0)
    softplus.defvjp(lambda x: (softplus.fun(x), x),
                    lambda x, g: (g * tracer.nn.sigmoid(x),))
    x = np.array([-30.0, 0.3, 40.0])
    s, e = 1 / (1 + np.exp(-x)), np.exp(-np.abs(x))
    np.testing.assert_allclose(grad(lambda x: tnp.sum(softplus(x)))(x), s, rtol=1e-14)
    np.testing.assert_allclose(grad(lambda x: tnp.sum(grad(lambda z: tnp.sum(softplus(z)))(x)))(x),
                               e / (1 + e) ** 2, rtol=1e-12)   # sigmoid'(x), to 1e-18


def test_calling_outside_differentiation_runs_the_function_itself():
    calls = []

    @custom_vjp
    def f(x):
        calls.append("fun")
        return tnp.sin(x)

    def fwd(x):
        calls.append("fwd")
        return tnp.sin(x) + 1.0, tnp.cos(x)       # a different value: shows which ran
    f.defvjp(fwd, lambda c, g: (g * c,))
    np.testing.assert_allclose(f(X), np.sin(X))
    assert calls == ["fun"]
    np.testing.assert_allclose(jit(f)(X), np.sin(X))
    np.testing.assert_allclose(jit(lambda x: f(x) * 2.0, backend="numpy")(X), 2 * np.sin(X))
    value, g = tracer.value_and_grad(lambda x: tnp.sum(f(x)))(X)   # fwd runs under grad
    np.testing.assert_allclose(value, np.sum(np.sin(X) + 1.0))
    np.testing.assert_allclose(g, np.cos(X))
    assert "fwd" in calls


@custom_vjp
def softsign(x):
    return x / (1.0 + tnp.abs(x))


# JAX's documented pattern: fwd calls the decorated function itself
softsign.defvjp(lambda x: (softsign(x), x), lambda x, g: (g / (1.0 + tnp.abs(x)) ** 2,))


def plain_softsign(x):
    return x / (1.0 + tnp.abs(x))


def test_fwd_may_call_the_decorated_function():
    def total(fun):
        return lambda x: tnp.sum(fun(x) * x)
    for wrap in (lambda f: f, jit, lambda f: jit(f, backend="numpy")):
        np.testing.assert_allclose(wrap(softsign)(X), plain_softsign(X), rtol=1e-15)
        np.testing.assert_allclose(wrap(grad(total(softsign)))(X),
                                   grad(total(plain_softsign))(X), rtol=1e-14)
    np.testing.assert_allclose(grad(lambda x: tnp.sum(grad(total(softsign))(x)))(X),
                               grad(lambda x: tnp.sum(grad(total(plain_softsign))(x)))(X),
                               rtol=1e-13)
    tangent = (np.array([1.0, 0.5, -2.0]),)
    np.testing.assert_allclose(jvp(total(softsign), (X,), tangent),
                               jvp(total(plain_softsign), (X,), tangent), rtol=1e-14)
    np.testing.assert_allclose(jvp(softsign, (X,), tangent)[1],
                               jvp(plain_softsign, (X,), tangent)[1], rtol=1e-14)


def test_pytree_arguments_and_outputs_and_none_gradients():
    @custom_vjp
    def affine(p, x, n):
        return {"y": p["w"] * x + p["b"]}

    def fwd(p, x, n):
        return affine.fun(p, x, n), (p["w"], x)

    def bwd(res, g):
        w, x = res
        return {"w": g["y"] * x, "b": g["y"]}, g["y"] * w, None
    affine.defvjp(fwd, bwd)
    p = {"w": np.array([2.0, 3.0]), "b": np.array([0.5, 0.5])}
    n = np.array([1, 2])
    gp, gx = grad(lambda p, x: tnp.sum(affine(p, x, n)["y"] ** 2), argnums=(0, 1))(p, X[:2])
    y = p["w"] * X[:2] + p["b"]
    np.testing.assert_allclose(gp["w"], 2 * y * X[:2])
    np.testing.assert_allclose(gp["b"], 2 * y)
    np.testing.assert_allclose(gx, 2 * y * p["w"])


def test_custom_grad_saves_forward_work_instead_of_recomputing_it():
    @custom_grad
    def f(x):
        e = tnp.exp(x)
        return e * 2, lambda dy: dy * e * 2
    graph = make_graph(grad(lambda x: tnp.sum(f(x))))(X)
    (node,) = [n for n in graph.nodes if n.kernel == "custom_call"]
    assert [n.kernel for n in node.attrs["body"].nodes].count("exp") == 1
    assert "exp" not in [n.kernel for n in graph.nodes]
    np.testing.assert_allclose(grad(lambda x: tnp.sum(f(x)))(X), 2 * np.exp(X))
    assert "custom_call[" in str(graph) and "rule=custom_grad(f)" in str(graph)


def test_custom_functions_inside_vjp_and_jit_of_vjp():
    out, vjp_fn = vjp(pair_vjp, X, Y)
    gx, gy = vjp_fn((np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(gx, Y)
    np.testing.assert_allclose(gy, X)
    f = jit(lambda x, y: vjp(pair_grad, x, y)[1]((np.zeros(3), np.ones(3))), backend="numpy")
    np.testing.assert_allclose(f(X, Y)[0], np.cos(X + Y))


# ---- errors ------------------------------------------------------------------------------

def test_errors_name_the_custom_function():
    @custom_vjp
    def f(x, y):
        return x * y
    with pytest.raises(tracer.GradientError, match="defvjp"):
        f(X, Y)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(tracer.GradientError, match=r"custom_vjp\(f\).*one gradient.*2 expected"):
        grad(lambda x: tnp.sum(f(x, Y)))(X)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (tnp.sum(g), g))
    with pytest.raises(tracer.GradientError, match=r"custom_vjp\(f\).*shape \(\)"):
        grad(lambda x: tnp.sum(f(x, Y)))(X)
    f.defvjp(lambda x, y: x * y, lambda res, g: (g, g))
    np.testing.assert_allclose(f(X, Y), X * Y)        # fwd runs only under a trace
    with pytest.raises(tracer.GradientError, match=r"fwd must return a pair"):
        jit(f)(X, Y)
    f.defvjp(lambda x, y: ((x * y,), None), lambda res, g: (g, g))
    with pytest.raises(tracer.GradientError, match=r"fwd's output has structure"):
        grad(lambda x: tnp.sum(f(x, Y)))(X)
    f.defvjp(lambda x, y: (tnp.sum(x * y), None), lambda res, g: (g, g))
    with pytest.raises(tracer.GradientError, match=r"fwd's output f64\[\] does not match "
                                                   r"the function's output f64\[3\]"):
        grad(lambda x: tnp.sum(f(x, Y)))(X)

    @custom_grad
    def h(x):
        return x, None
    with pytest.raises(tracer.GradientError, match=r"custom_grad\(h\).*\(value, grad_fn\)"):
        h(X)


def test_closing_over_a_differentiated_value_is_an_error_not_a_zero():
    def f(w):
        @custom_vjp
        def times_w(x):
            return x * w
        times_w.defvjp(lambda x: (x * w, None), lambda _, g: (g * w,))
        return tnp.sum(times_w(X))
    with pytest.raises(tracer.GradientError, match="closes over a value"):
        grad(f)(np.ones(3))
    # closing over a value that is not differentiated is fine
    np.testing.assert_allclose(grad(lambda x, w: tnp.sum(jit(
        lambda x: _scale_by(w)(x), backend="numpy")(x)))(X, 2.0), 2.0)


def _scale_by(w):
    @custom_grad
    def scale(x):
        return x * w, lambda dy: dy * w
    return scale


@functools.partial(custom_vjp, nondiff_argnums=(0,))
def scaled_sin(n, x):
    """sin(x) * n, n a number, an array or a function of x; bwd gets n first and marks
    its gradient (x10, without n's derivative) so the rule is seen."""
    return tnp.sin(x) * (n(x) if callable(n) else n)


scaled_sin.defvjp(lambda n, x: (scaled_sin(n, x), x),
                  lambda n, x, g: (g * tnp.cos(x) * (n(x) if callable(n) else n) * 10,))


def _square(x):
    return x * x


def _scaled_grad(n, x):
    return grad(lambda x: tnp.sum(scaled_sin(n, x)))(x)


@pytest.mark.parametrize("n", [_square, 3.0, np.array(3.0)], ids=["function", "float",
                                                                    "array"])
def test_vmap_of_a_custom_vjp_with_an_unbatched_nondiff_argument(n):
    """The values jax 0.10.2 gives: an unbatched nondiff argument (closed over, or with
    in_axes None unless an array, which vmap traces) reaches fun, fwd and bwd as it is,
    also under grad and jit."""
    scale = n(X) if callable(n) else n
    given = [(tracer.vmap(scaled_sin, in_axes=(None, 0)),
              tracer.vmap(_scaled_grad, in_axes=(None, 0)))]
    for f, g in given * (not isinstance(n, np.ndarray)) + [
            (lambda n, x: tracer.vmap(lambda x: scaled_sin(n, x))(x),
             lambda n, x: tracer.vmap(lambda x: _scaled_grad(n, x))(x))]:
        np.testing.assert_allclose(f(n, X), np.sin(X) * scale)
        np.testing.assert_allclose(g(n, X), np.cos(X) * scale * 10)
        np.testing.assert_allclose(grad(lambda x: tnp.sum(f(n, x)))(X), np.cos(X) * scale * 10)
    if callable(n):    # jit may hold a function as a static argument, not an array
        for backend in ("llvm", "numpy"):
            g = jit(tracer.vmap(_scaled_grad, in_axes=(None, 0)), static_argnums=0,
                    backend=backend)
            np.testing.assert_allclose(g(n, X), np.cos(X) * scale * 10)


@pytest.mark.parametrize("transform", [
    lambda f: tracer.vmap(f), lambda f: jit(tracer.vmap(f, in_axes=(None, 0))),
    lambda f: tracer.vmap(f, in_axes=(None, 0))])
def test_a_batched_or_traced_nondiff_array_is_an_error(transform):
    """jax raises UnexpectedTracerError (a TypeError) for a batched or jitted one: the
    array is a Tracer there; vmap traces an unbatched array too (as NumPy arrays, eager
    values cannot take traced indices), where jax passes it as it is."""
    with pytest.raises(TypeError, match=r"custom_vjp\(scaled_sin\): an argument is marked "
                                        r"non-differentiable"):
        transform(_scaled_grad)(Y, X)
