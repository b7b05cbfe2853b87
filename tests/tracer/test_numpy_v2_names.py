"""NumPy 2's array-API names (issue 26): each against NumPy 2 eagerly and jitted on both
backends, on 0-d/size-1 and empty inputs where they mean something, under check_grads
(finite differences) and vmap."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import DTypeError, ShapeError

RNG = np.random.default_rng(26)
X = RNG.uniform(-0.9, 0.9, (2, 3)).astype(np.float32)
X64 = X.astype(np.float64)

ALIASES = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "pow",
           "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("name", ALIASES)
def test_alias_is_numpy2s_function(name):
    old = {"pow": "power", "bitwise_invert": "invert"}.get(name, name.replace(
        "bitwise_", "") if name.startswith("bitwise") else "arc" + name[1:])
    assert getattr(np, name) is getattr(np, old) and getattr(tnp, name) is getattr(tnp, old)
    fn = getattr(tnp, name)
    nin = getattr(np, name).nin
    if name.startswith("bitwise"):
        args = (np.array([3, -4, 0], np.int32), np.array([1, 2, 0], np.int32))[:nin]
    elif name == "acosh":
        args = (X + 2,)
    else:
        args = (abs(X) + 0.1, X[::-1] + 1.5)[:nin]
    agreement.agree(fn, getattr(np, name)(*args), *args, rtol=2e-6)


def test_aliases_take_ufunc_keywords_and_differentiate():
    np.testing.assert_allclose(tnp.acos(X, dtype=np.float64), np.acos(X, dtype=np.float64))
    tracer.check_grads(tnp.asin, (X64,), order=1)
    tracer.check_grads(lambda a, b: tnp.pow(a, b), (X64 + 1, X64), order=1)


def test_concat_permute_dims_matrix_transpose():
    a, b = X, np.arange(3, dtype=np.int16)[None]
    agreement.agree(lambda a, b: tnp.concat((a, b)), np.concat((a, b)), a, b)
    agreement.agree(lambda a, b: tnp.concat([a, b], axis=None), np.concat([a, b], axis=None),
                    a, b)
    t = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    agreement.agree(lambda t: tnp.permute_dims(t, (2, 0, 1)), np.permute_dims(t, (2, 0, 1)), t)
    agreement.agree(tnp.matrix_transpose, np.matrix_transpose(t), t)
    agreement.agree(tnp.matrix_transpose, np.zeros((0, 2, 5)), np.zeros((0, 5, 2)))
    with pytest.raises(ShapeError, match=r"matrix_transpose.*\(3,\)"):
        tnp.matrix_transpose(np.ones(3))
    tracer.check_grads(lambda t: tnp.matrix_transpose(t) * 2, (t.astype(np.float64),), order=1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unstack(axis):
    want = np.unstack(X, axis=axis)
    for f in [tnp.unstack] + [tracer.jit(tnp.unstack, static_argnames="axis", backend=b)
                              for b in agreement.BACKENDS]:
        got = f(X, axis=axis)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert tnp.unstack(np.zeros((0, 3))) == ()
    with pytest.raises(ShapeError, match="unstack"):
        tnp.unstack(np.float32(1))


@pytest.mark.parametrize("a,b", [(X, X[0]), (np.ones((4, 1, 3), np.int32), X),
                                 (np.array([True, False]), np.array([True, True])),
                                 (np.zeros((2, 0)), np.zeros((2, 0))), (X[:, :1], X[:, :1])],
                         ids=["bcast", "int-float", "bool", "empty", "size1"])
def test_vecdot(a, b):
    agreement.agree(tnp.vecdot, np.vecdot(a, b), a, b, rtol=1e-5)


def test_vecdot_axis_grad_and_vmap():
    agreement.agree(lambda a, b: tnp.vecdot(a, b, axis=0), np.vecdot(X, X, axis=0), X, X)
    tracer.check_grads(tnp.vecdot, (X64, X64[::-1]), order=1)
    got = tracer.vmap(tnp.vecdot)(X, X[::-1])
    np.testing.assert_allclose(got, np.vecdot(X, X[::-1]), rtol=1e-6)
    with pytest.raises(ShapeError, match=r"vecdot.*\(2, 3\).*\(2, 4\)"):
        tnp.vecdot(X, np.ones((2, 4)))


def test_matvec_vecmat():
    m = RNG.normal(size=(4, 2, 3))
    v3, v2 = RNG.normal(size=3), RNG.normal(size=(4, 2))
    agreement.agree(tnp.matvec, np.matvec(m, v3), m, v3, rtol=1e-12)
    agreement.agree(tnp.vecmat, np.vecmat(v2, m), v2, m, rtol=1e-12)
    agreement.agree(tnp.matvec, np.matvec(np.ones((0, 3)), v3), np.ones((0, 3)), v3)
    tracer.check_grads(tnp.matvec, (m, v3), order=1)
    tracer.check_grads(tnp.vecmat, (v2, m), order=1)
    with pytest.raises(ShapeError, match="matvec"):
        tnp.matvec(v3, v3)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                np.uint32, np.uint64, np.bool_])
def test_bitwise_count(dt):
    if dt == np.bool_:
        x = np.array([True, False])
    else:
        info = np.iinfo(dt)
        x = np.array([info.min, info.max, 0, 1, 5, info.max // 3, info.min // 7], dt)
    agreement.agree(tnp.bitwise_count, np.bitwise_count(x), x)
    agreement.agree(tnp.bitwise_count, np.bitwise_count(x[:0]), x[:0])
    agreement.agree(tnp.bitwise_count, np.bitwise_count(x[0]), x[0])


def test_bitwise_count_refuses_floats_and_batches():
    with pytest.raises(DTypeError, match="bitwise_count.*float32"):
        tnp.bitwise_count(X)
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(tracer.vmap(tnp.bitwise_count)(x), np.bitwise_count(x))


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint32, np.float16, np.float64])
@pytest.mark.parametrize("kind", ["bool", "signed integer", "unsigned integer", "integral",
                                  "real floating", "complex floating", "numeric",
                                  ("bool", "real floating"), np.float64])
def test_isdtype(dt, kind):
    assert tnp.isdtype(np.dtype(dt), kind) == np.isdtype(np.dtype(dt), kind)


def test_isdtype_bfloat16_and_bad_kind():
    assert tnp.isdtype(tnp.bfloat16, "real floating")
    assert tnp.isdtype(np.dtype(tnp.bfloat16), "numeric")
    with pytest.raises(ValueError, match="isdtype.*'floats'"):
        tnp.isdtype(np.float32, "floats")


ISSUE_26 = """acos acosh asin asinh atan atan2 atanh pow concat permute_dims matrix_transpose
    bitwise_invert bitwise_left_shift bitwise_right_shift bitwise_count unstack vecdot matvec
    vecmat isdtype gcd lcm ldexp frexp modf nextafter spacing angle i0 isin intersect1d
    union1d setdiff1d setxor1d digitize unique_all unique_counts unique_inverse unique_values
    interp convolve correlate polyval polyadd polysub polymul polyder polyint polyfit vander
    trapezoid unwrap histogram histogram_bin_edges bartlett blackman hamming hanning kaiser
    unravel_index ravel_multi_index put_along_axis fill_diagonal choose resize
    apply_along_axis apply_over_axes piecewise trim_zeros array_equiv isscalar iscomplexobj
    isrealobj iscomplex isreal ascontiguousarray asanyarray""".split()


def test_every_issue_26_name_exists_and_numpy_dispatches_to_it():
    assert [n for n in ISSUE_26 if not hasattr(tnp, n)] == []
    # NumPy's own functions on a traced value run tracer.numpy's of the same name
    got = tracer.jit(lambda a: np.convolve(a, np.ones(2)) + np.vecdot(a, a))(X64[0])
    np.testing.assert_allclose(got, np.convolve(X64[0], np.ones(2)) + np.vecdot(X64[0], X64[0]))


def test_half_float_products_accumulate_in_float32_and_take_jax_keywords():
    h = np.full(3000, 0.1, np.float16)
    agreement.agree(tnp.vecdot, np.vecdot(h, h), h, h, rtol=1e-3)
    i8 = np.array([100, 100], np.int8)
    agreement.agree(lambda a: tnp.vecdot(a, a, preferred_element_type=np.int32),
                    np.int32(20000), i8)
    agreement.agree(lambda a: tnp.convolve(a, a, precision="highest",
                                           preferred_element_type=np.int32),
                    np.convolve(i8.astype(np.int32), i8.astype(np.int32)), i8)


def test_isdtype_of_abstract_kinds_is_false_as_numpys_and_bad_kinds_say_so():
    assert tnp.isdtype(np.float32, np.floating) is np.isdtype(np.float32, np.floating)
    with pytest.raises(TypeError, match="isdtype: kind must be"):
        tnp.isdtype(np.float32, 3)
