"""tracer.lax's jax.lax names (elementwise, comparison, conversion, shapes, dot, sorting):
against NumPy eagerly and under jit on both backends (all ops of a group in one jitted
function), gradients by finite differences and vmap for a subset, and jax.lax's strict
dtype and shape rules."""
import math

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

R = np.random.default_rng(0)
X = R.normal(size=(3, 4)) * 3
Y = R.normal(size=(3, 4)) * 3
P = np.abs(X) + 1.5                         # > 1: in every log / sqrt / acosh domain
U = R.uniform(-0.9, 0.9, (3, 4))            # in (-1, 1): asin, acos, atanh
I = R.integers(-50, 50, (3, 4)).astype(np.int32)
J = R.integers(1, 9, (3, 4)).astype(np.int32)
erf = np.vectorize(math.erf)


def _bits(v, n):
    return np.array([[bin(int(e) & (2 ** n - 1)).count("1") for e in row] for row in v])


def _away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


# name: (lax function of the arguments, the NumPy reference, arguments)
FLOAT_CASES = {
    "add": (lax.add, np.add, (X, Y)), "sub": (lax.sub, np.subtract, (X, Y)),
    "mul": (lax.mul, np.multiply, (X, Y)), "div": (lax.div, np.divide, (X, Y)),
    "rem": (lax.rem, np.fmod, (X, Y)), "pow": (lax.pow, np.power, (P, Y)),
    "max": (lax.max, np.maximum, (X, Y)), "min": (lax.min, np.minimum, (X, Y)),
    "atan2": (lax.atan2, np.arctan2, (X, Y)), "nextafter": (lax.nextafter, np.nextafter, (X, Y)),
    "neg": (lax.neg, np.negative, (X,)), "sign": (lax.sign, np.sign, (X,)),
    "floor": (lax.floor, np.floor, (X,)), "ceil": (lax.ceil, np.ceil, (X,)),
    "round": (lax.round, _away, (X,)), "round_even": (
        lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint, (X,)),
    "is_finite": (lax.is_finite, np.isfinite, (X,)), "exp": (lax.exp, np.exp, (X,)),
    "exp2": (lax.exp2, np.exp2, (X,)), "log": (lax.log, np.log, (P,)),
    "log1p": (lax.log1p, np.log1p, (P,)), "expm1": (lax.expm1, np.expm1, (U,)),
    "tanh": (lax.tanh, np.tanh, (X,)), "logistic": (lax.logistic, lambda v: 1 / (1 + np.exp(-v)),
                                                     (X,)),
    "sin": (lax.sin, np.sin, (X,)), "cos": (lax.cos, np.cos, (X,)), "tan": (lax.tan, np.tan, (U,)),
    "asin": (lax.asin, np.arcsin, (U,)), "acos": (lax.acos, np.arccos, (U,)),
    "atan": (lax.atan, np.arctan, (X,)), "sinh": (lax.sinh, np.sinh, (X,)),
    "cosh": (lax.cosh, np.cosh, (X,)), "asinh": (lax.asinh, np.arcsinh, (X,)),
    "acosh": (lax.acosh, np.arccosh, (P,)), "atanh": (lax.atanh, np.arctanh, (U,)),
    "sqrt": (lax.sqrt, np.sqrt, (P,)), "rsqrt": (lax.rsqrt, lambda v: 1 / np.sqrt(v), (P,)),
    "cbrt": (lax.cbrt, np.cbrt, (X,)), "abs": (lax.abs, np.abs, (X,)),
    "square": (lax.square, np.square, (X,)), "reciprocal": (lax.reciprocal, np.reciprocal, (P,)),
    "erf": (lax.erf, erf, (X,)), "integer_pow": (lambda x: lax.integer_pow(x, -3),
                                                 lambda v: v ** -3.0, (P,)),
    "clamp": (lambda x, y: lax.clamp(-abs(y), x, abs(y)), lambda x, y: np.clip(x, -abs(y), abs(y)),
              (X, Y)),
    "select": (lambda x, y: lax.select(x > y, x, y), np.maximum, (X, Y)),
    "select_n": (lambda x, y: lax.select_n((x > 0).astype(np.int32) + (y > 0), x, y, x * y),
                 lambda x, y: np.choose((x > 0) * 1 + (y > 0), [x, y, x * y]), (X, Y)),
    "eq": (lax.eq, np.equal, (X, np.round(X))), "ne": (lax.ne, np.not_equal, (X, Y)),
    "lt": (lax.lt, np.less, (X, Y)), "le": (lax.le, np.less_equal, (X, np.round(X))),
    "gt": (lax.gt, np.greater, (X, Y)), "ge": (lax.ge, np.greater_equal, (X, Y)),
}
INT_CASES = {
    "div": (lax.div, lambda a, b: np.trunc(a / b).astype(a.dtype), (I, J)),
    "rem": (lax.rem, np.fmod, (I, J)), "and": (lax.bitwise_and, np.bitwise_and, (I, J)),
    "or": (lax.bitwise_or, np.bitwise_or, (I, J)), "xor": (lax.bitwise_xor, np.bitwise_xor, (I, J)),
    "not": (lax.bitwise_not, np.invert, (I,)),
    "shl": (lax.shift_left, lambda a, s: np.where(s < 32, a << np.minimum(s, 31), 0), (I, J * 5)),
    "shr_logical": (lax.shift_right_logical, lambda a, s: np.where(
        s < 32, (a.view(np.uint32) >> np.minimum(s, 31).astype(np.uint32)).view(np.int32), 0),
        (I, J * 5)),
    "shr_arithmetic": (lax.shift_right_arithmetic, lambda a, s: a >> np.minimum(s, 31), (I, J * 5)),
    "population_count": (lax.population_count, lambda a: _bits(a, 32).astype(np.int32), (I,)),
    "clz": (lax.clz, lambda a: np.array([[32 - (int(e) & 2 ** 32 - 1).bit_length() for e in r]
                                         for r in a], np.int32), (I,)),
    "abs": (lax.abs, np.abs, (I,)), "sign": (lax.sign, np.sign, (I,)),
    "integer_pow": (lambda a: lax.integer_pow(a, 3), lambda a: a ** 3, (I,)),
    "max": (lax.max, np.maximum, (I, J)),
    "mulhi": (lax.mulhi, lambda a, b: ((a.astype(np.int64) * b) >> 32).astype(np.int32),
              (I * 2 ** 24, J * -(2 ** 27))),
}


def _group(cases, dtype):
    names = sorted(cases)
    args = [tuple(np.asarray(a, dtype if a.dtype.kind == "f" else a.dtype)
                  for a in cases[n][2]) for n in names]

    def run(*all_args):
        return [cases[n][0](*a) for n, a in zip(names, all_args)]
    return names, args, run, [cases[n][1](*a) for n, a in zip(names, args)]


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
@pytest.mark.parametrize("cases,dtype", [(FLOAT_CASES, np.float64), (FLOAT_CASES, np.float32),
                                         (INT_CASES, None)])
def test_elementwise_matches_numpy(cases, dtype, mode):
    names, args, run, want = _group(cases, dtype)
    got = run(*args) if mode == "eager" else tracer.jit(run, backend=mode)(*args)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for name, g, w in zip(names, got, want):
        w = np.asarray(w)
        g = np.asarray(g)
        assert g.dtype == (w.dtype if dtype is None or w.dtype == bool else dtype), name
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=name)


def test_bit_ops_on_every_width():
    for dt in (np.uint8, np.int16, np.uint32, np.int64):
        v = R.integers(np.iinfo(dt).min, np.iinfo(dt).max, 40, dtype=dt, endpoint=True)
        n = 8 * v.itemsize
        assert np.array_equal(lax.population_count(v), _bits(v[None], n)[0].astype(dt))
        clz = [n - (int(e) & 2 ** n - 1).bit_length() for e in v]
        assert np.array_equal(lax.clz(v), np.array(clz, dt))
        signed = v.view(np.dtype(f"i{v.itemsize}"))    # unsigned bits shift as signed, as XLA
        assert np.array_equal(lax.shift_right_arithmetic(v, np.full_like(v, n)).view(signed.dtype),
                              np.where(signed < 0, -1, 0))


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_integer_division_by_zero_and_overflow_as_xla(mode):
    def f(a, b, u, v):
        return lax.div(a, b), lax.rem(a, b), lax.div(u, v), lax.rem(u, v)
    args = (np.int32([7, -7, 5, -2 ** 31, -2 ** 31, 7]), np.int32([0, 0, 2, -1, 3, -1]),
            np.uint8([7, 200]), np.uint8([0, 3]))
    got = f(*args) if mode == "eager" else tracer.jit(f, backend=mode)(*args)
    assert [g.tolist() for g in got] == [[-1, -1, 2, -2 ** 31, -715827882, -7],
                                         [7, -7, 1, 0, -2, 0], [255, 66], [7, 2]]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_sign_keeps_the_sign_of_zero(backend):
    z = np.array([-0.0, 0.0, -2.0])
    for got in (lax.sign(z), tracer.jit(lax.sign, backend=backend)(z)):
        assert np.signbit(got).tolist() == [True, False, True] and got[2] == -1


def test_mulhi_of_64_bits():
    a = R.integers(-2 ** 63, 2 ** 63, 30, dtype=np.int64)
    b = R.integers(-2 ** 63, 2 ** 63, 30, dtype=np.int64)
    assert lax.mulhi(a, b).tolist() == [(int(p) * int(q)) >> 64 for p, q in zip(a, b)]
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    assert lax.mulhi(ua, ub).tolist() == [(int(p) * int(q)) >> 64 for p, q in zip(ua, ub)]


def test_rounding_conversion_and_precision():
    assert lax.round(np.array([0.5, 1.5, 2.5, -0.5, 0.49999999999999994])).tolist() == \
        [1, 2, 3, -1, 0]
    assert lax.round(np.array([0.5, 1.5, 2.5]), 1).tolist() == [0, 2, 2]
    assert lax.convert_element_type(np.float32([1e10, -2.7, 2.7]), np.int32).tolist() == \
        [2 ** 31 - 1, -2, 2]
    big = lax.convert_element_type(2 ** 100, np.float32)    # a float, though no int64 (JAX)
    assert big.dtype == np.float32 and big == np.float32(2 ** 100)
    v = R.normal(size=50).astype(np.float32) * 1e3
    half = v.astype(np.float16).astype(np.float32)
    assert np.array_equal(lax.reduce_precision(v, 5, 10), half)
    assert lax.reduce_precision(np.float32([70000.0, 1e-6]), 5, 10).tolist() == [np.inf, 0.0]
    assert lax.nextafter(np.float32(0), np.float32(-1)) == -np.float32(1e-45)


@pytest.mark.parametrize("call", [lambda: lax.add(np.float32(1), np.float64(1)),
                                  lambda: lax.add(np.ones(3, np.float32), 1.0),
                                  lambda: lax.lt(np.int32(1), np.int64(2)),
                                  lambda: lax.shift_left(np.int32(1), 3),
                                  lambda: lax.exp(np.int32(1)),
                                  lambda: lax.bitwise_and(1.0, 2.0),
                                  lambda: lax.add(np.ones(3), np.ones(4)),
                                  lambda: lax.add(np.ones((2, 3)), np.ones(3)),
                                  lambda: lax.pad(np.ones(2, np.float32), 0.0, [(1, 1, 0)]),
                                  lambda: lax.select(np.ones(2), np.ones(2), np.ones(2))])
def test_strict_dtypes_and_shapes_raise_type_error(call):
    with pytest.raises(TypeError, match=r"lax\.\w+"):
        call()


def test_shapes_match_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert np.array_equal(lax.reshape(x, (4, 6), (2, 0, 1)), x.transpose(2, 0, 1).reshape(4, 6))
    assert np.array_equal(lax.broadcast_in_dim(x[:, :1, 0], (5, 2, 3), (1, 2)),
                          np.broadcast_to(x[:, :1, 0], (5, 2, 3)))
    assert lax.broadcast(x, (7,)).shape == (7, 2, 3, 4)
    assert lax.squeeze(x[:, None], (1,)).shape == x.shape
    assert lax.expand_dims(x, (0, 4)).shape == (1, 2, 3, 4, 1)
    assert np.array_equal(lax.rev(x, (0, 2)), x[::-1, :, ::-1])
    assert np.array_equal(lax.collapse(x, 1), x.reshape(2, 12))
    assert lax.collapse(x[None], 0, -1).shape == (6, 4) and lax.collapse(x, -2).shape == (2, 12)
    for bad_axis in (lambda: lax.cumsum(x, 3), lambda: lax.sort(x, -4),
                     lambda: lax.squeeze(x[None], (4,)), lambda: lax.top_k(x, 1) and
                     lax.approx_max_k(x, 1, 3), lambda: lax.dynamic_slice_in_dim(x, 0, 1, 5)):
        with pytest.raises(ValueError, match=r"lax\.\w+: (axis|dimensions) .* out of range"):
            bad_axis()
    assert np.array_equal(lax.concatenate([x, x[:, :1]], 1), np.concatenate([x, x[:, :1]], 1))
    inner = np.full((4, 7), -1.0)             # dilated rows v0 . v1 . v2, the first cut off
    inner[1::2, :4] = x[0, 1:]
    got = lax.pad(x[0], -1.0, [(-1, 0, 1), (0, 3, 0)])
    assert np.array_equal(got, inner)
    assert np.array_equal(lax.broadcasted_iota(np.int32, (2, 3), 1), [[0, 1, 2]] * 2)
    assert lax.full((2,), 3, np.float16).dtype == np.float16
    assert np.array_equal(lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)), x[:, 1:3, ::3])
    parts = lax.split(x, (1, 3), axis=2)
    assert [p.shape for p in parts] == [(2, 3, 1), (2, 3, 3)] and np.array_equal(parts[1],
                                                                                  x[..., 1:])
    assert np.array_equal(lax.stack(lax.unstack(x, 1), -1), np.moveaxis(x, 1, -1))
    assert np.array_equal(lax.tile(x, (1, 2, 1)), np.tile(x, (1, 2, 1)))
    assert lax.broadcast_to_rank(x[0], 4).shape == (1, 1, 3, 4)
    assert lax.broadcast_like(x[0, 0], x).shape == x.shape
    assert lax.empty((2, 1), np.int8).shape == (2, 1)
    out = lax.optimization_barrier({"a": x})
    assert np.array_equal(out["a"], x) and out["a"] is not x


def test_dot_general_and_sorting():
    a, b = R.normal(size=(2, 3, 4)), R.normal(size=(4, 2, 5))
    want = np.einsum("bij,jbk->bik", a, b)
    np.testing.assert_allclose(lax.dot_general(a, b, (((2,), (0,)), ((0,), (1,)))), want)
    i8 = I.astype(np.int8) * 5
    assert lax.dot_general(i8, J.T.astype(np.int8), (((1,), (0,)), ((), ())),
                           preferred_element_type=np.int32).tolist() == (i8.astype(np.int32) @ J.T).tolist()
    keys = np.array([[3, 1, np.nan, 1, -0.0, 0.0, -np.inf, 3]])
    np.testing.assert_array_equal(lax.sort(keys), np.sort(keys))
    k1, k2 = I % 3, I % 2
    s1, s2, sx = lax.sort((k1, k2, X), dimension=1, num_keys=2)
    order = np.lexsort((k2, k1), axis=1)
    for got, v in ((s1, k1), (s2, k2), (sx, X)):
        np.testing.assert_array_equal(got, np.take_along_axis(v, order, 1))
    vals, idx = lax.top_k(np.array([1.0, 3.0, 2.0, 3.0, np.nan]), 3)
    assert idx.dtype == np.int32 and idx.tolist() == [4, 1, 3]
    assert np.isnan(vals[0]) and vals[1:].tolist() == [3.0, 3.0]
    m = np.array([[1.0, 5.0, 5.0, 2.0], [0.0, 0.0, 1.0, -1.0]])
    vals, idx = lax.approx_max_k(m, 2)
    assert vals.tolist() == [[5, 5], [1, 0]] and idx.tolist() == [[1, 2], [2, 0]]
    vals, idx = lax.approx_min_k(m, 1, reduction_dimension=0)
    assert vals.tolist() == [[0, 0, 1, -1]] and idx.tolist() == [[1, 1, 1, 1]]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_shapes_dot_sort_under_jit(backend):
    def f(x, y):
        return (lax.pad(x, 0.5, [(1, -1, 2), (-1, 2, 0)]), lax.dot_general(x, y, (((1,), (1,)),
                                                                             ((), ()))),
                lax.sort((x, y), dimension=0), lax.top_k(x, 2), lax.reshape(x, (4, 3), (1, 0)),
                lax.broadcast_in_dim(x[0], (2, 4), (1,)), lax.rev(x, (1,)))
    eager = f(X, Y)
    for g, w in zip(tracer.tree_util.tree_leaves(tracer.jit(f, backend=backend)(X, Y)),
                    tracer.tree_util.tree_leaves(eager)):
        np.testing.assert_allclose(g, w, rtol=1e-12)


GRAD_CASES = [
    lambda x, y: lax.div(lax.atan2(x, y), lax.add(lax.exp(x), y * y)),
    lambda x, y: lax.logistic(x) * lax.rsqrt(lax.abs(y) + 1.0) + lax.integer_pow(x, 3),
    lambda x, y: lax.clamp(np.float64(-1), x, np.float64(1)) + lax.select(x > y, x, y),
    lambda x, y: lax.pad(x, 0.0, [(1, -1, 1), (0, 2, 0)]) * 2.0,
    lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))),
    lambda x, y: lax.sort((x, y), dimension=1)[1] * lax.top_k(x + y, 2)[0].sum(),
    lambda x, y: lax.reshape(lax.transpose(x, (1, 0)), (2, 6), (1, 0)) ** 2,
]


@pytest.mark.parametrize("k", range(len(GRAD_CASES)))
def test_grads_match_finite_differences(k):
    tracer.check_grads(GRAD_CASES[k], (X, Y), order=1, modes=("rev", "fwd"))


def test_vmap_matches_a_loop():
    def f(x, y):
        return (lax.atan2(x, y), lax.pad(x, 1.0, [(1, 0, 1)]), lax.top_k(x, 2)[1],
                lax.sort((y, x), num_keys=1)[1], lax.dot(x, y), lax.rev(x, (0,)))
    got = tracer.vmap(f)(X, Y)
    for k, leaves in enumerate(zip(*[f(x, y) for x, y in zip(X, Y)])):
        np.testing.assert_allclose(got[k], np.stack(leaves), rtol=1e-12)
