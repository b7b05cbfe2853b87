"""JAX's keywords on the differentiation transforms (has_aux, holomorphic, allow_int,
reduce_axes) and vjp's / linearize's functions as pytrees, against jax's values and
exceptions: eagerly, under jit on both backends, under vmap and grad."""
import inspect

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.array([0.5, -1.25, 2.0], np.float32)
Y = np.array([[1.5, -0.5], [0.25, 2.0], [-1.0, 0.75]], np.float32)
XI = np.array([3, -1, 2], np.int32)
MODES = ["eager", "llvm", "numpy"]


def run(mode, fun):
    """fun itself, or fun under jit on a backend."""
    return fun if mode == "eager" else tracer.jit(fun, backend=mode)


def close(got, want, rtol=2e-5, atol=1e-6):
    got_leaves, got_tree = tracer.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert len(got_leaves) == len(want_leaves), (got, want)
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def with_aux(np_):
    """f(x, y) -> (a pytree output, a pytree aux), written once for tnp and jnp."""
    def f(x, y):
        out = {"a": np_.sin(x) * y[:, 0], "b": np_.tanh(x @ y)}
        return out, (x * y[:, 1], np_.sum(x ** 2))
    return f


F, JF = with_aux(tnp), with_aux(jnp)


def test_the_transforms_take_jax_keywords():
    for name in ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jvp",
                 "linearize", "vjp"]:
        ours = inspect.signature(getattr(tracer, name)).parameters
        theirs = inspect.signature(getattr(jax, name)).parameters
        assert set(theirs) <= set(ours), (name, set(theirs) - set(ours))
        for k in theirs:
            if theirs[k].default is not inspect.Parameter.empty:
                assert ours[k].default == theirs[k].default, (name, k)


@pytest.mark.parametrize("mode", MODES)
def test_jvp_with_aux_matches_jax(mode):
    tx, ty = np.float32(0.5) * X, np.float32(-2.0) * Y
    got = run(mode, lambda x, y: tracer.jvp(F, (x, y), (tx, ty), has_aux=True))(X, Y)
    want = jax.jvp(JF, (X, Y), (tx, ty), has_aux=True)
    assert len(got) == 3
    close(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_linearize_with_aux_matches_jax(mode):
    tx, ty = np.float32(0.5) * X, np.float32(-2.0) * Y

    def ours(x, y):
        out, f_jvp, aux = tracer.linearize(F, x, y, has_aux=True)
        return out, f_jvp(tx, ty), aux
    out, f_jvp, aux = jax.linearize(JF, X, Y, has_aux=True)
    close(run(mode, ours)(X, Y), (out, f_jvp(tx, ty), aux))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_jacobians_with_aux_match_jax(name, mode):
    for argnums in [0, (1, 0)]:
        got = run(mode, getattr(tracer, name)(F, argnums, has_aux=True))(X, Y)
        want = getattr(jax, name)(JF, argnums, has_aux=True)(X, Y)
        close(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_hessian_with_aux_matches_jax(mode):
    def h(np_):
        return lambda x, y: (np_.sum(np_.sin(x) @ y) * np_.sum((x @ y) ** 2), {"x3": x ** 3})
    for argnums in [0, (0, 1)]:
        got = run(mode, tracer.hessian(h(tnp), argnums, has_aux=True))(X, Y)
        close(got, jax.hessian(h(jnp), argnums, has_aux=True)(X, Y), rtol=1e-4)


def test_jacfwd_with_aux_matches_finite_differences():
    x, y = X.astype(np.float64), Y.astype(np.float64)
    jac, aux = tracer.jacfwd(F, has_aux=True)(x, y)
    eps = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        up, down = F(x + e, y)[0], F(x - e, y)[0]
        for k in ("a", "b"):
            np.testing.assert_allclose(jac[k][..., i], (up[k] - down[k]) / (2 * eps),
                                       rtol=1e-6, atol=1e-8)
    close(aux, F(x, y)[1])


def test_has_aux_composes_with_vmap_and_grad():
    xs = np.stack([X, 2 * X, -X])
    for transform in ["jacfwd", "jacrev"]:
        got = tracer.vmap(getattr(tracer, transform)(F, has_aux=True), (0, None))(xs, Y)
        want = jax.vmap(getattr(jax, transform)(JF, has_aux=True), (0, None))(xs, Y)
        close(got, want)
    close(tracer.vmap(lambda x: tracer.jvp(F, (x, Y), (x, Y), has_aux=True))(xs),
          jax.vmap(lambda x: jax.jvp(JF, (x, Y), (x, Y), has_aux=True))(xs))

    def lin(transforms, f):
        def g(x):
            out, f_jvp, aux = transforms.linearize(f, x, Y, has_aux=True)
            return f_jvp(x, Y), aux
        return g
    close(tracer.vmap(lin(tracer, F))(xs), jax.vmap(lin(jax, JF))(xs))

    def tangent_sum(transforms, np_, f):
        return lambda x: np_.sum(transforms.jvp(f, (x, Y), (x, Y), has_aux=True)[1]["b"])
    close(tracer.grad(tangent_sum(tracer, tnp, F))(X), jax.grad(tangent_sum(jax, jnp, JF))(X))

    def aux_sums(t):          # aux is differentiable, as in jax (no stop_gradient)
        f = with_aux(t.numpy)
        return [lambda x: t.jvp(f, (x, Y), (x, Y), has_aux=True)[2][1],
                lambda x: t.linearize(f, x, Y, has_aux=True)[2][1],
                lambda x: t.jacfwd(f, has_aux=True)(x, Y)[1][1],
                lambda x: t.jacrev(f, has_aux=True)(x, Y)[1][1]]
    for ours, theirs in zip(aux_sums(tracer), aux_sums(jax)):
        close(tracer.grad(ours)(X), jax.grad(theirs)(X))


@pytest.mark.parametrize("call", [
    lambda t, f: t.jvp(f, (X,), (X,), has_aux=True),
    lambda t, f: t.linearize(f, X, has_aux=True),
    lambda t, f: t.jacfwd(f, has_aux=True)(X),
    lambda t, f: t.jacrev(f, has_aux=True)(X),
    lambda t, f: t.hessian(lambda x: t.numpy.sum(f(x)), has_aux=True)(X),
])
def test_has_aux_without_a_pair_is_a_type_error_as_in_jax(call):
    with pytest.raises(TypeError, match="pair"):
        call(tracer, lambda x: x * 2)
    with pytest.raises(TypeError):
        call(jax, lambda x: x * 2)


def loss(np_):
    return lambda x, y: np_.sum(np_.sin(x) @ y)


@pytest.mark.parametrize("name", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"])
def test_holomorphic(name):
    ours, theirs = getattr(tracer, name), getattr(jax, name)
    close(ours(loss(tnp), holomorphic=False)(X, Y), theirs(loss(jnp), holomorphic=False)(X, Y))
    f = ours(loss(tnp), holomorphic=True)        # as in JAX, the call raises
    with pytest.raises(TypeError) as ours_error:
        f(X, Y)
    where = "hessian" if name == "hessian" else "grad" if "grad" in name else name
    assert where in str(ours_error.value) and "complex dtypes" in str(ours_error.value)
    with pytest.raises(TypeError):
        theirs(loss(jnp), holomorphic=True)(X, Y)
    with pytest.raises(TypeError, match="complex"):
        tracer.jit(f)(X, Y)


def int_loss(np_):
    return lambda x, y: np_.sum(np_.sin(x) * y["i"] * y["f"])


@pytest.mark.parametrize("name", ["grad", "value_and_grad"])
def test_allow_int_gives_float0_gradients_eagerly_as_jax(name):
    y = {"i": XI, "f": X}
    got = getattr(tracer, name)(int_loss(tnp), (0, 1), allow_int=True)(X, y)
    want = getattr(jax, name)(int_loss(jnp), (0, 1), allow_int=True)(X, y)
    grads, want_grads = (got[1], want[1]) if name == "value_and_grad" else (got, want)
    int_grad, want_int = grads[1]["i"], want_grads[1]["i"]
    assert int_grad.dtype == tracer.float0 == want_int.dtype
    assert int_grad.shape == want_int.shape == XI.shape
    close((grads[0], grads[1]["f"]), (want_grads[0], want_grads[1]["f"]))
    if name == "value_and_grad":
        close(got[0], want[0])
    for primal in [np.array([True, False]), 3]:       # bool arrays, Python ints
        g = tracer.grad(lambda v: tnp.sum(v * 2.0), allow_int=True)(primal)
        want_g = jax.grad(lambda v: jnp.sum(v * 2.0), allow_int=True)(primal)
        assert (g.dtype, g.shape) == (want_g.dtype, want_g.shape) == (tracer.float0,
                                                                        np.shape(primal))


@pytest.mark.parametrize("mode", ["llvm", "numpy", "vmap"])
def test_allow_int_under_a_trace_gives_float0_as_jax(mode):
    """Under jit and vmap too an int input's gradient is float0 zeros (a constant kept
    out of the graph, batched by vmap), as JAX's; the float gradients are JAX's."""
    g = tracer.grad(lambda x, i: tnp.sum(tnp.sin(x) * i), (0, 1), allow_int=True)
    jg = jax.grad(lambda x, i: jnp.sum(jnp.sin(x) * i), (0, 1), allow_int=True)
    if mode == "vmap":
        xs, iss = np.stack([X, 2 * X]), np.stack([XI, -XI])
        got, want = tracer.vmap(g)(xs, iss), jax.vmap(jg)(xs, iss)
    else:
        got, want = tracer.jit(g, backend=mode)(X, XI), jg(X, XI)
    close(got[0], want[0])
    assert got[1].dtype == tracer.float0 == want[1].dtype
    assert got[1].shape == want[1].shape


@pytest.mark.parametrize("mode", MODES)
def test_jacrev_allow_int_matches_jax(mode):
    f = run(mode, tracer.jacrev(lambda x, i: tnp.tanh(x) * i, (0, 1), allow_int=True))
    got = f(X, XI)
    want = jax.jacrev(lambda x, i: jnp.tanh(x) * i, (0, 1), allow_int=True)(X, XI)
    close(got[0], want[0])
    assert got[1].dtype == want[1].dtype == np.int32 and got[1].shape == want[1].shape
    assert not np.any(got[1])


@pytest.mark.parametrize("name", ["grad", "value_and_grad", "jacrev", "jacfwd", "hessian"])
def test_int_inputs_without_allow_int_stay_a_type_error(name):
    f = lambda x: x * 2.0                                  # noqa: E731
    with pytest.raises(TypeError, match="int32"):
        getattr(tracer, name)(lambda x: tnp.sum(f(x)))(XI)
    with pytest.raises(TypeError, match="int32"):
        getattr(jax, name)(lambda x: jnp.sum(f(x)))(XI)


def test_reduce_axes_takes_only_an_empty_value_as_jax():
    for empty in [(), None]:
        close(tracer.grad(loss(tnp), reduce_axes=empty)(X, Y),
              jax.grad(loss(jnp), reduce_axes=empty)(X, Y))
        close(tracer.value_and_grad(loss(tnp), reduce_axes=empty)(X, Y),
              jax.value_and_grad(loss(jnp), reduce_axes=empty)(X, Y))
        close(tracer.vjp(tnp.sin, X, reduce_axes=empty)[0],
              jax.vjp(jnp.sin, X, reduce_axes=empty)[0])
    for t in [tracer, jax]:                 # raised when the transform is made, as JAX
        for name in ["grad", "value_and_grad"]:
            with pytest.raises(NotImplementedError, match="reduce_axes"):
                getattr(t, name)(loss(t.numpy), reduce_axes=("i",))
        with pytest.raises(NotImplementedError, match="reduce_axes"):
            t.vjp(t.numpy.sin, X, reduce_axes=("i",))


def pullback_and_linear(t, x=X, y=Y):
    """vjp's pullback and linearize's f_jvp of one function, with `t` tracer or jax."""
    def f(x, y):
        return {"p": t.numpy.sin(x) @ y, "q": x * x}
    return t.vjp(f, x, y)[1], t.linearize(f, x, y)[1]


@pytest.mark.parametrize("mode", MODES)
def test_vjp_and_linearize_functions_are_pytrees(mode):
    ct = {"p": np.array([1.0, -2.0], np.float32), "q": X}
    (pb, lin), (jpb, jlin) = pullback_and_linear(tracer), pullback_and_linear(jax)
    want = (jpb(ct), jlin(X, Y))
    leaves, tree = tracer.tree_util.tree_flatten((pb, lin))   # leaves: the residuals
    assert leaves and all(isinstance(x, np.ndarray) for x in leaves)
    rebuilt = tracer.tree_util.tree_unflatten(tree, leaves)
    mapped = tracer.tree_util.tree_map(lambda r: r + 0, (pb, lin))
    for p, f in [(pb, lin), rebuilt, mapped]:
        close((p(ct), f(X, Y)), want)
    # passed into a jitted function, and returned from one
    close(run(mode, lambda p, f, c: (p(c), f(X, Y)))(pb, lin, ct), want)
    made_inside = run(mode, lambda x, y: pullback_and_linear(tracer, x, y))(X, Y)
    assert all(isinstance(x, np.ndarray) for x in tracer.tree_util.tree_leaves(made_inside))
    close((made_inside[0](ct), made_inside[1](X, Y)), want)
