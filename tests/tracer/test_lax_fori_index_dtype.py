"""fori_loop's index takes its dtype as jax.lax.fori_loop's does: with concrete bounds (a
scan) it is a Python int, weakly typed, whatever the bounds' dtypes, so a float32 or int8
carry plus i keeps its dtype; with traced bounds a Python-int bound takes the other bound's
dtype. Values are jax 0.10.2's."""
import numpy as np
import pytest

import tracer
from tracer import lax

BACKENDS = ["numpy", "llvm"]


def everywhere(f, *args):
    return [f(*args)] + [tracer.jit(f, backend=b)(*args) for b in BACKENDS]


@pytest.mark.parametrize("init, want", [(np.float32(0.5), 3.5), (np.int8(1), 4),
                                        (np.float16(0.25), 3.25)])
def test_concrete_array_bounds_give_a_weak_index(init, want):
    f = lambda c: lax.fori_loop(np.int32(0), np.int32(3), lambda i, v: v + i, c)  # noqa: E731
    for got in everywhere(f, init):
        assert got.dtype == init.dtype
        assert got == want


def test_grad_and_vmap_with_concrete_array_bounds():
    f = lambda x: lax.fori_loop(np.int32(1), np.int32(4), lambda i, v: v * x + i, x)  # noqa
    x = np.float32(0.5)     # ((x * x + 1) * x + 2) * x + 3 = x^4 + x^2 + 2x + 3
    for got in everywhere(tracer.grad(f), x):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, 4 * x ** 3 + 2 * x + 2, rtol=1e-6)
    xs = np.array([0.5, 2.0], np.float32)
    for got in everywhere(tracer.vmap(f), xs):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, xs ** 4 + xs ** 2 + 2 * xs + 3, rtol=1e-6)


def test_traced_bound_and_python_int_bound_take_the_traced_dtype():
    f = lambda n: lax.fori_loop(0, n, lambda i, v: v + i, np.int32(0))  # noqa: E731
    for run in [tracer.jit(f, backend=b) for b in BACKENDS]:
        got = run(np.int32(4))
        assert got.dtype == np.int32 and got == 6
    got = tracer.jit(tracer.vmap(f))(np.array([0, 3, 5], np.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [0, 3, 10])
