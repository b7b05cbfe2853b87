"""fori_loop's index takes its dtype as jax.lax.fori_loop's does: with concrete bounds (a
scan) it is a Python int, weakly typed, whatever the bounds' dtypes, so a float32 or int8
carry plus i keeps its dtype; with traced bounds a Python-int bound takes the other bound's
dtype. Float bounds and bounds of different types behave as JAX's too. Values are jax
0.10.2's."""
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


def test_float_bounds_as_jax():
    """Concrete float bounds are truncated to ints (JAX's int(lower), int(upper)): i is
    0, 1, 2; traced float bounds make a while loop over a float i: 0.5, 1.5, 2.5, 3.5."""
    add = lambda lo, hi: lax.fori_loop(lo, hi, lambda i, v: v + i, 0.0)  # noqa: E731
    for got in everywhere(lambda c: add(0.0, 3.0) + c, 0.0):
        assert got == 3.0
    assert add(0.5, 3.7) == 3.0
    for b in BACKENDS:
        assert tracer.jit(add, backend=b)(0.5, 3.7) == 8.0
    square = lambda c: lax.fori_loop(0.0, 3.0, lambda i, v: v * v + i, c)  # noqa: E731
    for got in everywhere(tracer.grad(square), 1.0):
        assert got == 16.0


@pytest.mark.parametrize("lo, hi, names", [(0.0, 3, "float64 and int64"),
                                           (0, 3.0, "int64 and float64"),
                                           (np.int16(0), np.int32(3), "int16 and int32")])
def test_bounds_of_different_types_raise_jaxs_type_error(lo, hi, names):
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have "
                                        f"equal types, got {names}"):
        lax.fori_loop(lo, hi, lambda i, v: v + i, 0.0)
    with pytest.raises(TypeError, match=f"equal types, got {names}"):
        tracer.jit(lambda h: lax.fori_loop(lo, h, lambda i, v: v + i, 0.0))(hi)
