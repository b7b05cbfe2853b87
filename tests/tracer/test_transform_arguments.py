"""How transforms read their arguments: argnums in the order asked, and tangents whose
dtype must be the primal's (float0 for an integer or bool primal), as in JAX."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp


def f3(x, y, z):
    return x * x + 2 * y * x + 3 * z * z


def test_grad_returns_gradients_in_argnums_order():
    g = tracer.grad(lambda x, y, z: x + 2 * y + 3 * z, argnums=(2, 0))(1.0, 1.0, 1.0)
    assert [float(v) for v in g] == [3.0, 1.0]
    value, g = tracer.value_and_grad(f3, argnums=(2, 0, 1))(1.0, 2.0, 3.0)
    assert float(value) == 1 + 4 + 27
    assert [float(v) for v in g] == [18.0, 2 + 4, 2.0]


def test_grad_argnums_order_with_pytree_arguments():
    def f(a, b):
        return tnp.sum(a["w"] * 3.0) + tnp.sum(b[0] * 5.0)
    a, b = {"w": np.ones(2)}, (np.ones(3),)
    gb, ga = tracer.grad(f, argnums=(1, 0))(a, b)
    assert ga["w"].tolist() == [3.0, 3.0] and gb[0].tolist() == [5.0] * 3
    (gb, ga), aux = tracer.grad(lambda a, b: (f(a, b), 7), argnums=(1, 0), has_aux=True)(a, b)
    assert ga["w"].tolist() == [3.0, 3.0] and gb[0].tolist() == [5.0] * 3 and aux == 7


@pytest.mark.parametrize("jac", [tracer.jacfwd, tracer.jacrev, tracer.hessian])
def test_jacobians_follow_argnums_order(jac):
    args = (1.0, 2.0, 3.0)
    got = jac(f3, argnums=(2, 0))(*args)
    want = jac(lambda z, x: f3(x, args[1], z), argnums=(0, 1))(args[2], args[0])
    np.testing.assert_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float))


MISMATCHED = {
    "f64 tangent, f32 primal": (np.float32(1.0), np.float64(1.0)),
    "f32 tangent, f64 primal": (np.ones(2), np.ones(2, np.float32)),
    "Python float tangent, f32 primal": (np.float32(1.0), 1.0),
    "bf16 tangent, f32 primal": (np.float32(1.0), np.ones((), tnp.bfloat16)),
    "float tangent, int primal": (np.int32(1), np.float32(1.0)),
    "int tangent, int primal": (np.arange(2), np.arange(2)),
    "bool tangent, bool primal": (True, True),
}


@pytest.mark.parametrize("case", MISMATCHED)
def test_jvp_rejects_a_tangent_of_another_dtype(case):
    primal, tangent = MISMATCHED[case]
    with pytest.raises(TypeError, match="primal and tangent arguments to jax.jvp do not match"):
        tracer.jvp(lambda x: x * 2, (primal,), (tangent,))
    if np.asarray(primal).dtype.kind == "f":
        _, f_jvp = tracer.linearize(lambda x: x * 2, primal)
        with pytest.raises(TypeError, match="primal and tangent arguments to jax.jvp do not match"):
            f_jvp(tangent)


def test_jvp_takes_float0_tangents_for_integer_primals():
    out, t = tracer.jvp(lambda n, x: n * x, (np.int32(3), np.float32(2.0)),
                        (np.zeros((), tracer.float0), np.float32(1.0)))
    assert float(out) == 6.0 and float(t) == 3.0
    out, f_jvp = tracer.linearize(lambda n, x: n * x, np.int32(3), np.float32(2.0))
    assert float(out) == 6.0 and float(f_jvp(np.zeros((), tracer.float0), np.float32(1))) == 3


def test_jvp_accepts_equal_dtypes_in_any_byte_order():
    x = np.array([0.5, 1.0], ">f8")
    out, t = tracer.jvp(tnp.sin, (x,), (np.ones(2),))
    np.testing.assert_allclose(t, np.cos([0.5, 1.0]), rtol=1e-15)


def test_a_numpy_scalar_and_its_0d_array_share_one_jit_entry():
    """As in jax: np.float32(1) and np.array(1, np.float32) are one signature, positional
    or by keyword (a Python float, weakly typed, is another)."""
    f = tracer.jit(lambda x: x * 2)
    assert f(np.float32(1)) == 2 and f(np.array(3, np.float32)) == 6
    assert f.cache_info().misses == 1
    f(1.0)
    assert f.cache_info().misses == 2
    g = tracer.jit(lambda x, *, k: x * k)
    g(np.float32(1), k=2.0)
    g(np.array(1, np.float32), k=2.0)
    assert g.cache_info().misses == 1
