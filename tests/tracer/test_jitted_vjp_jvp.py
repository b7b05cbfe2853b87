"""vjp and jvp of a jitted function run compiled, as JAX's (tracer.transforms._jitted):
vjp's forward pass is one jitted call whose outputs are the pullback's residuals, the
pullback another; jvp one. Each compiles once for later calls of the same types; inside
a trace, or with static arguments, they trace the function as before."""
import functools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import GradientError


def f(w, x):
    return tnp.tanh(x @ w) * 2.0, tnp.sum(w)


def compiles(caplog):
    return [r.message for r in caplog.records if r.message.startswith("Compiling")]


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_vjp_of_a_jitted_function_compiles_each_pass_once(backend, caplog):
    jf, rng = tracer.jit(f, backend=backend), np.random.default_rng(0)
    with caplog.at_level("DEBUG", logger="tracer.compile"):
        for _ in range(2):
            w, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
            out, pullback = tracer.vjp(jf, w, x)
            ct = (rng.standard_normal((5, 3)), 1.5)
            want_out, want_pullback = tracer.vjp(f, w, x)
            for got, want in zip(out + pullback(ct), want_out + want_pullback(ct)):
                np.testing.assert_allclose(got, want, rtol=1e-12)
    got = compiles(caplog)
    assert len(got) == 2 and "vjp_f" in got[0] and "backward" in got[1], got
    assert pullback.apply.backend == backend        # the backward pass's jit, as the forward's
    leaves, tree = tracer.tree_util.tree_flatten(pullback)     # a pytree of its residuals
    assert all(isinstance(r, np.ndarray) for r in leaves)
    again = tracer.tree_util.tree_unflatten(tree, leaves)(ct)
    np.testing.assert_allclose(again[0], pullback(ct)[0], rtol=0)


def test_vjp_of_a_jitted_function_keeps_aux_and_checks_cotangents():
    jf = tracer.jit(lambda w: (tnp.sin(w), {"n": tnp.sum(w)}))
    w = np.linspace(0, 1, 4)
    out, pullback, aux = tracer.vjp(jf, w, has_aux=True)
    np.testing.assert_allclose(aux["n"], w.sum())
    np.testing.assert_allclose(pullback(np.ones(4))[0], np.cos(w), rtol=1e-12)
    with pytest.raises(GradientError, match="cotangent shape"):
        pullback(np.ones(3))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_jvp_of_a_jitted_function_compiles_once(backend, caplog):
    jf = tracer.jit(f, backend=backend)
    w, x = np.ones((4, 3)) / 4, np.linspace(-1, 1, 20).reshape(5, 4)
    with caplog.at_level("DEBUG", logger="tracer.compile"):
        for k in range(2):
            got = tracer.jvp(jf, (w + k, x), (np.ones_like(w), x))
            want = tracer.jvp(f, (w + k, x), (np.ones_like(w), x))
            for a, b in zip(tracer.tree_util.tree_leaves(got), tracer.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(a, b, rtol=1e-12)
    got = compiles(caplog)
    assert len(got) == 1 and "jvp_f" in got[0], got


def test_inside_a_trace_and_with_static_arguments_the_function_is_traced_as_before():
    jf = tracer.jit(f)
    w, x = np.ones((4, 3)), np.ones((2, 4))
    outer = tracer.jit(lambda w, x: tracer.vjp(jf, w, x)[1]((np.ones((2, 3)), 1.0))[0])
    np.testing.assert_allclose(outer(w, x), tracer.vjp(f, w, x)[1]((np.ones((2, 3)), 1.0))[0])

    @functools.partial(tracer.jit, static_argnums=1)
    def g(x, n):
        return x ** n
    assert tracer.jvp(lambda x: g(x, 3), (2.0,), (1.0,)) == (8.0, 12.0)
    assert tracer.jvp(functools.partial(g, n=2), (3.0,), (1.0,)) == (9.0, 6.0)
