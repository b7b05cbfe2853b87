"""Gradients of every differentiable op in the spec table, to second order, against
finite differences (eager and under jit), plus random compositions (hypothesis)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import registry
import tracer
from tracer.kernels import BUILTIN_KERNELS
import tracer.numpy as tnp
from spec import F64, SPECS, make_input
from registry.families import differentiable


def _representative(shapes):
    """The first non-empty shape case and the one with the most dims/elements."""
    nonempty = [s for s in shapes if all(0 not in sh for sh in s)] or shapes
    big = max(nonempty, key=lambda s: (sum(len(sh) for sh in s), sum(np.prod(sh) for sh in s)))
    return [nonempty[0]] + ([big] if big != nonempty[0] else [])


GRAD_CASES = [(s, shapes) for s in SPECS if s.grad and F64 in s.dtypes
              for shapes in _representative(s.shapes)]


def _inputs(spec, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [make_input(sh, F64, spec.domain, rng) for sh in shapes]


@pytest.mark.parametrize("spec,shapes", GRAD_CASES,
                         ids=[f"{s.name}-{'x'.join(map(str, sh))}" for s, sh in GRAD_CASES])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_check_grads_order2(spec, shapes, mode):
    xs = _inputs(spec, shapes)
    fun = (lambda *a: spec.fn(tnp, *a))
    if mode == "jit":
        fun = tracer.jit(fun, backend="numpy")
    tracer.check_grads(fun, xs, order=2)


@pytest.mark.parametrize("spec,shapes", GRAD_CASES[::3],
                         ids=[f"{s.name}-{'x'.join(map(str, sh))}" for s, sh in GRAD_CASES[::3]])
def test_jitted_vjp_matches_eager(spec, shapes):
    """The backward graph itself compiled by jit gives the eager gradients."""
    xs = _inputs(spec, shapes)
    out = spec.fn(tnp, *xs)
    ct = np.random.default_rng(1).standard_normal(np.shape(out))

    def pullback(*a):
        return tracer.vjp(lambda *b: spec.fn(tnp, *b), *a)[1](ct)
    want = pullback(*xs)
    got = tracer.jit(pullback, backend="numpy")(*xs)
    for g, w, x in zip(got, want, xs):
        assert np.shape(g) == np.shape(x)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_every_builtin_kernel_has_a_gradient_or_is_declared_not_differentiable():
    missing = [k for k in BUILTIN_KERNELS
               if not registry.has_gradient(k) and differentiable(k)]
    assert missing == []
    assert registry.has_gradient("custom_call")


@pytest.mark.parametrize("fun", [
    lambda x: tnp.sum(tnp.sign(x) * x),                       # sign: zero a.e.
    lambda x: tnp.sum((x > 0) * x) + tnp.sum(tnp.equal(x, x)),
    lambda x: x[tnp.argmax(x)] + x[tnp.argmin(x)],
    lambda x: tnp.sum(x.astype(np.int64) * x),                # integer intermediate
    lambda x: tnp.sum(tnp.where(x >= x[0], x, 0.0)),
], ids=["sign", "compare", "argmax", "int", "where_cond"])
def test_non_differentiable_kernels_act_as_constants(fun):
    x = np.array([2.5, -1.5, 0.75])
    tracer.check_grads(fun, (x,), order=2)


def test_integer_outputs_and_inputs_get_zero_tangents_and_cotangents():
    x, i = np.array([1.0, 3.0]), np.array([1, 2])
    """As JAX's: the tangent of an int output and the cotangent of an int input are
    float0 zeros of its shape (no data: an int value has no tangent space)."""
    _, t = tracer.jvp(lambda x: tnp.argmax(x), (x,), (np.ones(2),))
    assert t.dtype == tracer.float0 and t.shape == ()
    g = tracer.vjp(lambda x, i: x * i, x, i)[1](np.ones(2))
    np.testing.assert_array_equal(g[0], [1.0, 2.0])
    assert g[1].dtype == tracer.float0 and g[1].shape == (2,)


def test_empty_arrays():
    g = tracer.grad(lambda x, y: tnp.sum(x) + tnp.sum(y * 2))(np.ones((0, 3)), np.ones(2))
    assert g.shape == (0, 3)


# ---- random compositions ---------------------------------------------------------------

UNARY = [tnp.sin, tnp.tanh, lambda x: tnp.exp(-x * x), lambda x: tnp.sqrt(x * x + 1),
         lambda x: tnp.log1p(x * x), tnp.negative, tracer.nn.sigmoid, lambda x: x[::-1],
         lambda x: tnp.sum(x, axis=-1, keepdims=True), lambda x: tnp.mean(x, axis=0,
                                                                         keepdims=True),
         lambda x: tnp.max(x, axis=-1, keepdims=True), lambda x: x ** 3]
BINARY = [tnp.add, tnp.subtract, tnp.multiply, lambda x, y: x / (1 + y * y),
          lambda x, y: tnp.where(x > 0.1, x, y * y), lambda x, y: tnp.maximum(x, 2 * y),
          lambda x, y: x * tnp.cos(y)]


@st.composite
def programs(draw):
    """A straight-line program over inputs x (2, 3) and y (3,): each step applies a
    unary or binary op to earlier values (broadcasting as needed)."""
    steps = []
    for k in range(draw(st.integers(1, 5))):
        n = 2 + k
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, n - 1))))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))))
    return steps


def _run(steps, x, y):
    vals = [x, y]
    for s in steps:
        vals.append(UNARY[s[1]](vals[s[2]]) if s[0] == "u"
                    else BINARY[s[1]](vals[s[2]], vals[s[3]]))
    return vals[-1]


@settings(max_examples=30, deadline=None)
@given(programs(), st.integers(0, 2 ** 16))
def test_random_compositions_match_finite_differences(steps, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, 3)
    fun = (lambda x, y: _run(steps, x, y))
    tracer.check_grads(fun, (x, y), order=2)
    scalar = (lambda x, y: tnp.sum(_run(steps, x, y)))
    want = tracer.grad(scalar, argnums=(0, 1))(x, y)
    got = tracer.jit(tracer.grad(scalar, argnums=(0, 1)), backend="numpy")(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
