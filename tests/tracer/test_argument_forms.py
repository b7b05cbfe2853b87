"""Every transform called with every form an argument can take: Python floats, ints and
bools, NumPy scalars, 0-d arrays, read-only, non-contiguous, negative-stride and
big-endian arrays. Values are checked against NumPy and the analytic derivative; where
differentiation needs floats, an integer or bool argument gets JAX's TypeError (grad,
jacfwd, jacrev, hessian) or a zero derivative with a float0 tangent (vjp, jvp, linearize):
vjp's cotangent for it is float0 zeros, as JAX's.
"""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.types import dtype_kind


def _readonly():
    a = np.array([0.3, -1.2, 2.0], np.float32)
    a.flags.writeable = False
    return a


FLOAT_FORMS = {
    "py_float": lambda: 0.7,
    "np_float32": lambda: np.float32(0.7),
    "np_float64": lambda: np.float64(-0.4),
    "np_float16": lambda: np.float16(0.5),
    "bfloat16_array": lambda: np.array([0.5, -1.0], ml_dtypes.bfloat16),
    "zero_d": lambda: np.array(0.7, np.float32),
    "readonly": _readonly,
    "non_contiguous": lambda: np.array([0.3, 9, -1.2, 9, 2.0, 9])[::2],
    "negative_stride": lambda: np.array([2.0, -1.2, 0.3], np.float32)[::-1],
    "big_endian": lambda: np.array([0.3, -1.2, 2.0], ">f8"),
    "big_endian_strided_f32": lambda: np.array([0.3, 5, -1.2, 5, 2.0], ">f4")[::-2],
}
INT_FORMS = {
    "py_int": lambda: 2,
    "py_bool": lambda: True,
    "np_int32": lambda: np.int32(-3),
    "np_bool": lambda: np.bool_(True),
    "big_endian_int": lambda: np.array([1, -2, 3], ">i4"),
}
FORMS = {**FLOAT_FORMS, **INT_FORMS}
LLVM_FORMS = {"py_float", "py_int", "negative_stride", "big_endian", "np_float32"}


def f_el(x):
    return tnp.sin(x) * x + x / 2.0


def f_sum(x):
    return tnp.sum(f_el(x))


def ref_value(x):
    return np.sin(x) * x + x / 2.0


def ref_grad(x):
    x = np.asarray(x, np.float64)
    return np.cos(x) * x + np.sin(x) + 0.5


def ref_hess(x):
    x = np.asarray(x, np.float64)
    return -np.sin(x) * x + 2 * np.cos(x)


def jac(d, x):
    """The Jacobian of an elementwise map with derivative d at x."""
    return np.diag(d) if np.ndim(x) else d


def close(got, want, like=None):
    """got matches want to the precision of got's dtype (or of `like`'s)."""
    got = np.asarray(got)
    eps = float(ml_dtypes.finfo(np.asarray(like if like is not None else got).dtype).eps)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=64 * eps, atol=64 * eps)


def tangent_of(x):
    """A tangent of x's dtype; float0 for an integer or bool primal (as JAX)."""
    if not _float(x):
        return np.zeros(np.shape(x), tracer.float0)
    return 1.0 if type(x) is float else np.ones_like(x)


# ---- the transforms -------------------------------------------------------------------
# Each takes the argument and returns (got, want) pairs; differentiating ones return None
# for integer arguments when JAX raises a TypeError there.

def t_eager(x):
    return [(f_el(x), ref_value(x))]


def t_jit(x, backend="numpy"):
    return [(tracer.jit(f_el, backend=backend)(x), ref_value(x))]


def t_grad(x):
    return [(tracer.grad(f_sum)(x), ref_grad(x))]


def t_value_and_grad(x):
    v, g = tracer.value_and_grad(f_sum)(x)
    return [(v, np.sum(ref_value(x))), (g, ref_grad(x))]


def _pulled(fun, x):
    out, pull = tracer.vjp(fun, x)
    (g,) = pull(np.ones(np.shape(out), np.asarray(out).dtype))
    if not _float(x):
        assert (g.dtype, g.shape) == (tracer.float0, np.shape(x))
        return [(out, ref_value(x))]
    return [(out, ref_value(x)), (g, ref_grad(x))]


def t_vjp(x):
    return _pulled(f_el, x)


def t_jvp(x):
    out, t = tracer.jvp(f_el, (x,), (tangent_of(x),))
    return [(out, ref_value(x)), (t, ref_grad(x) if _float(x) else np.zeros(np.shape(x)))]


def t_vmap(x):
    if np.ndim(x):
        return [(tracer.vmap(f_el)(x), ref_value(x))]
    b = np.array([1.0, 2.0])
    got = tracer.vmap(lambda s, y: s * f_el(y), in_axes=(0, None))(b, x)
    return [(got, b * ref_value(x))]


def t_jacfwd(x):
    return [(tracer.jacfwd(f_el)(x), jac(ref_grad(x), x))]


def t_jacrev(x):
    return [(tracer.jacrev(f_el)(x), jac(ref_grad(x), x))]


def t_hessian(x):
    return [(tracer.hessian(f_sum)(x), jac(ref_hess(x), x))]


def t_linearize(x):
    out, f_jvp = tracer.linearize(f_el, x)
    t = f_jvp(tangent_of(x))
    return [(out, ref_value(x)), (t, ref_grad(x) if _float(x) else np.zeros(np.shape(x)))]


def t_checkpoint(x):
    return _pulled(tracer.checkpoint(f_el), x)


def t_custom_vjp(x):
    h = tracer.custom_vjp(f_el)
    h.defvjp(lambda y: (f_el(y), y), lambda y, ct: (ct * (tnp.cos(y) * y + tnp.sin(y) + 0.5),))
    return [(h(x), ref_value(x)), (tracer.grad(lambda y: tnp.sum(h(y)))(x), ref_grad(x))]


TRANSFORMS = {"eager": t_eager, "jit": t_jit, "grad": t_grad,
              "value_and_grad": t_value_and_grad, "vjp": t_vjp, "jvp": t_jvp,
              "vmap": t_vmap, "jacfwd": t_jacfwd, "jacrev": t_jacrev, "hessian": t_hessian,
              "linearize": t_linearize, "checkpoint": t_checkpoint,
              "custom_vjp": t_custom_vjp}
NEED_FLOAT = {"grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "custom_vjp"}


def _float(x):
    return dtype_kind(np.asarray(x).dtype) == "f"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_transform_takes_argument_form(transform, form):
    x = FORMS[form]()
    before = np.array(x, copy=True)
    if transform in NEED_FLOAT and not _float(x):
        with pytest.raises(TypeError, match="float"):
            TRANSFORMS[transform](x)
        return
    for got, want in TRANSFORMS[transform](x):
        close(got, want, like=None if _float(got) else 0.0)
    np.testing.assert_array_equal(np.asarray(x), before)        # arguments never change


@pytest.mark.parametrize("form", sorted(LLVM_FORMS))
def test_llvm_jit_takes_argument_form(form):
    x = FORMS[form]()
    for got, want in t_jit(x, backend="llvm"):
        close(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("form", FORMS)
def test_results_keep_numpy_dtypes(form):
    """Eagerly and under jit a form gives NumPy's result dtype: Python scalars are weak,
    NumPy scalars and big-endian arrays are not (a big-endian result is native). Traced
    bfloat16 keeps JAX's promotion (README: Python scalars never widen it)."""
    x = FORMS[form]()
    want = np.asarray(ref_value(x)).dtype.newbyteorder("=")
    assert np.asarray(f_el(x)).dtype == want
    if np.asarray(x).dtype == ml_dtypes.bfloat16:
        want = np.asarray(x).dtype
    assert np.asarray(tracer.jit(f_el, backend="numpy")(x)).dtype == want


# ---- rows: Python scalars where a kernel reads the primal itself -------------------------
SCALAR_FUNS = {
    "div": lambda x, y: x / y,
    "floordiv_mod": lambda x, y: x // y + x % y * y,
    "divmod": lambda x, y: divmod(x, y)[1] * x + divmod(x, y)[0],
    "erf": lambda x, y: tnp.erf(x) * y,
    "pad": lambda x, y: tnp.sum(tnp.pad(x, 1)) * y,
}


def _modes(f, x, y):
    """vjp, jvp, linearize, checkpoint and dict leaves of f at (x, y), flattened."""
    one = np.ones((), np.float64)
    out, pull = tracer.vjp(f, x, y)
    got = [out, *pull(one)]
    got += list(tracer.jvp(f, (x, y), (one, one)))
    out, f_jvp = tracer.linearize(f, x, y)
    got += [out, f_jvp(one, one)]
    got += list(tracer.vjp(tracer.checkpoint(f), x, y)[1](one))
    out, pull = tracer.vjp(lambda d: f(d["x"], d["y"]), {"x": x, "y": y})
    return got + [out, pull(one)[0]["x"], pull(one)[0]["y"]]


@pytest.mark.parametrize("name", SCALAR_FUNS)
def test_python_scalar_primals_equal_float64_arrays(name):
    f = SCALAR_FUNS[name]
    got = _modes(f, 1.5, 2.0)
    want = _modes(f, np.array(1.5), np.array(2.0))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.float64


def test_random_bernoulli_uses_a_numpy_scalars_dtype():
    """np.float64 is a subclass of float but is not weakly typed: its samples are float64
    uniforms; a Python float (eager or a traced jit argument) draws float32 ones."""
    key = tracer.random.PRNGKey(3)
    u64 = tracer.random.uniform(key, (2000,), np.float64)
    u32 = tracer.random.uniform(key, (2000,), np.float32)
    p = 0.3
    np.testing.assert_array_equal(tracer.random.bernoulli(key, np.float64(p), (2000,)),
                                  u64 < p)
    np.testing.assert_array_equal(tracer.random.bernoulli(key, p, (2000,)),
                                  u32 < np.float32(p))
    assert (u64 < p).tolist() != (u32 < np.float32(p)).tolist()   # the two differ here
    jitted = tracer.jit(lambda k, q: tracer.random.bernoulli(k, q, (2000,)), backend="numpy")
    np.testing.assert_array_equal(jitted(key, p), u32 < np.float32(p))
    np.testing.assert_array_equal(jitted(key, np.float64(p)), u64 < p)


def test_big_endian_constant_closed_over():
    c = np.array([1.0, 2.0, 3.0], ">f8")
    got = tracer.jit(lambda x: x * c, backend="numpy")(np.ones(3))
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0])
    assert tracer.grad(lambda x: tnp.sum(x * c))(np.ones(3)).tolist() == [1.0, 2.0, 3.0]
