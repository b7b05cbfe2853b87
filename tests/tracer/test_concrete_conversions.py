"""Which conversions of a traced value to a Python value work inside an eager transform,
as in JAX 0.10.2: bool(), int(), operator.index() and item() give the value; float(),
complex() and tolist() of a value that carries a gradient raise ConcretizationError (a
TypeError, as JAX's ConcretizationTypeError), since the number would drop the gradient;
values that carry none (undifferentiated arguments, comparisons, sign, stop_gradient)
convert. custom_vjp's fun, fwd and bwd see concrete values, as JAX runs them."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ConcretizationError

X = np.array([0.3, 1.2, -0.4])
stop = tracer.lax.stop_gradient


def g(f):
    """grad of f(x) * sum(x): the gradient is f(x) * ones (+ f's own part, if any)."""
    return tracer.grad(lambda x: f(x) * tnp.sum(x))(X)


REFUSED = {
    "float": lambda: g(lambda x: float(tnp.max(x))),
    "complex": lambda: g(lambda x: complex(x[0]).real),
    "tolist": lambda: g(lambda x: sum(x.tolist())),
    "float of x * 0": lambda: g(lambda x: float(x[0] * 0.0)),
    "vjp": lambda: tracer.vjp(lambda x: float(x[0]) * x, X),
    "jvp": lambda: tracer.jvp(lambda x: float(x[0]) * x, (X,), (X,)),
    "jacfwd": lambda: tracer.jacfwd(lambda x: float(x[0]) * x)(X),
    "value_and_grad": lambda: tracer.value_and_grad(lambda x: float(x) * x)(2.0),
    "an outer trace's value": lambda: tracer.grad(
        lambda x: tracer.grad(lambda y: y * float(x))(1.0))(2.0),
    "an outer trace's value as argument": lambda: tracer.grad(
        lambda x: tracer.grad(lambda y, z: y * float(z))(1.0, x))(2.0),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_float_of_a_value_carrying_a_gradient_raises(name):
    with pytest.raises(ConcretizationError, match="carries a gradient") as info:
        REFUSED[name]()
    assert isinstance(info.value, TypeError)


GIVEN = {      # as jax.grad gives them
    "item": (lambda x: x[0].item(), 0.3),
    "int": (lambda x: int(x[1]), 1.0),
    "bool": (lambda x: 1.0 if x[0] else 2.0, 1.0),
    "comparison": (lambda x: 1.0 if x[0] < 2 else 2.0, 1.0),
    "float of sign": (lambda x: float(tnp.sign(x[2])), -1.0),
    "tolist of sign": (lambda x: sum(tnp.sign(x).tolist()), 1.0),
    "float of stop_gradient": (lambda x: float(stop(x[0])), 0.3),
    "float of a comparison's where": (lambda x: float(tnp.where(x[0] > 0, 1.0, 2.0)), 1.0),
    "index of astype(int)": (lambda x: [1.0, 2.0, 3.0][x[1].astype(np.int64)], 2.0),
    "int of argmax": (lambda x: float(int(tnp.argmax(x))), 1.0),
    "float of floor": (lambda x: float(tnp.floor(x[1])), 1.0),
    "float of ceil, trunc, rint and round": (lambda x: float(
        tnp.ceil(x[1]) + tnp.trunc(x[1]) + tnp.rint(x[1]) + tnp.round(x[1])), 5.0),
}


@pytest.mark.parametrize("name", list(GIVEN))
def test_conversions_jax_allows_give_the_value(name):
    f, scale = GIVEN[name]
    np.testing.assert_allclose(g(f), np.full(3, scale))


def test_undifferentiated_arguments_and_int_primals_convert():
    h = tracer.grad(lambda x, d: float(d[0]) * tnp.sum(x))
    np.testing.assert_allclose(h(X, X + 1), np.full(3, 1.3))
    zero = np.zeros((), tracer.float0)
    out, tan = tracer.jvp(lambda x, n: float(n) * x, (X, 3), (X, zero))
    np.testing.assert_allclose(out, 3 * X)
    np.testing.assert_allclose(tan, 3 * X)


@tracer.custom_vjp
def scaled(x):
    return x * 2.0 if x < 2 else x * 3.0


def scaled_fwd(x):
    s = float(x)            # fwd runs on the primal value, as in JAX
    return (x * 2.0 if s < 2 else x * 3.0), (x, s)


def scaled_bwd(res, ct):
    x, s = res
    assert float(x) == s    # so do the residuals in bwd
    return (ct * (2.0 if x < 2 else 3.0),)


scaled.defvjp(scaled_fwd, scaled_bwd)


@pytest.mark.parametrize("x, slope", [(1.0, 2.0), (3.0, 3.0)])
def test_custom_vjp_fun_fwd_and_bwd_see_concrete_values(x, slope):
    assert tracer.grad(scaled)(x) == slope
    assert tracer.vjp(scaled, x)[1](1.0)[0] == slope
    assert tracer.jvp(scaled, (x,), (1.0,))[1] == slope
    assert tracer.grad(lambda y: scaled(y * y))(x) == pytest.approx(slope * 2 * x)
    with pytest.raises(ConcretizationError, match="carries a gradient"):
        tracer.grad(tracer.grad(lambda y: scaled(y * y)))(x)   # bwd's float(x), as in JAX
    with pytest.raises(ConcretizationError, match="abstractly"):
        tracer.jit(tracer.grad(scaled))(x)


def test_custom_grad_sees_concrete_values():
    @tracer.custom_grad
    def clipped(x):
        k = 0.5 if float(x) > 1 else 1.0
        return x * k, lambda dy: dy * k
    assert tracer.grad(clipped)(2.0) == 0.5
    assert tracer.grad(clipped)(0.5) == 1.0
