"""Derivatives at ties and branch points (x == y, x == 0, -0.0, a shared max, an exact
multiple): first order by reverse and forward mode (grad, jacfwd), second order forward
over reverse (hessian) and reverse over reverse, some compiled. Expected values are jax's
(jax 0.10.2, float64, jax.grad and jax.hessian) unless a comment says otherwise."""
import math

import numpy as np
import pytest

import tracer
import tracer.nn as nn
import tracer.numpy as m

INF = np.inf
R2 = math.sqrt(2)
LN2 = math.log(2)

# name, f(x) of a float64 vector, x, gradient, Hessian
CASES = [
    ("logaddexp_tie", lambda x: m.logaddexp(x[0], x[1]), [0.4, 0.4],
     [0.5, 0.5], [[0.25, -0.25], [-0.25, 0.25]]),
    ("logaddexp_apart", lambda x: m.logaddexp(x[0], x[1]), [0.4, -1.0],
     [0.8021838885585817, 0.19781611144141825],
     [[0.15868489749561468, -0.15868489749561462], [-0.15868489749561462, 0.15868489749561462]]),
    ("logaddexp_neginf", lambda x: m.logaddexp(x[0], x[1]), [-INF, 0.5],
     [0.0, 1.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("logaddexp2_tie", lambda x: m.logaddexp2(x[0], x[1]), [0.4, 0.4],    # ln2 / 4
     [0.5, 0.5], [[LN2 / 4, -LN2 / 4], [-LN2 / 4, LN2 / 4]]),
    ("logaddexp2_apart", lambda x: m.logaddexp2(x[0], x[1]), [0.4, -1.0],
     [0.7252004253240047, 0.2747995746759952],
     [[0.1381336753684906, -0.13813367536849058], [-0.13813367536849058, 0.13813367536849058]]),
    ("maximum_tie", lambda x: m.maximum(x[0], x[1]) * x[0], [0.4, 0.4],
     [0.6, 0.2], [[1.0, 0.5], [0.5, 0.0]]),
    ("minimum_tie", lambda x: m.minimum(x[0], x[1]) * x[1], [0.4, 0.4],
     [0.2, 0.6], [[0.0, 0.5], [0.5, 1.0]]),
    ("fmax_tie", lambda x: m.fmax(x[0], x[1]) * x[0], [0.4, 0.4],
     [0.4, 0.4], [[0.0, 1.0], [1.0, 0.0]]),
    ("fmin_tie", lambda x: m.fmin(x[0], x[1]) * x[0], [0.4, 0.4],
     [0.4, 0.4], [[0.0, 1.0], [1.0, 0.0]]),
    ("abs_zero", lambda x: m.abs(x[0]) * x[1], [0.0, 2.0],
     [2.0, 0.0], [[0.0, 1.0], [1.0, 0.0]]),
    ("abs_negzero", lambda x: m.abs(x[0]) * x[1], [-0.0, 2.0],
     [2.0, 0.0], [[0.0, 1.0], [1.0, 0.0]]),
    ("sign_zero", lambda x: m.sign(x[0]) * x[1], [0.0, 2.0],
     [0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("clip_low", lambda x: m.clip(x[0], 0.0, 1.0) * x[1], [0.0, 2.0],
     [1.0, 0.0], [[0.0, 0.5], [0.5, 0.0]]),
    ("clip_high", lambda x: m.clip(x[0], 0.0, 1.0) * x[1], [1.0, 2.0],
     [1.0, 1.0], [[0.0, 0.5], [0.5, 0.0]]),
    ("clip_bounds", lambda x: m.clip(x[0], x[1], x[2]) * x[0], [0.0, 0.0, 1.0],
     [0.0, 0.0, 0.0], [[1.0, 0.5, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("where_tie", lambda x: m.where(x[0] >= x[1], x[0] ** 3, x[1] ** 2), [0.5, 0.5],
     [0.75, 0.0], [[3.0, 0.0], [0.0, 0.0]]),
    ("relu_zero", lambda x: nn.relu(x[0]) * x[1], [0.0, 2.0],
     [0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("hypot_tie", lambda x: m.hypot(x[0], x[1]), [0.3, 0.3],     # analytic (jax: H = 0)
     [1 / R2, 1 / R2], np.array([[1.0, -1.0], [-1.0, 1.0]]) / (0.6 * R2)),
    ("hypot_zero", lambda x: m.hypot(x[0], x[1]), [0.0, 0.5],
     [0.0, 1.0], [[2.0, 0.0], [0.0, 0.0]]),
    ("max_tie", lambda x: m.max(x) * x[0], [0.4, 0.4, 0.1],
     [0.6, 0.2, 0.0], [[1.0, 0.5, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("min_tie", lambda x: m.min(x) * x[0], [0.1, 0.1, 0.4],
     [0.15, 0.05, 0.0], [[1.0, 0.5, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("ptp_ties", lambda x: m.ptp(x) * x[0], [0.4, 0.4, 0.1, 0.1],
     [0.5, 0.2, -0.2, -0.2],
     [[1.0, 0.5, -0.5, -0.5], [0.5, 0.0, 0.0, 0.0], [-0.5, 0.0, 0.0, 0.0], [-0.5, 0.0, 0.0, 0.0]]),
    ("sort_tie", lambda x: m.sort(x)[1] * x[1], [0.4, 0.4, 0.1],
     [0.4, 0.4, 0.0], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("median_ties", lambda x: m.median(x) * x[0], [0.4, 0.4, 0.1, 0.1],
     [0.45, 0.0, 0.0, 0.2],
     [[1.0, 0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0]]),
    ("max_pool_tie", lambda x: m.sum(nn.max_pool(m.reshape(x, (1, 4, 1)), (2,), (2,))) * x[0],
     [0.4, 0.4, 0.1, 0.2], [1.0, 0.0, 0.0, 0.4],
     [[2.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]),
    ("norm_inf_tie", lambda x: m.linalg.norm(x, np.inf) * x[0], [0.3, -0.3, 0.1],
     [0.45, -0.15, 0.0], [[1.0, -0.5, 0.0], [-0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("norm_1_zero", lambda x: m.linalg.norm(x, 1) * x[0], [0.3, 0.0, 0.1],
     [0.7, 0.3, 0.3], [[2.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
    ("norm_3_zero", lambda x: m.linalg.norm(x, 3), [0.3, 0.0, -0.1],
     [0.9760464552457491, 0.0, -0.10844960613841657],
     [[0.23239201315374833, 0.0, 0.6971760394612495], [0.0, 0.0, 0.0],
      [0.6971760394612495, 0.0, 2.091528118383748]]),
    ("softmax_tie", lambda x: nn.softmax(x)[0], [0.4, 0.4, 0.1],
     [0.23173570748841335, -0.1331188430447746, -0.09861686444363878],
     [[0.0626360526920626, -0.03598081175157615, -0.02665524094048649],
      [-0.03598081175157615, -0.03598081175157615, 0.07196162350315229],
      [-0.026655240940486484, 0.07196162350315229, -0.045306382562665816]]),
    ("log_softmax_tie", lambda x: nn.log_softmax(x)[1], [0.4, 0.4, 0.1],
     [-0.36485455053318794, 0.6351454494668121, -0.2702908989336242],
     [[-0.23173570748841335, 0.1331188430447746, 0.09861686444363878],
      [0.1331188430447746, -0.23173570748841335, 0.09861686444363878],
      [0.09861686444363878, 0.09861686444363878, -0.19723372888727755]]),
    ("logsumexp_tie", lambda x: nn.logsumexp(x), [0.4, 0.4, 0.4],
     [1 / 3, 1 / 3, 1 / 3], [[2 / 9, -1 / 9, -1 / 9], [-1 / 9, 2 / 9, -1 / 9],
                             [-1 / 9, -1 / 9, 2 / 9]]),
    ("logsumexp_neginf", lambda x: nn.logsumexp(x), [0.3, -INF, 0.3],
     [0.5, 0.0, 0.5], [[0.25, 0.0, -0.25], [0.0, 0.0, 0.0], [-0.25, 0.0, 0.25]]),
    ("prod_two_zeros", lambda x: m.prod(x), [0.0, 0.0, 3.0],
     [0.0, 0.0, 0.0], [[0.0, 3.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("prod_one_zero", lambda x: m.prod(x), [2.0, 0.0, 3.0],
     [0.0, 6.0, 0.0], [[0.0, 3.0, 0.0], [3.0, 0.0, 2.0], [0.0, 2.0, 0.0]]),
    ("sinc_zero", lambda x: m.sinc(x[0]), [0.0],                  # -pi^2 / 3
     [0.0], [[-math.pi ** 2 / 3]]),
    ("sinh_negzero", lambda x: m.sinh(x[0]), [-0.0], [1.0], [[0.0]]),
    ("cosh_negzero", lambda x: m.cosh(x[0]), [-0.0], [0.0], [[1.0]]),
    ("arcsinh_negzero", lambda x: m.arcsinh(x[0]), [-0.0], [1.0], [[0.0]]),
    ("arctanh_negzero", lambda x: m.arctanh(x[0]), [-0.0], [1.0], [[0.0]]),
    ("cbrt_negone", lambda x: m.cbrt(x[0]), [-1.0], [1 / 3], [[2 / 9]]),
    ("arctan2_negzero_y", lambda x: m.arctan2(x[0], x[1]), [-0.0, 2.0],
     [0.5, 0.0], [[0.0, -0.25], [-0.25, 0.0]]),
    ("arctan2_negzero_y_left", lambda x: m.arctan2(x[0], x[1]), [-0.0, -2.0],
     [-0.5, 0.0], [[0.0, -0.25], [-0.25, 0.0]]),
    ("arctan2_zero_x", lambda x: m.arctan2(x[0], x[1]), [0.5, 0.0],
     [0.0, -2.0], [[0.0, 4.0], [4.0, 0.0]]),
    ("arctan2_negzero_x", lambda x: m.arctan2(x[0], x[1]), [-0.5, -0.0],
     [0.0, 2.0], [[0.0, 4.0], [4.0, 0.0]]),
    ("arctan2_origin", lambda x: m.arctan2(x[0], x[1]), [0.0, 0.0],   # jax: nan (no limit)
     [0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("copysign_negzero", lambda x: m.copysign(x[0], x[1]) * x[0], [-0.0, 2.0],
     [0.0, 0.0], [[2.0, 0.0], [0.0, 0.0]]),
    ("copysign_negative", lambda x: m.copysign(x[0], x[1]) * x[0], [0.0, -1.0],
     [0.0, 0.0], [[-2.0, 0.0], [0.0, 0.0]]),
    ("heaviside_zero", lambda x: m.heaviside(x[0], x[1]) * x[1], [0.0, 0.5],
     [0.0, 1.0], [[0.0, 0.0], [0.0, 2.0]]),
    ("mod_exact_multiple", lambda x: m.mod(x[0], x[1]), [2.0, 0.5],
     [1.0, -4.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("mod_zero", lambda x: m.mod(x[0], x[1]), [-0.0, -2.0],
     [1.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("floor_divide_by_zero", lambda x: m.floor_divide(x[0], x[1]), [0.5, 0.0],
     [0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]),
    ("power_zero_exponent", lambda x: m.power(x[0], x[1]), [2.0, 0.0],
     [0.0, LN2], [[0.0, 0.5], [0.5, LN2 ** 2]]),
    ("power_zero_base", lambda x: m.power(x[0], x[1]), [0.0, 2.0],
     [0.0, 0.0], [[2.0, 0.0], [0.0, 0.0]]),
]
IDS = [c[0] for c in CASES]


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, np.float64),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, f, x, grad, hess", CASES, ids=IDS)
def test_first_order_reverse_and_forward(name, f, x, grad, hess):
    x = np.array(x, np.float64)
    _close(tracer.grad(f)(x), grad)
    _close(tracer.jacfwd(f)(x), grad)


@pytest.mark.parametrize("name, f, x, grad, hess", CASES, ids=IDS)
def test_second_order_forward_over_reverse_and_reverse_over_reverse(name, f, x, grad, hess):
    x = np.array(x, np.float64)
    _close(tracer.hessian(f)(x), hess)
    _close(tracer.jacrev(tracer.jacrev(f))(x), hess)


COMPILED = ("logaddexp_tie", "logaddexp2_tie", "hypot_tie", "prod_two_zeros", "sinc_zero",
            "arctan2_zero_x")


@pytest.mark.parametrize("name, f, x, grad, hess",
                         [pytest.param(*c, id=c[0]) for c in CASES if c[0] in COMPILED])
def test_hessian_compiled(name, f, x, grad, hess):
    _close(tracer.jit(tracer.hessian(f))(np.array(x, np.float64)), hess)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hessian_of_logaddexp_at_equal_scalars(dtype):
    """The issue's row: two arrays of shape () and argnums=(0, 1)."""
    a = np.array(0.4, dtype)
    for f, h in ((m.logaddexp, 0.25), (m.logaddexp2, LN2 / 4)):
        got = tracer.hessian(f, argnums=(0, 1))(a, a)
        assert all(g.dtype == dtype for row in got for g in row)
        np.testing.assert_allclose(np.array(got, np.float64), [[h, -h], [-h, h]],
                                   rtol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("f", [lambda x, w: m.sum(nn.log_softmax(x) * w),
                               lambda x, w: m.sum(nn.softmax(x) * w),
                               lambda x, w: nn.logsumexp(x) * m.sum(w)],
                         ids=["log_softmax", "softmax", "logsumexp"])
def test_max_shift_adds_no_rounding_to_the_gradient(f):
    """The shift by max(x) cancels exactly; differentiating it anyway adds a float32
    rounding residue times sum(w) to the gradient of the largest entry."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=100_000).astype(np.float32)
    w = np.ones_like(x)
    got = tracer.grad(f)(x, w)
    want = tracer.grad(f)(x.astype(np.float64), w.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", [m.maximum, m.minimum])
def test_the_tie_shares_of_max_and_min_stay_in_the_operands_dtype(op):
    x = np.array([1.0, 2.0, 3.0], np.float32)
    graph = tracer.make_graph(tracer.grad(lambda a, b: m.sum(op(a, b)), argnums=(0, 1)))(
        x, x[::-1].copy())
    assert "f64" not in str(graph), graph      # no float64 select and convert back
    got = tracer.grad(lambda a, b: m.sum(op(a, b)), argnums=(0, 1))(x, x[::-1].copy())
    first = [0.0, 0.5, 1.0] if op is m.maximum else [1.0, 0.5, 0.0]
    np.testing.assert_array_equal(got[0], np.array(first, np.float32))
    assert got[0].dtype == np.float32
