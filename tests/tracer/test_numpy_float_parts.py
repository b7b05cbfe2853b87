"""numpy 2's ldexp frexp modf nextafter spacing gcd lcm angle i0 (issue 26): bit for bit
(or to a few ulp: i0) against NumPy eagerly and jitted on both backends, with the special
values (signed zeros, inf, NaN, subnormals, the extremes) per float dtype; gradients of the
differentiable ones by finite differences; vmap of a few."""
import warnings

import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import DTypeError

FLOATS = [np.float16, np.float32, np.float64]


def specials(dt):
    fi = np.finfo(dt)
    return np.array([0., -0., 1., -1., 3.5, -7.25, np.inf, -np.inf, np.nan, fi.max, -fi.max,
                     fi.tiny, fi.smallest_subnormal, -3 * fi.smallest_subnormal, 1e-3,
                     1234.5678], dt)


def bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def same_bits(f, nf, *args):
    """f(*args) eagerly and jitted on both backends has nf(*args)'s dtype and bits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = nf(*args)
        runs = [f(*args)] + [tracer.jit(f, backend=b)(*args) for b in agreement.BACKENDS]
    for got in runs:
        for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
            assert np.asarray(g).dtype == w.dtype and np.shape(g) == w.shape
            np.testing.assert_array_equal(bits(g), bits(w))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", ["frexp", "modf", "spacing"])
def test_unary_float_parts_bit_for_bit(name, dt):
    x = specials(dt)
    same_bits(getattr(tnp, name), getattr(np, name), x)
    same_bits(getattr(tnp, name), getattr(np, name), x[:0])
    same_bits(getattr(tnp, name), getattr(np, name), x[2])


@pytest.mark.parametrize("dt", FLOATS)
def test_nextafter_bit_for_bit(dt):
    x = specials(dt)
    same_bits(tnp.nextafter, np.nextafter, x, np.roll(x, 3))
    same_bits(tnp.nextafter, np.nextafter, x, np.zeros((), dt))
    same_bits(tnp.nextafter, np.nextafter, x, np.full((), np.inf, dt))


@pytest.mark.parametrize("dt", FLOATS)
def test_ldexp_bit_for_bit(dt):
    x = specials(dt)
    n = np.array([0, 1, -1, 5, -30, 100, -200, 3000, -3000, 7, 0, 2, -2, 1, 0, -1], np.int32)
    same_bits(tnp.ldexp, np.ldexp, x, n)
    same_bits(tnp.ldexp, np.ldexp, x, np.int64(-3))


def test_integer_inputs_and_errors():
    i = np.array([3, -2, 0, 100], np.int32)
    same_bits(tnp.frexp, np.frexp, i)
    same_bits(tnp.modf, np.modf, i.astype(np.int8))
    same_bits(tnp.spacing, np.spacing, i)
    same_bits(tnp.ldexp, np.ldexp, i, np.array([2, -1100, 5, 0], np.int64))
    with pytest.raises(DTypeError, match="ldexp.*float64"):
        tnp.ldexp(1.5, np.array([1.0]))


def test_ldexp_and_modf_differentiate():
    x = np.array([0.3, -1.7, 2.5, 40.2])
    tracer.check_grads(lambda x: tnp.ldexp(x, np.array([1, -2, 3, 0])), (x,), order=1)
    tracer.check_grads(lambda x: tnp.modf(x)[0], (x,), order=1)
    np.testing.assert_array_equal(tracer.vmap(tnp.ldexp)(x.reshape(2, 2), np.array(
        [[1, 2], [3, 4]])), np.ldexp(x.reshape(2, 2), [[1, 2], [3, 4]]))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm(name):
    a = np.array([12, -18, 0, 0, 7, -128, 100, 1], np.int8)
    b = np.array([8, 24, 0, 5, 13, 0, -75, 1], np.int16)
    same_bits(getattr(tnp, name), getattr(np, name), a, b)
    same_bits(getattr(tnp, name), getattr(np, name), np.int64(2 ** 40), np.int64(6 ** 15))
    same_bits(getattr(tnp, name), getattr(np, name), a[:0], b[:0])
    same_bits(getattr(tnp, name), getattr(np, name), np.arange(1, 13).reshape(3, 4), 6)
    got = tracer.vmap(getattr(tnp, name))(np.array([[4, 6], [9, 3]]), np.array([[2, 4], [6, 0]]))
    np.testing.assert_array_equal(got, getattr(np, name)([[4, 6], [9, 3]], [[2, 4], [6, 0]]))
    with pytest.raises(DTypeError, match=f"{name}: needs integer operands.*float64"):
        getattr(tnp, name)(np.ones(2), 2)


@pytest.mark.parametrize("x", [np.array([-1., 0., -0., 2, np.nan, -np.inf]),
                               np.array([-1, 2], np.int8), np.array([-3, 2], np.int64),
                               np.float32(-2), np.array(True), np.zeros(0, np.float16)],
                         ids=["f64", "i8", "i64", "f32-0d", "bool", "empty"])
@pytest.mark.parametrize("deg", [False, True])
def test_angle(x, deg):
    agreement.agree(lambda x: tnp.angle(x, deg=deg), np.angle(x, deg=deg), x)


def test_angle_gradient_is_zero_off_the_branch():
    tracer.check_grads(tnp.angle, (np.array([-1.5, 2.0]),), order=1)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32])
def test_i0(dt):
    x = np.array([0., 1., -3.5, 7.99, 8., 8.01, -30., 80.]).astype(dt)
    agreement.agree(tnp.i0, np.i0(x), x, rtol=4 * np.finfo(np.i0(x).dtype).eps, atol=0)
    agreement.agree(tnp.i0, np.i0(x[:0]), x[:0])
    agreement.agree(tnp.i0, np.i0(x[1]), x[1], rtol=1e-6)


def test_i0_differentiates_and_batches():
    tracer.check_grads(tnp.i0, (np.array([0.3, -2., 7.9, 9.5, 20.]),), order=1)
    x = np.linspace(-10, 10, 6).reshape(2, 3)
    np.testing.assert_allclose(tracer.vmap(tnp.i0)(x), np.i0(x), rtol=1e-14)
