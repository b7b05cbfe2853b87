"""check_grads passes on correct derivatives and raises on wrong ones, in each mode and
at the order where they go wrong."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from grad_helpers import registry_snapshot
from tracer import check_grads, run_kernel

X = np.array([0.3, -1.2, 2.0])


@pytest.fixture
def reg():
    with registry_snapshot() as r:
        yield r


def test_passes_on_correct_gradients_with_pytrees_and_several_outputs():
    def f(p, x):
        return {"a": tnp.tanh(p["w"] * x), "b": tnp.sum(p["w"] ** 2) * x[0]}
    check_grads(f, ({"w": np.array([0.5, 2.0, -1.0])}, X), order=2)
    check_grads(lambda x: tnp.sin(x) * 2, (X.astype(np.float32),), order=2)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_fails_on_a_wrong_first_order_gradient(reg, mode):
    reg.register_gradient("sin", lambda dy, i, o, a: (dy * tnp.cos(i[0]) * 1.001,))
    with pytest.raises(tracer.GradientError, match="forward-mode" if mode == "fwd"
                       else "reverse-mode"):
        check_grads(tnp.sin, (X,), modes=(mode,))
    check_grads(tnp.sin, (X,), modes=(mode,), rtol=1e-2)   # within a loose tolerance


def test_fails_at_order_two_when_only_the_gradient_of_the_gradient_is_wrong(reg):
    """sin' is computed by a kernel `bad_cos` whose own gradient has the wrong sign."""
    reg.register_kernel("bad_cos", "numpy", np.cos)
    reg.register_shape_rule("bad_cos", lambda x: x)
    reg.register_gradient("bad_cos", lambda dy, i, o, a: (dy * tnp.sin(i[0]),))
    reg.register_gradient("sin", lambda dy, i, o, a: (dy * run_kernel("bad_cos", [i[0]]),))
    check_grads(tnp.sin, (X,), order=1)
    for mode in ("fwd", "rev"):
        with pytest.raises(tracer.GradientError):
            check_grads(tnp.sin, (X,), order=2, modes=(mode,))


def test_fails_on_a_wrong_custom_rule():
    @tracer.custom_vjp
    def f(x):
        return x ** 3
    f.defvjp(lambda x: (x ** 3, x), lambda x, g: (g * 3 * x,))     # should be 3 x^2
    with pytest.raises(tracer.GradientError):
        check_grads(f, (X,))


def test_float32_outputs_use_float32_tolerances():
    # f64 input, f32 output: a float64 step would be lost in float32 rounding
    check_grads(lambda x: tnp.exp(x.astype(np.float32)), (X,), order=2)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_half_precision_arguments_keep_their_dtype_and_get_their_tolerances(dtype):
    # the order-2 check moves bfloat16 arguments, which a Python float step made float32
    # (then jvp refused the bfloat16 tangents); a float64 step vanishes in half precision
    x = (np.arange(1, 5) / 4).astype(dtype)
    check_grads(lambda x: tnp.sin(x) * x, (x,), order=2)
    check_grads(lambda x: tnp.broadcast_to(x, (3, 4)), (x,), order=2, eps=1.0)


def test_rejects_non_float_arguments():
    with pytest.raises(tracer.DTypeError, match="float"):
        check_grads(lambda x, n: x * n, (X, np.array([1, 2, 3])))


def test_outputs_infinite_on_both_sides_have_zero_finite_difference():
    # a max pool whose second window lies wholly in the padding is -inf there whatever x
    # is: its derivative is 0 (inf - inf is taken as 0, as in JAX's check_grads)
    pool = lambda x: tracer.lax.reduce_window(x, -np.inf, tracer.lax.max, (2,), (2,),
                                              [(0, 2)])
    x = np.array([0.3, -1.2])
    assert np.isneginf(pool(x)[1])
    check_grads(pool, (x,), order=2)
    check_grads(lambda x: tnp.concatenate([x, tnp.full((1,), np.inf)]), (x,), order=1)
